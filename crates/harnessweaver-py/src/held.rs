//! `Held`: a strong reference that is released at once when dropped.
//!
//! PyO3's `Py<T>` cannot know, when dropped, whether the thread is attached to the
//! interpreter unless PyO3 itself attached it; from a type slot CPython calls directly (our
//! `am_send`) it is not counted as attached, so every drop would be queued in PyO3's reference
//! pool: about a thousand instructions per emit. The objects of an emit are only ever dropped
//! on an attached thread (the emit runs in a Python call, or lives inside a Python object), so
//! `Held` releases them directly.

use std::mem::ManuallyDrop;

use pyo3::prelude::*;

pub struct Held<T>(ManuallyDrop<Py<T>>);

impl<T> Held<T> {
    pub fn new(object: Py<T>) -> Self {
        Self(ManuallyDrop::new(object))
    }

    pub fn get(&self) -> &Py<T> {
        &self.0
    }

    pub fn bind<'a, 'py>(&'a self, py: Python<'py>) -> &'a Bound<'py, T> {
        self.0.bind(py)
    }

    /// Swaps in `object`, releasing the one held before.
    pub fn replace(&mut self, object: Py<T>) {
        let old = std::mem::replace(self, Self::new(object));
        drop(old);
    }
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        // SAFETY: see the module doc: an emit's objects are dropped on an attached thread.
        let py = unsafe { Python::assume_attached() };
        // SAFETY: the reference is taken exactly once, here, and never used again.
        let object = unsafe { ManuallyDrop::take(&mut self.0) };
        drop(object.into_bound(py));
    }
}
