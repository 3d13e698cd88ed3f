//! The trace (rulings 19–21, I8): compact fixed-size records, turned into views, JSON or
//! dicts only when someone reads them.
//!
//! A [`Record`] is plain data: strings are interned symbols and enums are bytes, so recording
//! is a copy with nothing to allocate or drop, into 32 bytes (`packed.rs`). A trace stores them
//! in fixed-size
//! chunks: it grows a chunk at a time, never copies what it holds, and never has more than one
//! chunk of unused room (a `Vec` that doubles could hold twice what it uses). Reading JSON Lines
//! back lives in the `read` submodule.

mod packed;
mod read;
pub mod spare;

use std::io::{self, BufWriter, Write};

use serde::Serialize;

pub use self::packed::Packed;

use crate::band::Band;
use crate::catalogue::{hook_name, HookId};
use crate::contract::Rule;
use crate::fail_mode::FailMode;
use crate::failure::FailureKind;
use crate::outcome::OutcomeKind;
use crate::symbol::{resolve_opt, Sym};

pub use read::{from_jsonl_str, read_jsonl};

/// The byte stored in [`Record::band`], [`Record::fail_mode`], [`Record::failure`] or
/// [`Record::contract`] when the record has no such field.
pub const ABSENT: u8 = u8::MAX;

/// What a record is about (ruling 20).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// A middleware answered with an outcome.
    Outcome = 0,
    /// A middleware failed (ruling 9); the outcome is the resolved one.
    Failure = 1,
    /// The combined outcome of one emit of a hook point.
    Hook = 2,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Outcome => "outcome",
            Self::Failure => "failure",
            Self::Hook => "hook",
        }
    }

    pub fn from_u8(value: u8) -> Option<RecordKind> {
        [Self::Outcome, Self::Failure, Self::Hook]
            .into_iter()
            .find(|kind| *kind as u8 == value)
    }

    pub fn parse(text: &str) -> Option<RecordKind> {
        [Self::Outcome, Self::Failure, Self::Hook]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// One trace record (I8). Absent symbols are `NO_SYM`, absent bytes [`ABSENT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Start, in [`now_ns`] nanoseconds.
    pub t_ns: u64,
    pub duration_ns: u64,
    /// The emit's ordinal within its trace, from 1 (I8).
    pub emit: u32,
    pub middleware: Sym,
    pub code: Sym,
    /// The failure's type name (I5).
    pub error: Sym,
    pub hook: HookId,
    pub kind: RecordKind,
    pub outcome: OutcomeKind,
    pub modified: bool,
    /// `Band as u8`.
    pub band: u8,
    /// 0 closed, 1 open.
    pub fail_mode: u8,
    /// `FailureKind as u8`.
    pub failure: u8,
    /// The hook-contract rule the middleware's modification broke (I14): `Rule::as_u8`.
    pub contract: u8,
}

// What a walk passes around; a trace stores it in 32 bytes (`packed.rs`).
const _: () = assert!(std::mem::size_of::<Record>() <= 40);

impl Record {
    /// The record as readable values.
    pub fn view(&self) -> RecordView {
        RecordView {
            emit: self.emit,
            hook: hook_name(self.hook),
            kind: self.kind.as_str(),
            middleware: resolve_opt(self.middleware),
            band: Band::from_u8(self.band).map(Band::as_str),
            outcome: self.outcome.as_str(),
            modified: self.modified,
            code: resolve_opt(self.code),
            failure: FailureKind::from_u8(self.failure).map(FailureKind::as_str),
            error: resolve_opt(self.error),
            fail_mode: FailMode::from_u8(self.fail_mode).map(FailMode::as_str),
            contract: Rule::from_u8(self.contract).map(Rule::as_str),
            t_ns: self.t_ns,
            duration_ns: self.duration_ns,
        }
    }
}

/// A record as names, in the key order of its JSON form. Absent fields are skipped when
/// serialised. Every string is `'static` (catalogue names or interned symbols), so a view costs
/// no allocation. Deserialising goes through the strict checks of `read_jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordView {
    pub emit: u32,
    pub hook: &'static str,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub middleware: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band: Option<&'static str>,
    pub outcome: &'static str,
    pub modified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<&'static str>,
    pub t_ns: u64,
    pub duration_ns: u64,
}

/// Precise monotonic nanoseconds (see [`crate::clock`]), so record times from different traces
/// compare.
pub fn now_ns() -> u64 {
    crate::clock::precise_ns()
}

/// The bytes a trace stores each record in.
pub const RECORD_BYTES: usize = std::mem::size_of::<Packed>();

/// Records per chunk of a trace's storage: 128 KiB, so a trace's unused room is at most that.
pub const CHUNK: usize = 4096;

/// The highest emit ordinal among `records` (0 for none).
fn last_emit(records: &[Packed]) -> u32 {
    records.iter().map(Packed::emit).max().unwrap_or(0)
}

/// The records of one run context, in the order they were recorded.
#[derive(Debug, Default)]
pub struct TraceBuf {
    /// Full chunks, then the one being filled; each allocated with room for exactly [`CHUNK`].
    chunks: Vec<Vec<Packed>>,
    len: usize,
    /// The last emit ordinal handed out.
    emits: u32,
}

impl Drop for TraceBuf {
    fn drop(&mut self) {
        spare::SPARE.keep(&mut self.chunks);
    }
}

impl TraceBuf {
    pub fn new() -> Self {
        Self::default()
    }

    /// The ordinal of an emit starting now: 1, 2, 3, … (I8). It saturates at `u32::MAX`
    /// rather than wrapping to a number already used.
    pub fn begin_emit(&mut self) -> u32 {
        self.emits = self.emits.saturating_add(1);
        self.emits
    }

    /// The number of emits begun on this trace (the last ordinal handed out).
    pub fn emits(&self) -> u32 {
        self.emits
    }

    pub fn push(&mut self, record: Record) {
        self.extend(std::slice::from_ref(&record));
    }

    /// Appends one emit's records in one go.
    pub fn extend(&mut self, records: &[Record]) {
        self.append(records, Packed::pack);
    }

    /// Appends records already packed: a binding packs each as it records it, so writing an
    /// emit's records to the trace is a copy.
    pub fn extend_packed(&mut self, records: &[Packed]) {
        self.append(records, |record| *record);
    }

    fn append<T>(&mut self, records: &[T], pack: impl Fn(&T) -> Packed) {
        // The common case, one emit's records with room left in the open chunk: no splitting.
        if let Some(chunk) = self.chunks.last_mut() {
            if CHUNK - chunk.len() >= records.len() {
                let start = chunk.len();
                chunk.extend(records.iter().map(&pack));
                self.emits = self.emits.max(last_emit(&chunk[start..]));
                self.len += records.len();
                return;
            }
        }
        let mut rest = records;
        while !rest.is_empty() {
            let chunk = self.open_chunk();
            let start = chunk.len();
            let (now, later) = rest.split_at(rest.len().min(CHUNK - start));
            chunk.extend(now.iter().map(&pack));
            let most = last_emit(&chunk[start..]);
            self.emits = self.emits.max(most);
            rest = later;
        }
        self.len += records.len();
    }

    /// The chunk being filled, starting a new one when the last is full.
    fn open_chunk(&mut self) -> &mut Vec<Packed> {
        if self
            .chunks
            .last()
            .map_or(true, |chunk| chunk.len() == CHUNK)
        {
            self.chunks.push(spare::SPARE.take());
        }
        let last = self.chunks.len() - 1;
        &mut self.chunks[last]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes this trace's storage takes: the records' chunks and the list of chunks.
    pub fn memory_bytes(&self) -> usize {
        let chunks = self.chunks.capacity() * std::mem::size_of::<Vec<Packed>>();
        let records: usize = self.chunks.iter().map(Vec::capacity).sum();
        chunks + records * std::mem::size_of::<Packed>()
    }

    pub fn get(&self, index: usize) -> Option<RecordView> {
        self.chunks
            .get(index / CHUNK)
            .and_then(|chunk| chunk.get(index % CHUNK))
            .map(|packed| packed.unpack().view())
    }

    pub fn iter(&self) -> impl Iterator<Item = RecordView> + '_ {
        self.raw().map(|record| record.view())
    }

    /// The records themselves, in order.
    pub fn raw(&self) -> impl Iterator<Item = Record> + '_ {
        self.chunks.iter().flatten().map(Packed::unpack)
    }

    /// A copy of every record, in order.
    pub fn records(&self) -> Vec<Record> {
        self.raw().collect()
    }

    /// One compact JSON object per record, each followed by `\n`. Buffered internally.
    pub fn write_jsonl<W: Write>(&self, writer: W) -> io::Result<()> {
        let mut out = BufWriter::new(writer);
        for record in self.raw() {
            serde_json::to_writer(&mut out, &record.view())?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    pub fn to_jsonl(&self) -> String {
        let mut bytes = Vec::with_capacity(self.len * 160);
        // Writing to a Vec cannot fail and a view always serialises, so there is no error to
        // report; should one ever happen, the lines written so far are returned.
        let _ = self.write_jsonl(&mut bytes);
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    /// Reads a trace written by [`TraceBuf::write_jsonl`]; see [`read_jsonl`].
    pub fn read_jsonl<R: io::BufRead>(reader: R) -> Result<TraceBuf, crate::error::Error> {
        read_jsonl(reader)
    }

    /// Reads a trace from a string; see [`read_jsonl`].
    pub fn from_jsonl_str(text: &str) -> Result<TraceBuf, crate::error::Error> {
        from_jsonl_str(text)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::symbol::{intern, NO_SYM};

    #[test]
    fn a_trace_made_after_dropped_ones_holds_only_its_own_records() {
        let [first, second, _] = samples();
        for _ in 0..3 {
            let mut old = TraceBuf::new();
            for _ in 0..(CHUNK + 5) {
                old.push(first);
            }
            drop(old); // its chunks are kept for later traces (`spare.rs`)
        }
        assert!(spare::SPARE.len() <= spare::SPARE_CHUNKS);
        let mut new = TraceBuf::new();
        new.push(second);
        assert_eq!(new.records(), vec![second]);
        assert_eq!(new.len(), 1);
    }

    /// A record of each kind, with every optional field exercised.
    pub(crate) fn samples() -> [Record; 3] {
        let outcome = Record {
            t_ns: 10,
            duration_ns: 5,
            emit: 1,
            middleware: intern("acme.guard"),
            code: intern("refund_cap"),
            error: NO_SYM,
            hook: 4,
            kind: RecordKind::Outcome,
            outcome: OutcomeKind::Block,
            modified: false,
            band: Band::App as u8,
            fail_mode: ABSENT,
            failure: ABSENT,
            contract: ABSENT,
        };
        let failure = Record {
            t_ns: 20,
            duration_ns: 7,
            emit: 2,
            middleware: intern("tracer"),
            code: intern("middleware_timeout"),
            error: intern("MiddlewareTimeout"),
            kind: RecordKind::Failure,
            band: Band::Baseline as u8,
            fail_mode: FailMode::Closed as u8,
            failure: FailureKind::Timeout as u8,
            ..outcome
        };
        let hook = Record {
            t_ns: 30,
            duration_ns: 0,
            emit: 2,
            middleware: NO_SYM,
            code: NO_SYM,
            error: NO_SYM,
            hook: 7,
            kind: RecordKind::Hook,
            outcome: OutcomeKind::Continue,
            modified: true,
            band: ABSENT,
            fail_mode: ABSENT,
            failure: ABSENT,
            contract: ABSENT,
        };
        [outcome, failure, hook]
    }

    #[test]
    fn records_fit_in_40_bytes() {
        assert!(std::mem::size_of::<Record>() <= 40);
    }

    #[test]
    fn record_kind_names() {
        for (kind, name) in [
            (RecordKind::Outcome, "outcome"),
            (RecordKind::Failure, "failure"),
            (RecordKind::Hook, "hook"),
        ] {
            assert_eq!(kind.as_str(), name);
            assert_eq!(RecordKind::parse(name), Some(kind));
        }
        assert_eq!(RecordKind::parse("Hook"), None);
    }

    #[test]
    fn emits_are_numbered_from_1_i8() {
        let mut trace = TraceBuf::new();
        assert_eq!(
            [trace.begin_emit(), trace.begin_emit(), trace.begin_emit()],
            [1, 2, 3]
        );
    }

    #[test]
    fn now_is_monotonic() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn json_keys_follow_i8_and_skip_absent_fields() {
        let mut trace = TraceBuf::new();
        for record in samples() {
            trace.push(record);
        }
        let expected = concat!(
            r#"{"emit":1,"hook":"tool.before","kind":"outcome","middleware":"acme.guard","#,
            r#""band":"app","outcome":"block","modified":false,"code":"refund_cap","#,
            r#""t_ns":10,"duration_ns":5}"#,
            "\n",
            r#"{"emit":2,"hook":"tool.before","kind":"failure","middleware":"tracer","#,
            r#""band":"baseline","outcome":"block","modified":false,"#,
            r#""code":"middleware_timeout","failure":"timeout","error":"MiddlewareTimeout","#,
            r#""fail_mode":"closed","t_ns":20,"duration_ns":7}"#,
            "\n",
            r#"{"emit":2,"hook":"task.end","kind":"hook","outcome":"continue","modified":true,"#,
            r#""t_ns":30,"duration_ns":0}"#,
            "\n",
        );
        assert_eq!(trace.to_jsonl(), expected);
    }

    #[test]
    fn views_and_accessors() {
        let mut trace = TraceBuf::new();
        assert!(trace.is_empty());
        for record in samples() {
            trace.push(record);
        }
        assert_eq!(trace.len(), 3);
        let hook = trace.get(2).unwrap();
        assert_eq!(
            (hook.kind, hook.middleware, hook.band),
            ("hook", None, None)
        );
        assert_eq!(trace.get(3), None);
        assert_eq!(trace.iter().count(), 3);
        assert_eq!(trace.records(), &samples());
    }

    #[test]
    fn write_jsonl_matches_to_jsonl() {
        let mut trace = TraceBuf::new();
        for record in samples() {
            trace.push(record);
        }
        let mut written = Vec::new();
        trace.write_jsonl(&mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), trace.to_jsonl());
    }

    #[test]
    fn an_empty_trace_writes_nothing() {
        assert_eq!(TraceBuf::new().to_jsonl(), "");
    }

    /// `count` distinct records (their `t_ns` is their position).
    fn numbered(count: usize) -> Vec<Record> {
        let [outcome, ..] = samples();
        (0..count)
            .map(|i| Record {
                t_ns: u64::try_from(i).unwrap(),
                ..outcome
            })
            .collect()
    }

    #[test]
    fn records_keep_their_order_and_index_across_chunk_boundaries() {
        let records = numbered(2 * CHUNK + 3);
        let mut trace = TraceBuf::new();
        // Uneven batches, so that some of them straddle a chunk boundary.
        for batch in records.chunks(CHUNK / 3 + 7) {
            trace.extend(batch);
        }
        assert_eq!(trace.len(), records.len());
        assert_eq!(trace.records(), records);
        for index in [0, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 2] {
            assert_eq!(trace.get(index).map(|v| v.t_ns), Some(index as u64));
        }
        assert!(trace.get(records.len()).is_none());
        assert_eq!(trace.iter().count(), records.len());
    }

    #[test]
    fn a_trace_holds_at_most_one_chunk_of_unused_room() {
        let record = RECORD_BYTES;
        assert_eq!(record, 32);
        let mut trace = TraceBuf::new();
        assert_eq!(trace.memory_bytes(), 0);
        for count in [1, CHUNK, CHUNK + 1, 5 * CHUNK - 1] {
            trace = TraceBuf::new();
            trace.extend(&numbered(count));
            let used = count * record;
            let spare = trace.memory_bytes() - used;
            assert!(
                spare < CHUNK * record + 64 * 24,
                "{count} records: {spare} bytes spare"
            );
        }
        // At scale that is the record size itself, within a fraction of a percent.
        trace = TraceBuf::new();
        trace.extend(&numbered(250 * CHUNK));
        // 32.1 bytes per record or less: 321 bytes per 10 records.
        assert!(trace.memory_bytes() * 10 <= trace.len() * 321);
    }
}
