//! Outcome kinds, their severity (rule 3, ruling 4) and the reduction of a chain's answers to
//! one combined outcome (rulings 5 and 8).

/// The five outcomes. The binding owns the outcome objects (reason and fields); the core only
/// needs the kind.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeKind {
    Continue = 0,
    Retry = 1,
    Escalate = 2,
    Suspend = 3,
    Block = 4,
}

impl OutcomeKind {
    pub const ALL: [OutcomeKind; 5] = [
        OutcomeKind::Continue,
        OutcomeKind::Retry,
        OutcomeKind::Escalate,
        OutcomeKind::Suspend,
        OutcomeKind::Block,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::Retry => "retry",
            Self::Escalate => "escalate",
            Self::Suspend => "suspend",
            Self::Block => "block",
        }
    }

    pub fn from_u8(value: u8) -> Option<OutcomeKind> {
        Self::ALL.get(usize::from(value)).copied()
    }

    pub fn parse(text: &str) -> Option<OutcomeKind> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// The longest `reason` an answer may hold, in characters (Unicode code points) (I28).
pub const MAX_REASON_CHARS: usize = 4096;

/// The longest `code`, `approver_role` or `to` an answer may hold, in characters (I28).
pub const MAX_TOKEN_CHARS: usize = 128;

/// The bound of an outcome's text field (I28): [`MAX_REASON_CHARS`] for `reason`,
/// [`MAX_TOKEN_CHARS`] for the others (`code`, `approver_role`, `to`).
pub fn text_bound(field: &str) -> usize {
    if field == "reason" {
        MAX_REASON_CHARS
    } else {
        MAX_TOKEN_CHARS
    }
}

/// Whether `text` has at most `max` characters (code points). Looks at no more than `max + 1`
/// characters, and at none when its UTF-8 length alone answers.
pub fn within(text: &str, max: usize) -> bool {
    text.len() <= max || text.chars().nth(max).is_none()
}

/// Ruling 4: Block 5 > Suspend 4 > Escalate 3 > Retry 2 > Continue(modified) 1 > Continue 0.
/// `modified` only counts for Continue: no other outcome carries an event.
pub fn severity(kind: OutcomeKind, modified: bool) -> u8 {
    match kind {
        OutcomeKind::Continue => u8::from(modified),
        OutcomeKind::Retry => 2,
        OutcomeKind::Escalate => 3,
        OutcomeKind::Suspend => 4,
        OutcomeKind::Block => 5,
    }
}

/// Folds answers, offered in run order, into the most severe one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reducer {
    best: Option<(u8, usize)>,
}

impl Reducer {
    /// Offers the answer at run-order `index`. True when it becomes the combined one: it is the
    /// first answer, or strictly more severe than the best so far. A tie keeps the earlier
    /// answer (ruling 5), which is why answers must be offered in run order.
    pub fn offer(&mut self, severity: u8, index: usize) -> bool {
        let wins = match self.best {
            None => true,
            Some((best, _)) => severity > best,
        };
        if wins {
            self.best = Some((severity, index));
        }
        wins
    }

    /// The best `(severity, index)` so far, `None` before any answer.
    pub fn best(&self) -> Option<(u8, usize)> {
        self.best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_order_of_ruling_4() {
        use OutcomeKind::{Block, Continue, Escalate, Retry, Suspend};
        let ranked = [
            severity(Continue, false),
            severity(Continue, true),
            severity(Retry, false),
            severity(Escalate, false),
            severity(Suspend, false),
            severity(Block, false),
        ];
        assert_eq!(ranked, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn modified_only_counts_for_continue() {
        for kind in OutcomeKind::ALL.into_iter().skip(1) {
            assert_eq!(severity(kind, true), severity(kind, false));
        }
    }

    #[test]
    fn names_and_numbers_round_trip() {
        let names: Vec<&str> = OutcomeKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, ["continue", "retry", "escalate", "suspend", "block"]);
        for kind in OutcomeKind::ALL {
            assert_eq!(OutcomeKind::parse(kind.as_str()), Some(kind));
            assert_eq!(OutcomeKind::from_u8(kind as u8), Some(kind));
        }
        assert_eq!(OutcomeKind::parse("Block"), None);
        assert_eq!(OutcomeKind::from_u8(5), None);
    }

    #[test]
    fn most_severe_wins_rule_3() {
        let mut reducer = Reducer::default();
        assert_eq!(reducer.best(), None);
        assert!(reducer.offer(0, 0));
        assert!(reducer.offer(2, 1));
        assert!(!reducer.offer(1, 2));
        assert!(reducer.offer(4, 3));
        assert!(!reducer.offer(3, 4));
        assert_eq!(reducer.best(), Some((4, 3)));
    }

    #[test]
    fn ties_go_to_the_earliest_ruling_5() {
        let mut reducer = Reducer::default();
        assert!(reducer.offer(4, 0));
        assert!(!reducer.offer(4, 1));
        assert_eq!(reducer.best(), Some((4, 0)));
        let mut plain = Reducer::default();
        assert!(plain.offer(0, 0));
        assert!(!plain.offer(0, 1));
        assert_eq!(plain.best(), Some((0, 0)));
    }

    #[test]
    fn continue_modified_only_wins_when_nothing_is_more_severe_ruling_8() {
        let mut reducer = Reducer::default();
        reducer.offer(severity(OutcomeKind::Continue, true), 0);
        reducer.offer(severity(OutcomeKind::Retry, false), 1);
        assert_eq!(reducer.best(), Some((2, 1)));
        let mut reducer = Reducer::default();
        reducer.offer(severity(OutcomeKind::Continue, false), 0);
        reducer.offer(severity(OutcomeKind::Continue, true), 1);
        assert_eq!(reducer.best(), Some((1, 1)));
    }

    #[test]
    fn text_bounds_of_i28() {
        assert_eq!(text_bound("reason"), 4096);
        for field in ["code", "approver_role", "to"] {
            assert_eq!(text_bound(field), 128);
        }
        assert!(within(&"x".repeat(128), 128));
        assert!(!within(&"x".repeat(129), 128));
        // Code points, not bytes or UTF-16 units: 128 emoji are within 128.
        assert!(within(&"\u{1F600}".repeat(128), 128));
        assert!(!within(&"\u{1F600}".repeat(129), 128));
        assert!(within("", 0));
    }
}
