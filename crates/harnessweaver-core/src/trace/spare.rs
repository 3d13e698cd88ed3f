//! Chunks of dropped traces, kept for the traces made after them.
//!
//! A new chunk's memory is fresh from the operating system, and the first write to each of its
//! 32 pages is a page fault: about 1.7 µs each on this project's virtual machine, some 120 ns
//! an emit of eight middleware (a page holds 14 such emits' records), a tenth of the emit.
//! Programs make traces one after another (a run context per agent run, per request, per
//! benchmark round), so a dropped trace's chunks are kept, up to [`SPARE_CHUNKS`], and the
//! next chunk any trace opens is a kept one when there is one: memory already written once.
//! A kept chunk is empty: nothing of one trace is ever seen in another.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::packed::Stored;
use super::CHUNK;

/// How many chunks the process keeps at most: 4 MiB once that many traces' worth were used.
pub const SPARE_CHUNKS: usize = 32;

/// The chunks every trace of the process takes from and gives back to.
pub static SPARE: Spare = Spare::new(SPARE_CHUNKS);

/// A bounded stack of empty chunks.
#[derive(Debug)]
pub struct Spare {
    chunks: Mutex<Vec<Vec<Stored>>>,
    most: usize,
}

impl Spare {
    pub const fn new(most: usize) -> Self {
        Self {
            chunks: Mutex::new(Vec::new()),
            most,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Vec<Stored>>> {
        self.chunks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An empty chunk with room for [`CHUNK`] records: a kept one when there is one.
    pub fn take(&self) -> Vec<Stored> {
        self.lock()
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(CHUNK))
    }

    /// Keeps `chunk`, emptied, when it has room for [`CHUNK`] and fewer than the bound are
    /// kept; else it is freed.
    pub fn keep(&self, mut chunk: Vec<Stored>) {
        if chunk.capacity() != CHUNK {
            return;
        }
        let mut kept = self.lock();
        if kept.len() < self.most {
            chunk.clear();
            kept.push(chunk);
        }
    }

    /// How many chunks are kept now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_chunk() -> Vec<Stored> {
        let mut trace = crate::trace::TraceBuf::new();
        let record = crate::trace::tests::samples()[0];
        for _ in 0..CHUNK {
            trace.push(record);
        }
        let mut chunks = std::mem::take(&mut trace.chunks);
        chunks.pop_back().expect("one chunk").records
    }

    #[test]
    fn a_kept_chunk_is_empty_and_its_room_is_reused() {
        let spare = Spare::new(4);
        let chunk = full_chunk();
        let address = chunk.as_ptr();
        spare.keep(chunk);
        assert_eq!(spare.len(), 1);
        let again = spare.take();
        assert_eq!((again.len(), again.capacity()), (0, CHUNK));
        assert_eq!(
            again.as_ptr(),
            address,
            "the same memory, not a new allocation"
        );
        assert!(spare.is_empty());
    }

    #[test]
    fn at_most_the_bound_is_kept_and_the_rest_is_left_to_free() {
        let spare = Spare::new(2);
        for _ in 0..5 {
            spare.keep(Vec::with_capacity(CHUNK));
        }
        assert_eq!(spare.len(), 2);
    }

    #[test]
    fn chunks_of_another_size_are_not_kept() {
        let spare = Spare::new(4);
        spare.keep(Vec::with_capacity(7));
        assert!(spare.is_empty());
        assert_eq!(spare.take().capacity(), CHUNK);
    }
}
