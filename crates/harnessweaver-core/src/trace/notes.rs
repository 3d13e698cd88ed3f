//! What some records carry beside them: the warnings of outcome records (I24) and the
//! identities of hook records (I27). A stored record has no room for either (it stays 32
//! bytes, `packed.rs`), and most traces have none. Each note is the position of its record
//! among every record the trace ever appended, oldest first, so a trace without notes keeps an
//! empty list and looks nothing up; notes are forgotten with their records.

use std::collections::VecDeque;

use crate::identity::Identities;
use crate::warning::Warnings;

/// What a note holds, and the bytes it keeps on the heap (for `memory_bytes`).
pub(super) trait Note: Clone {
    fn heap_bytes(&self) -> usize;
}

impl Note for Warnings {
    fn heap_bytes(&self) -> usize {
        self.iter()
            .map(|t| t.len() + std::mem::size_of::<Box<str>>())
            .sum()
    }
}

impl Note for Identities {
    fn heap_bytes(&self) -> usize {
        0 // the digests are inline
    }
}

#[derive(Debug)]
pub(super) struct Notes<T> {
    notes: VecDeque<(u64, T)>,
}

impl<T> Default for Notes<T> {
    fn default() -> Self {
        Self {
            notes: VecDeque::new(),
        }
    }
}

impl<T: Note> Notes<T> {
    /// The record at position `at` (after every noted one) holds `note`.
    pub fn push(&mut self, at: u64, note: T) {
        self.notes.push_back((at, note));
    }

    /// Forgets the notes of records before position `first` (dropped or taken out).
    pub fn forget_before(&mut self, first: u64) {
        while self.notes.front().is_some_and(|(at, _)| *at < first) {
            self.notes.pop_front();
        }
    }

    /// The note of the record at position `at`, if it has one.
    pub fn at(&self, at: u64) -> Option<&T> {
        if self.notes.is_empty() {
            return None;
        }
        let index = self.notes.partition_point(|(pos, _)| *pos < at);
        match self.notes.get(index) {
            Some((pos, note)) if *pos == at => Some(note),
            _ => None,
        }
    }

    /// The notes of the `count` records from position `from` on, by index among them.
    pub fn slice(&self, from: u64, count: usize) -> Vec<(usize, T)> {
        let end = from + count as u64;
        self.notes
            .iter()
            .filter(|(at, _)| (from..end).contains(at))
            .map(|(at, note)| {
                (
                    usize::try_from(at - from).unwrap_or(usize::MAX),
                    note.clone(),
                )
            })
            .collect()
    }

    pub fn memory_bytes(&self) -> usize {
        let heap: usize = self.notes.iter().map(|(_, n)| n.heap_bytes()).sum();
        self.notes.capacity() * std::mem::size_of::<(u64, T)>() + heap
    }
}

/// The note of `slice`'s record `index` (a [`Notes::slice`]).
pub(super) fn in_slice<T>(slice: &[(usize, T)], index: usize) -> Option<&T> {
    slice
        .binary_search_by_key(&index, |(i, _)| *i)
        .ok()
        .map(|found| &slice[found].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(text: &str) -> Warnings {
        vec![Box::<str>::from(text)].into()
    }

    #[test]
    fn notes_are_found_by_position_and_forgotten_with_their_records() {
        let mut notes = Notes::<Warnings>::default();
        assert!(notes.at(0).is_none());
        notes.push(3, warnings("a"));
        notes.push(7, warnings("b"));
        assert_eq!(notes.at(3).map(|w| &*w[0]), Some("a"));
        assert!(notes.at(4).is_none());
        let slice = notes.slice(2, 5);
        assert_eq!(slice.len(), 1);
        assert_eq!(in_slice(&slice, 1).map(|w| &*w[0]), Some("a"));
        assert!(in_slice(&slice, 5).is_none());
        notes.forget_before(4);
        assert!(notes.at(3).is_none());
        assert_eq!(notes.at(7).map(|w| &*w[0]), Some("b"));
    }
}
