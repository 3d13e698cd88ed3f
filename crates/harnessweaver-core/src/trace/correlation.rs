//! Trace correlation (I21): the run, step and tool every record of an emit names.
//!
//! A stored record has no room for them (it stays 32 bytes, `packed.rs`), and an emit's records
//! all share them, as do most consecutive emits (a loop over one step's tool calls). So a trace
//! keeps them run-length encoded beside its records: a list of [`Span`]s, each the position of
//! the first record (among every record the trace ever appended) from which on a
//! [`Correlation`] holds, until the next span. A span is added only when an appended batch's
//! correlation differs from the last span's: a loop emitting one event adds one span in all.
//! Positions are append positions, not emit ordinals, so emits that finish out of order (or
//! flush half their records before suspending) are described exactly.

use std::collections::VecDeque;
use std::sync::Arc;

/// Which run, step and tool an emit's records belong to (I21). Texts are shared (`Arc`), so
/// copying a correlation allocates nothing, and comparing two copies of one is a pointer
/// comparison.
#[derive(Debug, Clone, Default, Eq)]
pub struct Correlation {
    /// The run id of the emit's context.
    pub run: Option<Arc<str>>,
    /// The `step` of the caller's event, from 0 to 2^53 − 1.
    pub step: Option<u64>,
    /// The `tool.name` of the caller's event (`tool.before`, `tool.after`).
    pub tool: Option<Arc<str>>,
}

impl Correlation {
    /// No run, step or tool: what a record appended without a correlation carries.
    pub const NONE: Correlation = Correlation {
        run: None,
        step: None,
        tool: None,
    };

    pub fn is_none(&self) -> bool {
        self.run.is_none() && self.step.is_none() && self.tool.is_none()
    }
}

/// Two texts are equal when they are the same allocation (the common case: one run context's
/// id, one cached tool name) or hold the same text.
fn same_text(a: Option<&Arc<str>>, b: Option<&Arc<str>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || **a == **b,
        (None, None) => true,
        _ => false,
    }
}

impl PartialEq for Correlation {
    fn eq(&self, other: &Self) -> bool {
        self.step == other.step
            && same_text(self.run.as_ref(), other.run.as_ref())
            && same_text(self.tool.as_ref(), other.tool.as_ref())
    }
}

/// From the record at position `start` on (until the next span), records carry `corr`: 16
/// bytes, the correlation itself shared with the emits that made it.
#[derive(Debug, Clone)]
pub(super) struct Span {
    pub start: u64,
    pub corr: Arc<Correlation>,
}

/// A trace's spans, oldest first. Records before the first span carry no correlation.
#[derive(Debug, Default)]
pub(super) struct Spans {
    spans: VecDeque<Span>,
}

impl Spans {
    /// Records appended from position `at` on (at least one) carry `corr`: a new span unless
    /// the last one already says so (the same `Arc`, as an emit of the same event usually
    /// hands in, is one comparison).
    #[inline]
    pub fn note_shared(&mut self, at: u64, corr: &Arc<Correlation>) {
        let same = match self.spans.back() {
            Some(last) => Arc::ptr_eq(&last.corr, corr) || *last.corr == **corr,
            None => corr.is_none(),
        };
        if !same {
            self.push(at, Arc::clone(corr));
        }
    }

    /// [`Spans::note_shared`] for a correlation not yet shared: copied only when it is new.
    pub fn note(&mut self, at: u64, corr: &Correlation) {
        let last = self.spans.back().map_or(&Correlation::NONE, |s| &*s.corr);
        if last != corr {
            self.push(at, Arc::new(corr.clone()));
        }
    }

    #[cold]
    #[inline(never)]
    fn push(&mut self, at: u64, corr: Arc<Correlation>) {
        self.spans.push_back(Span { start: at, corr });
    }

    /// Forgets the spans wholly before position `first` (the first record still held), keeping
    /// the one that covers it.
    pub fn forget_before(&mut self, first: u64) {
        while self.spans.len() > 1 && self.spans[1].start <= first {
            self.spans.pop_front();
        }
    }

    /// The correlation of the record at position `at`.
    pub fn at(&self, at: u64) -> &Correlation {
        let after = self.spans.partition_point(|s| s.start <= at);
        after
            .checked_sub(1)
            .map_or(&Correlation::NONE, |i| &*self.spans[i].corr)
    }

    /// A cursor for records read in order from position `from` on.
    pub fn cursor(&self, from: u64) -> Cursor<'_> {
        let next = self.spans.partition_point(|s| s.start <= from);
        Cursor {
            spans: &self.spans,
            next,
            current: next
                .checked_sub(1)
                .map_or(&Correlation::NONE, |i| &*self.spans[i].corr),
        }
    }

    /// The correlations of the `count` records from position `from` on, as spans re-based to
    /// indices among them (for records taken out of the trace).
    pub fn slice(&self, from: u64, count: usize) -> Vec<(usize, Arc<Correlation>)> {
        let mut out = Vec::new();
        let next = self.spans.partition_point(|s| s.start <= from);
        if let Some(first) = next.checked_sub(1).map(|i| &self.spans[i].corr) {
            out.push((0, Arc::clone(first)));
        }
        let end = from + count as u64;
        for span in self.spans.range(next..).take_while(|s| s.start < end) {
            // Positions past `from` and before `end`: below `count`, so they fit.
            let index = usize::try_from(span.start - from).unwrap_or(usize::MAX);
            out.push((index, span.corr.clone()));
        }
        out
    }

    /// How many spans there are.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// The bytes the spans take: their list, and each one's correlation (two counters and
    /// the fields; counted once per span, though spans may share one). The texts are shared
    /// with the run contexts and events they came from and not counted.
    pub fn memory_bytes(&self) -> usize {
        let shared = 2 * std::mem::size_of::<usize>() + std::mem::size_of::<Correlation>();
        self.spans.capacity() * std::mem::size_of::<Span>() + self.spans.len() * shared
    }
}

/// Walks the spans alongside records read in order: no search per record.
pub(super) struct Cursor<'a> {
    spans: &'a VecDeque<Span>,
    next: usize,
    current: &'a Correlation,
}

impl<'a> Cursor<'a> {
    /// The correlation of the record at position `at`, which is at or after the last asked.
    #[inline]
    pub fn at(&mut self, at: u64) -> &'a Correlation {
        while let Some(span) = self.spans.get(self.next) {
            if span.start > at {
                break;
            }
            self.current = &*span.corr;
            self.next += 1;
        }
        self.current
    }
}

/// The correlation of record `index` of records whose re-based spans are `spans`.
pub(super) fn in_slice(spans: &[(usize, Arc<Correlation>)], index: usize) -> &Correlation {
    let after = spans.partition_point(|(start, _)| *start <= index);
    after
        .checked_sub(1)
        .map_or(&Correlation::NONE, |i| &*spans[i].1)
}

/// Text from the bytes of a string that may hold surrogate code points, encoded as UTF-8
/// would encode them were they characters (Python's `surrogatepass`, WTF-8): each surrogate
/// code point becomes one U+FFFD (I21), everything else is kept. A run id or a tool name can
/// hold them (a Python `str`, a JavaScript string); no trace can.
pub fn text_replacing_surrogates(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((&first, tail)) = rest.split_first() {
        // A surrogate is ED A0..BF xx; valid UTF-8 has ED only before 80..9F.
        if first == 0xED && tail.first().is_some_and(|b| (0xA0..=0xBF).contains(b)) {
            out.extend_from_slice("\u{fffd}".as_bytes());
            rest = tail.get(2..).unwrap_or_default();
        } else {
            out.push(first);
            rest = tail;
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corr(run: &str, step: u64, tool: Option<&str>) -> Correlation {
        Correlation {
            run: Some(Arc::from(run)),
            step: Some(step),
            tool: tool.map(Arc::from),
        }
    }

    #[test]
    fn equal_correlations_compare_by_text_and_pointer() {
        let a = corr("r", 1, Some("t"));
        assert_eq!(a, a.clone());
        assert_eq!(a, corr("r", 1, Some("t")));
        assert_ne!(a, corr("r", 2, Some("t")));
        assert_ne!(a, corr("r", 1, None));
        assert_ne!(a, corr("s", 1, Some("t")));
        assert!(Correlation::NONE.is_none() && !a.is_none());
    }

    #[test]
    fn the_same_correlation_adds_one_span() {
        let mut spans = Spans::default();
        let a = corr("r", 1, Some("t"));
        for at in 0..100 {
            spans.note(at * 3, &a.clone());
        }
        assert_eq!(spans.len(), 1);
        spans.note(300, &Correlation::NONE);
        spans.note(301, &Correlation::NONE);
        assert_eq!(spans.len(), 2);
        assert_eq!(spans.at(299), &a);
        assert_eq!(spans.at(300), &Correlation::NONE);
    }

    #[test]
    fn no_span_for_records_without_correlation() {
        let mut spans = Spans::default();
        spans.note(0, &Correlation::NONE);
        assert_eq!(spans.len(), 0);
        assert_eq!(spans.at(5), &Correlation::NONE);
    }

    #[test]
    fn lookups_and_cursors_agree_and_forgetting_keeps_the_covering_span() {
        let (a, b) = (corr("r", 1, None), corr("r", 2, None));
        let mut spans = Spans::default();
        spans.note(0, &a);
        spans.note(4, &b);
        spans.note(6, &a);
        let mut cursor = spans.cursor(3);
        let seen: Vec<Option<u64>> = (3..9).map(|at| cursor.at(at).step).collect();
        assert_eq!(seen, [Some(1), Some(2), Some(2), Some(1), Some(1), Some(1)]);
        for at in 0..9 {
            assert_eq!(spans.cursor(at).at(at), spans.at(at));
        }
        spans.forget_before(5);
        assert_eq!(spans.len(), 2);
        assert_eq!(spans.at(5), &b);
        spans.forget_before(100);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans.at(100), &a);
    }

    #[test]
    fn each_surrogate_code_point_becomes_one_replacement_character() {
        // "a\ud800b" and "\ud83d\ude00" (a pair of code points, each alone) as surrogatepass.
        assert_eq!(text_replacing_surrogates(b"a\xed\xa0\x80b"), "a\u{fffd}b");
        assert_eq!(
            text_replacing_surrogates(b"\xed\xa0\xbd\xed\xb8\x80"),
            "\u{fffd}\u{fffd}"
        );
        // Valid text, ED-led characters (U+D7FF) and characters outside the BMP are kept.
        for text in ["plain", "\u{d7ff}\u{e000}", "\u{1f600} é", ""] {
            assert_eq!(text_replacing_surrogates(text.as_bytes()), text);
        }
        assert_eq!(text_replacing_surrogates(b"x\xed\xbf\xbf"), "x\u{fffd}");
    }

    #[test]
    fn slices_are_rebased() {
        let (a, b) = (corr("r", 1, None), corr("r", 2, None));
        let mut spans = Spans::default();
        spans.note(10, &a);
        spans.note(14, &b);
        let slice = spans.slice(8, 10);
        let plain: Vec<(usize, Correlation)> =
            slice.iter().map(|(i, c)| (*i, (**c).clone())).collect();
        assert_eq!(plain, [(2, a.clone()), (6, b.clone())]);
        assert_eq!(in_slice(&slice, 1), &Correlation::NONE);
        assert_eq!(in_slice(&slice, 5), &a);
        assert_eq!(in_slice(&slice, 9), &b);
        assert_eq!(*spans.slice(12, 2)[0].1, a);
        assert_eq!(spans.slice(12, 2).len(), 1);
        // A shared correlation compares by pointer first, by value then.
        let shared = Arc::new(b.clone());
        spans.note_shared(20, &shared);
        spans.note_shared(21, &Arc::new(b));
        assert_eq!(spans.len(), 2);
        spans.note_shared(22, &Arc::new(Correlation::NONE));
        assert_eq!(spans.len(), 3);
    }
}
