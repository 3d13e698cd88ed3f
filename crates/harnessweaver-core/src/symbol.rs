//! A process-wide, append-only string interner.
//!
//! Middleware names, outcome codes and error type names become `u32` symbols so that a trace
//! record stays a fixed 40 bytes with no pointers to chase or drop. Interned strings are leaked
//! on purpose and never freed: they are a bounded vocabulary (the names a program registers,
//! the codes it returns, the exception types it raises), and leaking them is what lets
//! [`resolve`] hand out `&'static str` without copying.

use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};

/// An interned string.
pub type Sym = u32;

/// "No string": an absent middleware, code or error in a trace record.
pub const NO_SYM: Sym = u32::MAX;

#[derive(Default)]
struct Table {
    by_text: HashMap<&'static str, Sym>,
    texts: Vec<&'static str>,
}

fn table() -> &'static RwLock<Table> {
    static TABLE: OnceLock<RwLock<Table>> = OnceLock::new();
    TABLE.get_or_init(RwLock::default)
}

/// The symbol of `text`, interning it on first sight. Thread-safe; the common case (a string
/// seen before) only takes the read lock.
///
/// Never panics: a poisoned lock is recovered (the table is append-only, so it is consistent
/// whatever panicked while holding it), and once `u32::MAX` strings are interned, which no
/// bounded vocabulary reaches, new strings get [`NO_SYM`].
pub fn intern(text: &str) -> Sym {
    if let Some(&sym) = table()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .by_text
        .get(text)
    {
        return sym;
    }
    let mut table = table().write().unwrap_or_else(PoisonError::into_inner);
    // Another thread may have interned it between the two locks.
    if let Some(&sym) = table.by_text.get(text) {
        return sym;
    }
    let Ok(sym) = Sym::try_from(table.texts.len()) else {
        return NO_SYM;
    };
    if sym == NO_SYM {
        return NO_SYM;
    }
    let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
    table.texts.push(leaked);
    table.by_text.insert(leaked, sym);
    sym
}

/// The string of a symbol; `None` for [`NO_SYM`] or a symbol that was never handed out.
pub fn resolve(sym: Sym) -> Option<&'static str> {
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

/// `None` as [`NO_SYM`], for optional record fields.
pub fn intern_opt(text: Option<&str>) -> Sym {
    text.map_or(NO_SYM, intern)
}

#[cfg(test)]
mod tests {
    use super::*;

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
