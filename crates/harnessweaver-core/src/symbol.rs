//! The string interner: middleware names, outcome codes and error type names become `u32`
//! symbols so that a trace record stays a fixed 32 bytes with no pointers to chase or drop.
//!
//! Two kinds of symbol (issue 13). *Permanent* ones are never freed, which lets [`resolve`]
//! hand out `&'static str`: the names declarations give and the fixed names of the rules, plus
//! the first [`TEXT_BUDGET`] other texts (the few codes and exception types a program uses,
//! which then cost nothing more to record). *Counted* ones are the texts past that budget
//! (a code made per request, a new exception class per call): each is held by a count of the
//! trace records and [`Texts`] holding it and freed when the last lets go, its slot reused, so
//! the process holds only the texts some live record still names.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};

/// An interned string.
pub type Sym = u32;

/// "No string": an absent middleware, code or error in a trace record.
pub const NO_SYM: Sym = u32::MAX;

/// The bit that marks a counted symbol; the rest is its slot.
pub const COUNTED: Sym = 1 << 31;

/// How many texts (codes, exception type names) are made permanent before the rest are
/// counted: 1024, some 100 KiB of a process at most.
pub const TEXT_BUDGET: usize = 1024;

#[derive(Default)]
struct Table {
    by_text: HashMap<&'static str, Sym>,
    texts: Vec<&'static str>,
    /// How many of `texts` came through [`Texts::intern`] (the budget's use).
    budgeted: usize,
}

fn table() -> &'static RwLock<Table> {
    static TABLE: OnceLock<RwLock<Table>> = OnceLock::new();
    TABLE.get_or_init(RwLock::default)
}

/// A counted text and how many hold it; a free slot has no text.
#[derive(Default)]
struct Slot {
    text: Option<Arc<str>>,
    count: u32,
}

#[derive(Default)]
struct Counted {
    by_text: HashMap<Arc<str>, Sym>,
    slots: Vec<Slot>,
    free: Vec<Sym>,
}

fn counted() -> MutexGuard<'static, Counted> {
    static COUNTED_TABLE: OnceLock<Mutex<Counted>> = OnceLock::new();
    COUNTED_TABLE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Whether `sym` is a counted symbol (not a permanent one, not [`NO_SYM`]).
#[inline]
pub fn is_counted(sym: Sym) -> bool {
    // One add and compare: NO_SYM wraps to 0, counted symbols land above COUNTED.
    sym.wrapping_add(1) > COUNTED
}

fn slot_index(sym: Sym) -> usize {
    (sym & !COUNTED) as usize
}

impl Counted {
    /// `text`'s counted symbol with one more holder; `NO_SYM` when the slots run out.
    fn acquire(&mut self, text: &str) -> Sym {
        if let Some(&sym) = self.by_text.get(text) {
            self.slots[slot_index(sym)].count += 1;
            return sym;
        }
        let text: Arc<str> = Arc::from(text);
        let sym = if let Some(sym) = self.free.pop() {
            sym
        } else {
            let Ok(index) = Sym::try_from(self.slots.len()) else {
                return NO_SYM;
            };
            if index >= COUNTED - 1 {
                return NO_SYM;
            }
            self.slots.push(Slot::default());
            index | COUNTED
        };
        self.slots[slot_index(sym)] = Slot {
            text: Some(Arc::clone(&text)),
            count: 1,
        };
        self.by_text.insert(text, sym);
        sym
    }

    fn retain(&mut self, sym: Sym) {
        if let Some(slot) = self.slots.get_mut(slot_index(sym)) {
            slot.count = slot.count.saturating_add(1);
        }
    }

    fn release(&mut self, sym: Sym) {
        let Some(slot) = self.slots.get_mut(slot_index(sym)) else {
            return;
        };
        slot.count = slot.count.saturating_sub(1);
        if slot.count == 0 {
            if let Some(text) = slot.text.take() {
                self.by_text.remove(&text);
                self.free.push(sym);
            }
        }
    }
}

/// Adds a holder to every counted symbol among `syms` (a trace storing records).
pub fn retain_all(syms: impl Iterator<Item = Sym>) {
    let mut table: Option<MutexGuard<'static, Counted>> = None;
    for sym in syms.filter(|&s| is_counted(s)) {
        table.get_or_insert_with(counted).retain(sym);
    }
}

/// Removes a holder from every counted symbol among `syms`, freeing those none holds.
pub fn release_all(syms: impl Iterator<Item = Sym>) {
    let mut table: Option<MutexGuard<'static, Counted>> = None;
    for sym in syms.filter(|&s| is_counted(s)) {
        table.get_or_insert_with(counted).release(sym);
    }
}

/// How many strings the interner holds now: permanent ones and live counted ones (a debug
/// figure for tests of issue 13).
pub fn interned() -> (usize, usize) {
    let permanent = table()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .texts
        .len();
    (permanent, counted().by_text.len())
}

/// Holders of counted symbols that live as long as this value: what a walk interns a code or
/// an error with, so the text lives until the records naming it are in a trace (which holds it
/// from then on) or dropped. Empty, it allocates nothing.
#[derive(Debug, Default)]
pub struct Texts(Vec<Sym>);

impl Texts {
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// The symbol of `text`: permanent when it is one or the budget has room, else counted
    /// and held by `self`.
    pub fn intern(&mut self, text: &str) -> Sym {
        let full = {
            let table = table().read().unwrap_or_else(PoisonError::into_inner);
            if let Some(&sym) = table.by_text.get(text) {
                return sym;
            }
            table.budgeted >= TEXT_BUDGET
        };
        if !full {
            let mut table = table().write().unwrap_or_else(PoisonError::into_inner);
            if let Some(&sym) = table.by_text.get(text) {
                return sym;
            }
            if table.budgeted < TEXT_BUDGET {
                table.budgeted += 1;
                return insert(&mut table, text);
            }
        }
        let sym = counted().acquire(text);
        if is_counted(sym) {
            self.0.push(sym);
        }
        sym
    }

    /// `None` as [`NO_SYM`]; see [`Texts::intern`].
    pub fn intern_opt(&mut self, text: Option<&str>) -> Sym {
        text.map_or(NO_SYM, |text| self.intern(text))
    }

    /// Takes over the holds of `syms` (records taken out of a trace).
    pub(crate) fn adopt(&mut self, syms: impl Iterator<Item = Sym>) {
        self.0.extend(syms.filter(|&s| is_counted(s)));
    }

    /// Whether it holds no counted symbol.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Lets go of every symbol held.
    pub fn clear(&mut self) {
        if !self.0.is_empty() {
            release_all(self.0.drain(..));
        }
    }
}

impl Drop for Texts {
    fn drop(&mut self) {
        self.clear();
    }
}

fn lookup(text: &str) -> Option<Sym> {
    table()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .by_text
        .get(text)
        .copied()
}

/// Adds `text` to the permanent table (which does not hold it yet).
fn insert(table: &mut Table, text: &str) -> Sym {
    let Ok(sym) = Sym::try_from(table.texts.len()) else {
        return NO_SYM;
    };
    if sym >= COUNTED {
        return NO_SYM;
    }
    let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
    table.texts.push(leaked);
    table.by_text.insert(leaked, sym);
    sym
}

/// The permanent symbol of `text`, interning it on first sight: for the names declarations
/// give and the fixed names of the rules, a bounded vocabulary. Thread-safe; the common case
/// (a string seen before) only takes the read lock.
///
/// Never panics: a poisoned lock is recovered (the table is append-only, so it is consistent
/// whatever panicked while holding it), and once 2^31 strings are interned, which no bounded
/// vocabulary reaches, new strings get [`NO_SYM`].
pub fn intern(text: &str) -> Sym {
    if let Some(sym) = lookup(text) {
        return sym;
    }
    let mut table = table().write().unwrap_or_else(PoisonError::into_inner);
    // Another thread may have interned it between the two locks.
    if let Some(&sym) = table.by_text.get(text) {
        return sym;
    }
    insert(&mut table, text)
}

/// The string of a permanent symbol; `None` for [`NO_SYM`], a counted symbol (see [`text`])
/// or a symbol that was never handed out.
pub fn resolve(sym: Sym) -> Option<&'static str> {
    if sym & COUNTED != 0 {
        return None;
    }
    let index = usize::try_from(sym).ok()?;
    table()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .texts
        .get(index)
        .copied()
}

/// [`resolve`] with [`NO_SYM`] (and unknown symbols) as `None`, for optional record fields.
pub fn resolve_opt(sym: Sym) -> Option<&'static str> {
    if sym == NO_SYM {
        None
    } else {
        resolve(sym)
    }
}

/// The string of any symbol, permanent or counted (a copy of a counted one, which may be
/// freed once its holders let go); `None` for [`NO_SYM`] or a symbol not handed out or freed.
pub fn text(sym: Sym) -> Option<Cow<'static, str>> {
    if !is_counted(sym) {
        return resolve_opt(sym).map(Cow::Borrowed);
    }
    let table = counted();
    let text = table.slots.get(slot_index(sym))?.text.as_deref()?;
    Some(Cow::Owned(text.to_owned()))
}

/// `None` as [`NO_SYM`], for optional record fields.
pub fn intern_opt(text: Option<&str>) -> Sym {
    text.map_or(NO_SYM, intern)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Record, TraceBuf};

    /// Uses up the permanent budget, so the texts interned after are counted.
    fn past_budget() {
        let mut texts = Texts::new();
        for i in 0..=TEXT_BUDGET {
            texts.intern(&format!("symbol-budget-filler-{i}"));
        }
    }

    /// Whether `sym` still stands for `expected` (a freed slot may be reused by another test).
    fn names(sym: Sym, expected: &str) -> bool {
        text(sym).as_deref() == Some(expected)
    }

    fn record_with_code(code: Sym) -> Record {
        Record {
            code,
            ..crate::trace::tests::samples()[0]
        }
    }

    #[test]
    fn a_counted_text_lives_while_held_and_is_freed_after() {
        past_budget();
        let mut first = Texts::new();
        let sym = first.intern("symbol-counted-a");
        assert!(is_counted(sym));
        assert_eq!(resolve(sym), None, "no &'static str for a counted text");
        let mut second = Texts::new();
        assert_eq!(
            second.intern("symbol-counted-a"),
            sym,
            "one slot per live text"
        );
        drop(first);
        assert!(names(sym, "symbol-counted-a"));
        drop(second);
        assert!(!names(sym, "symbol-counted-a"));
        // Permanent names are never counted, whatever the budget.
        assert!(!is_counted(intern("symbol-declared-name")));
        assert!(!is_counted(NO_SYM));
    }

    #[test]
    fn a_trace_holds_the_texts_of_the_records_it_holds() {
        past_budget();
        let mut trace = TraceBuf::with_limit(Some(2));
        let mut syms = Vec::new();
        for i in 0..50 {
            let mut texts = Texts::new();
            let code = texts.intern(&format!("symbol-trace-code-{i}"));
            assert!(is_counted(code));
            trace.push(record_with_code(code));
            syms.push(code);
        }
        for (i, &sym) in syms.iter().enumerate() {
            let held = names(sym, &format!("symbol-trace-code-{i}"));
            assert_eq!(held, i >= 48, "record {i}: dropped by the limit or held");
        }
        let taken = trace.drain();
        drop(trace);
        assert_eq!(taken.len(), 2);
        for record in taken.iter() {
            assert!(
                record.view().code.is_some(),
                "taken records keep their texts"
            );
        }
        let last = syms[49];
        drop(taken);
        assert!(!names(last, "symbol-trace-code-49"));
    }

    #[test]
    fn dropping_a_trace_frees_its_texts() {
        past_budget();
        let mut trace = TraceBuf::new();
        let mut texts = Texts::new();
        let code = texts.intern("symbol-dropped-trace");
        trace.push(record_with_code(code));
        trace.push(record_with_code(code));
        drop(texts);
        assert!(names(code, "symbol-dropped-trace"));
        drop(trace);
        assert!(!names(code, "symbol-dropped-trace"));
    }

    #[test]
    fn interning_is_stable_and_resolves_back() {
        let a = intern("symbol-test-a");
        let b = intern("symbol-test-b");
        assert_ne!(a, b);
        assert_eq!(intern("symbol-test-a"), a);
        assert_eq!(resolve(a), Some("symbol-test-a"));
        assert_eq!(resolve(b), Some("symbol-test-b"));
    }

    #[test]
    fn empty_and_unicode_strings_intern() {
        let empty = intern("");
        assert_eq!(resolve(empty), Some(""));
        let text = "ガード";
        assert_eq!(resolve(intern(text)), Some(text));
    }

    #[test]
    fn no_sym_and_unknown_symbols_resolve_to_none() {
        assert_eq!(resolve(NO_SYM), None);
        assert_eq!(resolve(NO_SYM - 1), None);
        assert_eq!(resolve_opt(NO_SYM), None);
        assert_eq!(intern_opt(None), NO_SYM);
        assert_eq!(resolve_opt(intern_opt(Some("x"))), Some("x"));
    }

    #[test]
    fn concurrent_interning_agrees() {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..200)
                        .map(|i| intern(&format!("symbol-race-{i}")))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<Vec<Sym>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for result in &results {
            assert_eq!(result, &results[0]);
        }
        for (i, &sym) in results[0].iter().enumerate() {
            assert_eq!(resolve(sym), Some(format!("symbol-race-{i}").as_str()));
        }
    }
}
