//! The warnings of outcome records (I24), kept beside the records: a stored record has no room
//! for them (it stays 32 bytes, `packed.rs`), and nearly no record has any. Each note is the
//! position of its record among every record the trace ever appended, oldest first, so a trace
//! without warnings keeps an empty list and looks nothing up.

use std::collections::VecDeque;

use crate::warning::Warnings;

#[derive(Debug, Default)]
pub(super) struct Notes {
    notes: VecDeque<(u64, Warnings)>,
}

impl Notes {
    /// The record at position `at` (after every noted one) holds `warnings`.
    pub fn push(&mut self, at: u64, warnings: Warnings) {
        self.notes.push_back((at, warnings));
    }

    /// Forgets the notes of records before position `first` (dropped or taken out).
    pub fn forget_before(&mut self, first: u64) {
        while self.notes.front().is_some_and(|(at, _)| *at < first) {
            self.notes.pop_front();
        }
    }

    /// The warnings of the record at position `at`, if it has any.
    pub fn at(&self, at: u64) -> Option<&Warnings> {
        if self.notes.is_empty() {
            return None;
        }
        let index = self.notes.partition_point(|(pos, _)| *pos < at);
        match self.notes.get(index) {
            Some((pos, warnings)) if *pos == at => Some(warnings),
            _ => None,
        }
    }

    /// The notes of the `count` records from position `from` on, by index among them.
    pub fn slice(&self, from: u64, count: usize) -> Vec<(usize, Warnings)> {
        let end = from + count as u64;
        self.notes
            .iter()
            .filter(|(at, _)| (from..end).contains(at))
            .map(|(at, warnings)| {
                (
                    usize::try_from(at - from).unwrap_or(usize::MAX),
                    warnings.clone(),
                )
            })
            .collect()
    }

    pub fn memory_bytes(&self) -> usize {
        let texts: usize = self
            .notes
            .iter()
            .flat_map(|(_, w)| w.iter())
            .map(|t| t.len() + std::mem::size_of::<Box<str>>())
            .sum();
        self.notes.capacity() * std::mem::size_of::<(u64, Warnings)>() + texts
    }
}

/// The warnings of `slice`'s record `index` (a [`Notes::slice`]).
pub(super) fn in_slice(slice: &[(usize, Warnings)], index: usize) -> Option<&Warnings> {
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
        let mut notes = Notes::default();
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
