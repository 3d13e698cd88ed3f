//! Small state that every emit reads or writes: the planned chains, the kept `Emit`, the
//! calling thread's sniffio dict.
//!
//! Behind a `Mutex` or an `ArcSwap`, each access costs atomic read-modify-write instructions
//! (some 20 cycles each), a dozen of them an emit. With the GIL, every thread that touches this
//! state holds it (the `Python` token proves it), so accesses never overlap and a plain cell is
//! enough, provided no Python code runs while the cell is borrowed (it could reach the cell
//! again). So a `GilCell` never lends a reference: it hands out clones of [`Plain`] values and
//! swaps whole values, which the caller drops afterwards. Free-threaded builds have no GIL: there
//! it is a `Mutex`.

use pyo3::{PyTraverseError, Python};

/// A value only threads attached to the interpreter touch.
pub struct GilCell<T>(Inner<T>);

#[cfg(not(Py_GIL_DISABLED))]
type Inner<T> = std::cell::UnsafeCell<T>;

#[cfg(Py_GIL_DISABLED)]
type Inner<T> = std::sync::Mutex<T>;

/// Values whose `clone` runs no Python code (so a clone can be taken while the cell is
/// borrowed).
///
/// # Safety
/// Implement it only for types whose `Clone` never calls into Python.
pub unsafe trait Plain: Clone {}

// SAFETY: `Arc::clone` increments a counter; it never calls into Python.
unsafe impl<T> Plain for std::sync::Arc<T> {}

// SAFETY: with the GIL, the cell is reached only through the methods below, which take the
// `Python` token of a thread holding it (or run inside the collector, which holds it too), so
// no two accesses overlap; values cross threads only by moving in and out (hence `T: Send`).
#[cfg(not(Py_GIL_DISABLED))]
unsafe impl<T: Send> Sync for GilCell<T> {}

impl<T: Default> Default for GilCell<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> GilCell<T> {
    pub const fn new(value: T) -> Self {
        Self(Inner::new(value))
    }

    /// Puts `value` in and hands back what was there (drop it after: dropping may run Python
    /// code).
    pub fn replace(&self, _py: Python<'_>, value: T) -> T {
        #[cfg(not(Py_GIL_DISABLED))]
        // SAFETY: see `Sync` above; `mem::replace` runs no Python code.
        return std::mem::replace(unsafe { &mut *self.0.get() }, value);
        #[cfg(Py_GIL_DISABLED)]
        return std::mem::replace(&mut *self.lock(), value);
    }

    /// Takes the value out, leaving the default.
    pub fn take(&self, py: Python<'_>) -> T
    where
        T: Default,
    {
        self.replace(py, T::default())
    }

    /// What `look` makes of the value, which is out of the cell meanwhile (the cell holds the
    /// default), then put back: `look` may run Python code that reaches the cell.
    pub fn peek<R>(&self, py: Python<'_>, look: impl FnOnce(&T) -> R) -> R
    where
        T: Default,
    {
        let value = self.take(py);
        let seen = look(&value);
        drop(self.replace(py, value)); // the default, or what `look` left there
        seen
    }

    /// A clone of the value.
    pub fn get(&self, _py: Python<'_>) -> T
    where
        T: Plain,
    {
        #[cfg(not(Py_GIL_DISABLED))]
        // SAFETY: see `Sync` above; a `Plain` clone runs no Python code.
        return unsafe { &*self.0.get() }.clone();
        #[cfg(Py_GIL_DISABLED)]
        return self.lock().clone();
    }

    /// Shows the value to the garbage collector's `visit` (from a `__traverse__`, which runs
    /// with the GIL held and must not call into Python; `visit` does not).
    pub fn traverse(
        &self,
        visit: impl FnOnce(&T) -> Result<(), PyTraverseError>,
    ) -> Result<(), PyTraverseError> {
        #[cfg(not(Py_GIL_DISABLED))]
        // SAFETY: the collector holds the GIL, and nothing it calls here reaches the cell.
        return visit(unsafe { &*self.0.get() });
        #[cfg(Py_GIL_DISABLED)]
        // `try_lock`: the collector may run while an emit holds the lock; skipping one visit
        // of a value that holds no references is harmless.
        return self.0.try_lock().map_or(Ok(()), |value| visit(&value));
    }

    #[cfg(Py_GIL_DISABLED)]
    fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<K: Plain, H> GilCell<(K, H)> {
    /// A clone of the first part of the pair; the second stays in the cell untouched: for a
    /// cell that keeps, next to plain data the hot path reads, what that data needs kept alive
    /// (swapped in and out with it, as one value).
    pub fn get_first(&self, _py: Python<'_>) -> K {
        #[cfg(not(Py_GIL_DISABLED))]
        // SAFETY: see `Sync` above; a `Plain` clone runs no Python code.
        return unsafe { &*self.0.get() }.0.clone();
        #[cfg(Py_GIL_DISABLED)]
        return self.lock().0.clone();
    }
}
