//! The registry: middleware in registration order, and one planned chain per hook point.
//!
//! Registering costs O(log n): the middleware goes into an index by name (I2), one by
//! registration order, and, for each of its hook points, one ordered by (band, registration
//! order), which is the run order of an inbound hook point (rule 1). It plans nothing: it only
//! marks its hook points' plans stale. A hook point's chain is planned from its index the first
//! time it is asked for after a change (O(chain), once), and then handed out as an `Arc` clone
//! until the next change, so registering n middleware before the first emit costs O(n log n),
//! not a replan of every chain n times (issue 13). A change drops the registry's plan, never a
//! plan already handed out, so the chain an emit holds never changes under it (ruling 3, I11).

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::band::Band;
use crate::catalogue::{hook_count, hook_point, Direction, HookId};
use crate::clock::needs_precise;
use crate::declaration::Declaration;
use crate::error::{quote, value_error, Error, ErrorKind};
use crate::matcher::MatchKey;
use crate::symbol::{intern, Sym};

/// A registered middleware. `payload` is whatever the binding calls (a Python object).
#[derive(Debug)]
pub struct Entry<P> {
    pub decl: Declaration,
    /// Its place in the registration order (I3: one place, used on every hook point).
    pub order: u64,
    /// `decl.name`, interned for trace records.
    pub name: Sym,
    /// Whether its timeout is too short for the coarse clock (decided once, here, rather than
    /// on every call; see `clock.rs`).
    pub precise: bool,
    pub payload: P,
}

/// A hook point's middleware in run order. Never mutated once handed out.
pub type Chain<P> = Arc<[Arc<Entry<P>>]>;

/// How many key values a hook point keeps a planned chain for (I22): an event stream with
/// endless distinct tool names keeps memory flat; the cache is emptied when full.
pub const MAX_KEYED_PLANS: usize = 256;

#[derive(Debug)]
struct Plan<P> {
    chain: Chain<P>,
    has_timeouts: bool,
    /// The key the chain's matchers read on this hook point (I22); `None`: no middleware of
    /// it has a matcher for the key it carries, so every event runs `chain`.
    key: Option<MatchKey>,
    /// The chains of the key values seen, at most `MAX_KEYED_PLANS`.
    by_key: RefCell<HashMap<Box<str>, Chain<P>>>,
}

/// One hook point's middleware in inbound run order: band, then registration order.
type Members<P> = BTreeMap<(Band, u64), Arc<Entry<P>>>;

/// The middleware of one bus and the planned chain of every hook point.
#[derive(Debug)]
pub struct Registry<P> {
    /// By name: the duplicate check (I2) and `unregister` without a scan.
    by_name: HashMap<String, Arc<Entry<P>>>,
    /// Registration order, for `entries`.
    by_order: BTreeMap<u64, Arc<Entry<P>>>,
    /// Never reused, so a middleware registered again goes to the end of its band.
    next_order: u64,
    /// Indexed by `HookId`: the middleware of each hook point, in inbound run order.
    members: Vec<Members<P>>,
    /// Indexed by `HookId`: the plan, made on first ask after its hook point last changed.
    plans: Vec<OnceCell<Plan<P>>>,
    /// How many plans have been made (see `plan_builds`).
    builds: Cell<u64>,
}

impl<P> Default for Registry<P> {
    fn default() -> Self {
        Self {
            by_name: HashMap::new(),
            by_order: BTreeMap::new(),
            next_order: 0,
            members: (0..hook_count()).map(|_| BTreeMap::new()).collect(),
            plans: (0..hook_count()).map(|_| OnceCell::new()).collect(),
            builds: Cell::new(0),
        }
    }
}

impl<P> Registry<P> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a middleware after every one registered before it (I2: names are unique) and
    /// marks its hook points' plans stale. `decl` normally comes from
    /// `declare`/`apply_overrides`; a hand-built one with no hooks or an id outside the
    /// catalogue is refused, not planned.
    pub fn register(&mut self, decl: Declaration, payload: P) -> Result<Arc<Entry<P>>, Error> {
        if decl.hooks.is_empty() {
            return Err(value_error(ErrorKind::InvalidHooks, "hooks", "[]", None));
        }
        if let Some(bad) = decl.hooks.iter().find(|&&id| hook_point(id).is_none()) {
            let shown = bad.to_string();
            return Err(value_error(ErrorKind::UnknownHook, "hook", &shown, None));
        }
        if self.by_name.contains_key(&decl.name) {
            let shown = quote(&decl.name);
            return Err(value_error(ErrorKind::DuplicateName, "name", &shown, None));
        }
        let entry = Arc::new(Entry {
            order: self.next_order,
            name: intern(&decl.name),
            precise: decl.timeout_ns.is_some_and(needs_precise),
            decl,
            payload,
        });
        // 2^64 registrations cannot happen; saturating keeps this panic-free regardless.
        self.next_order = self.next_order.saturating_add(1);
        self.by_name
            .insert(entry.decl.name.clone(), Arc::clone(&entry));
        self.by_order.insert(entry.order, Arc::clone(&entry));
        let key = (entry.decl.band, entry.order);
        for &hook in &entry.decl.hooks {
            let hook = usize::from(hook);
            if let Some(members) = self.members.get_mut(hook) {
                members.insert(key, Arc::clone(&entry));
            }
            self.stale(hook);
        }
        Ok(entry)
    }

    /// Removes a middleware by name and marks its hook points' plans stale (I2, I11).
    pub fn unregister(&mut self, name: &str) -> Result<Arc<Entry<P>>, Error> {
        let Some(entry) = self.by_name.remove(name) else {
            let shown = quote(name);
            return Err(value_error(
                ErrorKind::UnknownMiddleware,
                "name",
                &shown,
                None,
            ));
        };
        self.by_order.remove(&entry.order);
        let key = (entry.decl.band, entry.order);
        for &hook in &entry.decl.hooks {
            let hook = usize::from(hook);
            if let Some(members) = self.members.get_mut(hook) {
                members.remove(&key);
            }
            self.stale(hook);
        }
        Ok(entry)
    }

    /// The run order of a hook point: a cheap `Arc` clone that never changes afterwards
    /// (planned here if its hook point changed since it was last asked for). An id outside
    /// the catalogue has an empty chain.
    pub fn chain(&self, hook: HookId) -> Chain<P> {
        self.plan(hook)
            .map_or_else(|| Arc::from(Vec::new()), |plan| Arc::clone(&plan.chain))
    }

    /// The key an emit of `hook` must read from its event for `chain_for` (I22), or `None`
    /// when the chain has no matcher that applies there (then `chain` is the chain).
    pub fn match_key(&self, hook: HookId) -> Option<MatchKey> {
        self.plan(hook).and_then(|plan| plan.key)
    }

    /// The run order of an emit of `hook` whose event holds `value` under the hook point's
    /// key (`None`: absent or not text, which every matcher matches, I22): the chain without
    /// the middleware whose matcher does not admit it. Planned once per value (bounded).
    pub fn chain_for(&self, hook: HookId, value: Option<&str>) -> Chain<P> {
        let Some(plan) = self.plan(hook) else {
            return Arc::from(Vec::new());
        };
        let Some(value) = value.filter(|_| plan.key.is_some()) else {
            return Arc::clone(&plan.chain);
        };
        let mut by_key = plan.by_key.borrow_mut();
        if let Some(chain) = by_key.get(value) {
            return Arc::clone(chain);
        }
        let chain: Chain<P> = plan
            .chain
            .iter()
            .filter(|e| {
                e.decl
                    .matcher
                    .as_ref()
                    .map_or(true, |m| m.admits(hook, Some(value)))
            })
            .cloned()
            .collect();
        if by_key.len() >= MAX_KEYED_PLANS {
            by_key.clear();
        }
        by_key.insert(Box::from(value), Arc::clone(&chain));
        chain
    }

    /// How many key values `hook` holds a planned chain for (at most `MAX_KEYED_PLANS`).
    pub fn keyed_plans(&self, hook: HookId) -> usize {
        self.plan(hook).map_or(0, |plan| plan.by_key.borrow().len())
    }

    /// Whether any middleware of this hook point has a timeout (so the binding can skip clocks).
    pub fn has_timeouts(&self, hook: HookId) -> bool {
        self.plan(hook).is_some_and(|plan| plan.has_timeouts)
    }

    /// How many chains this registry has planned: none while middleware are only registered,
    /// one per hook point asked for after a change. What a test of the cost of registering
    /// counts (registering n middleware must not plan n times).
    pub fn plan_builds(&self) -> u64 {
        self.builds.get()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Every middleware, in registration order.
    pub fn entries(&self) -> impl Iterator<Item = &Arc<Entry<P>>> {
        self.by_order.values()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Entry<P>>> {
        self.by_name.get(name)
    }

    /// Drops a hook point's plan (one handed out lives on with whoever holds it).
    fn stale(&mut self, hook: usize) {
        if let Some(plan) = self.plans.get_mut(hook) {
            plan.take();
        }
    }

    fn plan(&self, hook: HookId) -> Option<&Plan<P>> {
        let members = self.members.get(usize::from(hook))?;
        let plan = self.plans.get(usize::from(hook))?;
        Some(plan.get_or_init(|| self.build_plan(hook, members)))
    }

    /// Rules 1–2 and ruling 1: the members are kept sorted by (band, registration order);
    /// outbound runs them reversed.
    fn build_plan(&self, hook: HookId, members: &Members<P>) -> Plan<P> {
        self.builds.set(self.builds.get().saturating_add(1));
        let outbound = hook_point(hook).is_some_and(|p| p.direction == Direction::Outbound);
        let chain: Vec<Arc<Entry<P>>> = if outbound {
            members.values().rev().cloned().collect()
        } else {
            members.values().cloned().collect()
        };
        let has_timeouts = chain.iter().any(|e| e.decl.timeout_ns.is_some());
        let key = MatchKey::carried_by(hook).filter(|&key| {
            chain.iter().any(|e| {
                e.decl
                    .matcher
                    .as_ref()
                    .is_some_and(|m| m.patterns(key).is_some())
            })
        });
        Plan {
            chain: Arc::from(chain),
            has_timeouts,
            key,
            by_key: RefCell::new(HashMap::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::band::Band;
    use crate::catalogue::hook_id;
    use crate::fail_mode::FailMode;

    fn decl(name: &str, band: Band, hooks: &[&str]) -> Declaration {
        Declaration {
            name: name.to_owned(),
            hooks: hooks.iter().map(|h| hook_id(h).unwrap()).collect(),
            band,
            fail_mode: FailMode::Closed,
            timeout_ns: None,
            matcher: None,
            mode: crate::mode::Mode::Enforce,
        }
    }

    fn names<P>(registry: &Registry<P>, hook: &str) -> Vec<String> {
        let chain = registry.chain(hook_id(hook).unwrap());
        chain.iter().map(|e| e.decl.name.clone()).collect()
    }

    /// Registered task-first so that band order and registration order disagree.
    fn onion() -> Registry<()> {
        let mut registry = Registry::new();
        let both = ["tool.before", "tool.after"];
        for (name, band) in [
            ("task1", Band::Task),
            ("app1", Band::App),
            ("base", Band::Baseline),
            ("app2", Band::App),
            ("plat", Band::Platform),
        ] {
            registry.register(decl(name, band, &both), ()).unwrap();
        }
        registry
    }

    #[test]
    fn inbound_runs_by_band_then_registration_order_rule_1() {
        assert_eq!(
            names(&onion(), "tool.before"),
            ["base", "plat", "app1", "app2", "task1"]
        );
    }

    #[test]
    fn outbound_runs_exactly_reversed_rule_2_ruling_1() {
        assert_eq!(
            names(&onion(), "tool.after"),
            ["task1", "app2", "app1", "plat", "base"]
        );
    }

    #[test]
    fn every_catalogue_direction_is_honoured_ruling_2() {
        let mut registry = Registry::new();
        let all: Vec<&str> = crate::catalogue::CATALOGUE.iter().map(|p| p.name).collect();
        registry
            .register(decl("first", Band::App, &all), ())
            .unwrap();
        registry
            .register(decl("second", Band::App, &all), ())
            .unwrap();
        for point in &crate::catalogue::CATALOGUE {
            let expected = match point.direction {
                Direction::Inbound => ["first", "second"],
                Direction::Outbound => ["second", "first"],
            };
            assert_eq!(names(&registry, point.name), expected, "{}", point.name);
        }
    }

    #[test]
    fn orders_strictly_increase_and_are_never_reused() {
        let mut registry = onion();
        let orders: Vec<u64> = registry.entries().map(|e| e.order).collect();
        assert!(orders.windows(2).all(|w| w[0] < w[1]));
        let again = registry.unregister("app1").unwrap();
        let back = registry.register(again.decl.clone(), ()).unwrap();
        assert!(back.order > orders[orders.len() - 1]);
        assert_eq!(
            names(&registry, "tool.before"),
            ["base", "plat", "app2", "app1", "task1"]
        );
    }

    #[test]
    fn one_place_in_the_order_on_every_hook_i3() {
        let mut registry = Registry::new();
        registry
            .register(decl("a", Band::App, &["task.start", "tool.before"]), ())
            .unwrap();
        registry
            .register(decl("b", Band::App, &["tool.before", "task.start"]), ())
            .unwrap();
        assert_eq!(names(&registry, "task.start"), ["a", "b"]);
        assert_eq!(names(&registry, "tool.before"), ["a", "b"]);
        assert!(names(&registry, "model.before").is_empty());
    }

    #[test]
    fn duplicate_names_and_unknown_middleware_i2() {
        let mut registry = onion();
        let error = registry
            .register(decl("app1", Band::Task, &["task.end"]), ())
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::DuplicateName);
        assert!(error.message.contains("'app1'") && error.message.ends_with("(I2)"));
        assert_eq!(registry.len(), 5);
        let error = registry.unregister("ghost").unwrap_err();
        assert_eq!(error.kind, ErrorKind::UnknownMiddleware);
        assert!(error.message.contains("'ghost'") && error.message.ends_with("(I2)"));
    }

    #[test]
    fn a_chain_in_flight_never_changes_ruling_3_i11() {
        let mut registry = onion();
        let hook = hook_id("tool.before").unwrap();
        let in_flight = registry.chain(hook);
        registry
            .register(decl("late", Band::Baseline, &["tool.before"]), ())
            .unwrap();
        registry.unregister("app1").unwrap();
        let seen: Vec<&str> = in_flight.iter().map(|e| e.decl.name.as_str()).collect();
        assert_eq!(seen, ["base", "plat", "app1", "app2", "task1"]);
        assert_eq!(
            names(&registry, "tool.before"),
            ["base", "late", "plat", "app2", "task1"]
        );
    }

    #[test]
    fn unregistered_middleware_leaves_every_chain() {
        let mut registry = onion();
        let gone = registry.unregister("base").unwrap();
        assert_eq!(gone.decl.name, "base");
        assert!(registry.get("base").is_none());
        assert!(!names(&registry, "tool.after").contains(&"base".to_owned()));
    }

    #[test]
    fn has_timeouts_is_planned_per_hook() {
        let mut registry = Registry::new();
        let mut timed = decl("timed", Band::App, &["tool.before"]);
        timed.timeout_ns = Some(1);
        registry
            .register(decl("plain", Band::App, &["tool.before", "tool.after"]), ())
            .unwrap();
        registry.register(timed, ()).unwrap();
        assert!(registry.has_timeouts(hook_id("tool.before").unwrap()));
        assert!(!registry.has_timeouts(hook_id("tool.after").unwrap()));
        registry.unregister("timed").unwrap();
        assert!(!registry.has_timeouts(hook_id("tool.before").unwrap()));
    }

    #[test]
    fn entries_names_and_lookups() {
        let registry = onion();
        assert!(!registry.is_empty());
        let order: Vec<&str> = registry.entries().map(|e| e.decl.name.as_str()).collect();
        assert_eq!(order, ["task1", "app1", "base", "app2", "plat"]);
        let entry = registry.get("plat").unwrap();
        assert_eq!(crate::symbol::resolve(entry.name), Some("plat"));
    }

    #[test]
    fn bad_hand_built_declarations_and_ids_do_not_panic() {
        let mut registry: Registry<()> = Registry::new();
        let mut bad = decl("x", Band::App, &[]);
        assert_eq!(
            registry.register(bad.clone(), ()).unwrap_err().kind,
            ErrorKind::InvalidHooks
        );
        bad.hooks = vec![99];
        assert_eq!(
            registry.register(bad, ()).unwrap_err().kind,
            ErrorKind::UnknownHook
        );
        assert!(registry.chain(99).is_empty());
        assert!(!registry.has_timeouts(HookId::MAX));
    }

    #[test]
    fn registering_plans_nothing_until_a_chain_is_asked_for_issue_13() {
        let mut registry = Registry::new();
        let hooks = ["tool.before", "tool.after"];
        for i in 0..1000 {
            let band = Band::ALL[i % 4];
            registry
                .register(decl(&format!("m{i}"), band, &hooks), ())
                .unwrap();
        }
        assert_eq!(registry.plan_builds(), 0);
        let before = hook_id("tool.before").unwrap();
        assert_eq!(registry.chain(before).len(), 1000);
        assert!(!registry.has_timeouts(before));
        assert_eq!(registry.chain(before).len(), 1000);
        assert_eq!(registry.plan_builds(), 1); // asked three times, planned once
        registry.unregister("m7").unwrap();
        registry
            .register(decl("late", Band::Baseline, &["tool.before"]), ())
            .unwrap();
        assert_eq!(registry.plan_builds(), 1);
        assert_eq!(names(&registry, "tool.before")[250], "late");
        assert_eq!(names(&registry, "tool.after").len(), 999);
        assert_eq!(registry.plan_builds(), 3);
    }

    /// Any mix of registrations and removals plans what a full stable sort of the registered
    /// middleware gives (rules 1–2): a deterministic pseudo-random walk, checked at every step.
    #[test]
    fn plans_match_a_full_sort_after_any_changes() {
        let mut registry: Registry<()> = Registry::new();
        let mut live: Vec<Declaration> = Vec::new();
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % bound as u64).unwrap()
        };
        let all: Vec<&str> = crate::catalogue::CATALOGUE.iter().map(|p| p.name).collect();
        for step in 0..400 {
            if !live.is_empty() && next(3) == 0 {
                let gone = live.remove(next(live.len()));
                registry.unregister(&gone.name).unwrap();
            } else {
                let hooks = [all[next(all.len())], all[next(all.len())]];
                let hooks: Vec<&str> = if hooks[0] == hooks[1] {
                    vec![hooks[0]]
                } else {
                    hooks.to_vec()
                };
                // Names come back now and then: registered again, it goes to the end (I2).
                let name = format!("m{}", next(60));
                if live.iter().any(|d| d.name == name) {
                    continue;
                }
                let d = decl(&name, Band::ALL[next(4)], &hooks);
                registry.register(d.clone(), ()).unwrap();
                live.push(d);
            }
            for point in &crate::catalogue::CATALOGUE {
                let id = hook_id(point.name).unwrap();
                let mut expected: Vec<&Declaration> =
                    live.iter().filter(|d| d.hooks.contains(&id)).collect();
                expected.sort_by_key(|d| d.band);
                if point.direction == Direction::Outbound {
                    expected.reverse();
                }
                let expected: Vec<&str> = expected.iter().map(|d| d.name.as_str()).collect();
                assert_eq!(names(&registry, point.name), expected, "step {step}");
            }
            let order: Vec<&str> = registry.entries().map(|e| e.decl.name.as_str()).collect();
            let live_order: Vec<&str> = live.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(order, live_order);
        }
    }

    #[test]
    fn payloads_need_no_traits() {
        struct Opaque;
        let mut registry = Registry::new();
        let entry = registry
            .register(decl("o", Band::App, &["task.end"]), Opaque)
            .unwrap();
        let _: &Opaque = &entry.payload;
    }

    fn matched(name: &str, hooks: &[&str], patterns: &[&'static str]) -> Declaration {
        use crate::matcher::{parse_matcher, MatchText, MatchValue};
        let mut d = decl(name, Band::App, hooks);
        let items = patterns.iter().map(|p| MatchText::Text(p)).collect();
        let entries = [(MatchText::Text("tool"), MatchValue::List(items))];
        d.matcher = Some(parse_matcher(&entries, &d.hooks).unwrap());
        d
    }

    fn names_for(registry: &Registry<()>, hook: &str, value: Option<&str>) -> Vec<String> {
        let chain = registry.chain_for(hook_id(hook).unwrap(), value);
        chain.iter().map(|e| e.decl.name.clone()).collect()
    }

    #[test]
    fn chain_for_skips_middleware_whose_matcher_does_not_admit_the_value() {
        let mut registry = Registry::new();
        let hooks = ["tool.before", "step.end"];
        registry
            .register(decl("all", Band::App, &hooks), ())
            .unwrap();
        registry
            .register(matched("refunds", &hooks, &["refund_*"]), ())
            .unwrap();
        registry
            .register(matched("search", &hooks, &["search"]), ())
            .unwrap();
        let before = hook_id("tool.before").unwrap();
        assert_eq!(registry.match_key(before), Some(MatchKey::Tool));
        assert_eq!(
            names_for(&registry, "tool.before", Some("refund_x")),
            ["all", "refunds"]
        );
        assert_eq!(
            names_for(&registry, "tool.before", Some("search")),
            ["all", "search"]
        );
        assert_eq!(names_for(&registry, "tool.before", Some("other")), ["all"]);
        // Absent or not text: every matcher matches (I22).
        assert_eq!(
            names_for(&registry, "tool.before", None),
            ["all", "refunds", "search"]
        );
        // step.end (outbound) carries no key: the matchers do not apply there.
        assert_eq!(registry.match_key(hook_id("step.end").unwrap()), None);
        assert_eq!(
            names_for(&registry, "step.end", Some("other")),
            ["search", "refunds", "all"]
        );
    }

    #[test]
    fn a_chain_without_matchers_has_no_key_and_plans_no_keyed_chain() {
        let registry = onion();
        let before = hook_id("tool.before").unwrap();
        assert_eq!(registry.match_key(before), None);
        assert_eq!(registry.chain_for(before, Some("x")).len(), 5);
        assert_eq!(registry.keyed_plans(before), 0);
    }

    #[test]
    fn keyed_plans_stay_bounded_under_endless_distinct_names() {
        let mut registry = Registry::new();
        registry
            .register(matched("r", &["tool.before"], &["refund_*"]), ())
            .unwrap();
        let before = hook_id("tool.before").unwrap();
        for i in 0..10 * MAX_KEYED_PLANS {
            let name = format!("tool_{i}");
            assert!(registry.chain_for(before, Some(&name)).is_empty());
            assert!(registry.keyed_plans(before) <= MAX_KEYED_PLANS);
        }
        assert_eq!(registry.chain_for(before, Some("refund_1")).len(), 1);
    }

    #[test]
    fn a_change_drops_the_keyed_plans() {
        let mut registry = Registry::new();
        registry
            .register(matched("r", &["tool.before"], &["refund_*"]), ())
            .unwrap();
        assert!(names_for(&registry, "tool.before", Some("refund_1")) == ["r"]);
        registry
            .register(matched("s", &["tool.before"], &["refund_1"]), ())
            .unwrap();
        assert_eq!(
            names_for(&registry, "tool.before", Some("refund_1")),
            ["r", "s"]
        );
    }
}
