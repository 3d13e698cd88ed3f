//! The hook-point catalogue (`conformance/catalogue.json`): eight hook points and their
//! directions. A hook point is addressed by its index, a [`HookId`], everywhere inside the core.

use crate::error::{invalid_value, quote, Error, ErrorKind};

/// Which way a hook point runs its chain (rule 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Outermost first: baseline to task.
    Inbound,
    /// Innermost first: task to baseline.
    Outbound,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inbound => "inbound",
            Self::Outbound => "outbound",
        }
    }
}

/// The index of a hook point in [`CATALOGUE`]: one byte, so a trace record has room for the rest.
pub type HookId = u8;

/// One hook point of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookPoint {
    pub name: &'static str,
    pub direction: Direction,
}

/// The hook points in catalogue order; a [`HookId`] is an index into this array.
pub static CATALOGUE: [HookPoint; 8] = [
    point("task.start", Direction::Inbound),
    point("step.start", Direction::Inbound),
    point("model.before", Direction::Inbound),
    point("model.after", Direction::Outbound),
    point("tool.before", Direction::Inbound),
    point("tool.after", Direction::Outbound),
    point("step.end", Direction::Outbound),
    point("task.end", Direction::Outbound),
];

const fn point(name: &'static str, direction: Direction) -> HookPoint {
    HookPoint { name, direction }
}

/// Ruling 2: `*.before` and `*.start` are inbound, `*.after` and `*.end` outbound; any other
/// name has no direction. The catalogue states directions explicitly; this rule checks them.
pub fn direction_for_name(name: &str) -> Option<Direction> {
    let (_, suffix) = name.rsplit_once('.')?;
    match suffix {
        "before" | "start" => Some(Direction::Inbound),
        "after" | "end" => Some(Direction::Outbound),
        _ => None,
    }
}

/// The id of a catalogue hook point; any other name is `unknown_hook` (ruling 2).
pub fn hook_id(name: &str) -> Result<HookId, Error> {
    CATALOGUE
        .iter()
        .zip(0..)
        .find(|(point, _)| point.name == name)
        .map(|(_, id)| id)
        .ok_or_else(|| invalid_value(ErrorKind::UnknownHook, "hook", &quote(name)))
}

/// The hook point of an id, or `None` for an id outside the catalogue.
pub fn hook_point(id: HookId) -> Option<&'static HookPoint> {
    CATALOGUE.get(usize::from(id))
}

/// The name of a hook point. An id outside the catalogue gives `""` rather than a panic: ids
/// come from [`hook_id`], so that only happens when a caller made one up.
pub fn hook_name(id: HookId) -> &'static str {
    hook_point(id).map_or("", |point| point.name)
}

/// Whether the event of each hook point has a `step`, and whether it names a tool
/// (`tool.name`), in [`CATALOGUE`] order: what its trace records carry (I21).
const CARRIES: [(bool, bool); 8] = [
    (false, false), // task.start
    (true, false),  // step.start
    (true, false),  // model.before
    (true, false),  // model.after
    (true, true),   // tool.before
    (true, true),   // tool.after
    (true, false),  // step.end
    (false, false), // task.end
];

/// Whether the records of hook point `id` carry the event's `step` (I21): every hook point's
/// but `task.start`'s and `task.end`'s. A table look-up: every emit asks.
pub fn carries_step(id: HookId) -> bool {
    CARRIES.get(usize::from(id)).is_some_and(|c| c.0)
}

/// Whether the records of hook point `id` carry the event's `tool.name` (I21): `tool.before`
/// and `tool.after`.
pub fn carries_tool(id: HookId) -> bool {
    CARRIES.get(usize::from(id)).is_some_and(|c| c.1)
}

/// How many hook points there are.
pub fn hook_count() -> usize {
    CATALOGUE.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_order_is_the_documented_one() {
        let names: Vec<&str> = CATALOGUE.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "task.start",
                "step.start",
                "model.before",
                "model.after",
                "tool.before",
                "tool.after",
                "step.end",
                "task.end"
            ]
        );
        assert_eq!(hook_count(), 8);
    }

    #[test]
    fn catalogue_directions_follow_the_suffix_rule_of_ruling_2() {
        for point in &CATALOGUE {
            assert_eq!(direction_for_name(point.name), Some(point.direction));
        }
    }

    #[test]
    fn suffix_rule() {
        assert_eq!(direction_for_name("x.before"), Some(Direction::Inbound));
        assert_eq!(direction_for_name("x.start"), Some(Direction::Inbound));
        assert_eq!(direction_for_name("x.after"), Some(Direction::Outbound));
        assert_eq!(direction_for_name("x.end"), Some(Direction::Outbound));
        assert_eq!(direction_for_name("x.around"), None);
        assert_eq!(direction_for_name("before"), None);
        assert_eq!(direction_for_name("x.xbefore"), None);
    }

    #[test]
    fn catalogue_agrees_with_the_conformance_catalogue() {
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../../conformance/catalogue.json")).unwrap();
        let hooks = json["hooks"].as_array().unwrap();
        assert_eq!(hooks.len(), CATALOGUE.len());
        for (hook, point) in hooks.iter().zip(&CATALOGUE) {
            assert_eq!(hook["name"], point.name);
            assert_eq!(hook["direction"], point.direction.as_str());
        }
    }

    #[test]
    fn ids_and_names_round_trip() {
        for (id, point) in (0..).zip(&CATALOGUE) {
            assert_eq!(hook_id(point.name), Ok(id));
            assert_eq!(hook_name(id), point.name);
        }
    }

    #[test]
    fn unknown_hooks_are_errors_naming_the_value() {
        for bad in ["tool.around", "", "Tool.before", " tool.before"] {
            let error = hook_id(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::UnknownHook);
            assert!(
                error.message.contains(&format!("'{bad}'")),
                "{}",
                error.message
            );
            assert!(error.message.contains("(ruling 2)"));
        }
    }

    #[test]
    fn which_hook_points_carry_a_step_and_a_tool_i21() {
        let step: Vec<&str> = (0..8)
            .filter(|&id| carries_step(id))
            .map(hook_name)
            .collect();
        let tool: Vec<&str> = (0..8)
            .filter(|&id| carries_tool(id))
            .map(hook_name)
            .collect();
        assert_eq!(
            step,
            [
                "step.start",
                "model.before",
                "model.after",
                "tool.before",
                "tool.after",
                "step.end"
            ]
        );
        assert_eq!(tool, ["tool.before", "tool.after"]);
        assert!(!carries_step(8) && !carries_tool(HookId::MAX));
    }

    #[test]
    fn out_of_range_ids_do_not_panic() {
        assert_eq!(hook_name(8), "");
        assert_eq!(hook_name(HookId::MAX), "");
        assert!(hook_point(8).is_none());
    }
}
