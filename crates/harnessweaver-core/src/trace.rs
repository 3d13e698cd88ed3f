//! The trace (rulings 19–21, I8): compact fixed-size records, turned into views, JSON or
//! dicts only when someone reads them.
//!
//! A [`Record`] is plain data: strings are interned symbols and enums are bytes, so recording
//! is a copy with nothing to allocate or drop, into 32 bytes (`packed.rs`). A trace stores them
//! in fixed-size
//! chunks: it grows a chunk at a time, never copies what it holds, and never has more than one
//! chunk of unused room (a `Vec` that doubles could hold twice what it uses). Reading JSON Lines
//! back lives in the `read` submodule.

mod correlation;
mod notes;
mod packed;
mod read;
pub mod spare;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, BufWriter, Write};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use self::correlation::{in_slice, Spans};
pub use self::correlation::{text_replacing_surrogates, Correlation};
use self::notes::Notes;
pub use self::packed::Packed;
use self::packed::{join, Stored};

use crate::band::Band;
use crate::catalogue::{hook_name, HookId};
use crate::contract::Rule;
use crate::fail_mode::FailMode;
use crate::failure::FailureKind;
use crate::identity::{Identities, Identity};
use crate::outcome::OutcomeKind;
use crate::symbol::{release_all, retain_all, text, Sym, Texts};
use crate::warning::Warnings;

pub use read::{from_jsonl_str, read_jsonl, read_jsonl_into};

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
    /// The emit's ordinal within its trace, from 1 (I8), at most [`MAX_EMIT`] (I19).
    pub emit: u64,
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
    /// The middleware runs in audit mode (I25): the record says what it would have done.
    pub audit: bool,
}

// What a walk passes around; a trace stores it in 32 bytes (`packed.rs`).
const _: () = assert!(std::mem::size_of::<Record>() <= 48);

impl Record {
    /// The record as readable values, without a correlation.
    pub fn view(&self) -> RecordView {
        self.view_with(&Correlation::NONE)
    }

    /// The record as readable values, naming the run, step and tool of `corr` (I21).
    pub fn view_with(&self, corr: &Correlation) -> RecordView {
        RecordView {
            emit: self.emit,
            hook: hook_name(self.hook),
            run: corr.run.clone(),
            step: corr.step,
            tool: corr.tool.clone(),
            kind: self.kind.as_str(),
            middleware: text(self.middleware),
            band: Band::from_u8(self.band).map(Band::as_str),
            outcome: self.outcome.as_str(),
            modified: self.modified,
            code: text(self.code),
            failure: FailureKind::from_u8(self.failure).map(FailureKind::as_str),
            error: text(self.error),
            fail_mode: FailMode::from_u8(self.fail_mode).map(FailMode::as_str),
            contract: Rule::from_u8(self.contract).map(Rule::as_str),
            warnings: None,
            audit: self.audit.then_some(true),
            input_identity: None,
            enforced_identity: None,
            t_ns: self.t_ns,
            duration_ns: self.duration_ns,
        }
    }
}

/// A record as names, in the key order of its JSON form. Absent fields are skipped when
/// serialised. Every string is `'static` (catalogue names or permanent symbols) but the copy of
/// a counted symbol's text (`symbol.rs`), so a view allocates only for those; the run and the
/// tool (I21) are shared with the trace. Deserialising goes through the strict checks of
/// `read_jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordView {
    pub emit: u64,
    pub hook: &'static str,
    /// The run id of the emit's context (I21).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "shared_text"
    )]
    pub run: Option<Arc<str>>,
    /// The `step` of the event the caller emitted, where its hook point has one (I21).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The `tool.name` of the event the caller emitted, on `tool.before`/`tool.after` (I21).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "shared_text"
    )]
    pub tool: Option<Arc<str>>,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub middleware: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band: Option<&'static str>,
    pub outcome: &'static str,
    pub modified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<&'static str>,
    /// The bounded warnings of a middleware's outcome record (I24), only when it has some.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "shared_texts"
    )]
    pub warnings: Option<Warnings>,
    /// `true` on the records of an audited middleware (I25), absent everywhere else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<bool>,
    /// The identity of the event the emit was given (I27): on the hook records of a bus with
    /// an identity scheme only, where it is `Some(None)` (null) for an event outside the domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_identity: Option<Option<Identity>>,
    /// The identity of the event the chain left (I27), present exactly when `input_identity` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforced_identity: Option<Option<Identity>>,
    pub t_ns: u64,
    pub duration_ns: u64,
}

/// A shared text as a JSON string (serde writes an `Arc<str>` only with its `rc` feature).
#[allow(clippy::ref_option)] // the signature serde's `serialize_with` calls
fn shared_text<S: Serializer>(text: &Option<Arc<str>>, out: S) -> Result<S::Ok, S::Error> {
    match text {
        Some(text) => out.serialize_str(text),
        None => out.serialize_none(),
    }
}

/// Shared warnings as a JSON array of strings (I24).
#[allow(clippy::ref_option)] // the signature serde's `serialize_with` calls
fn shared_texts<S: Serializer>(texts: &Option<Warnings>, out: S) -> Result<S::Ok, S::Error> {
    match texts {
        Some(texts) => out.collect_seq(texts.iter().map(|t| &**t)),
        None => out.serialize_none(),
    }
}

impl RecordView {
    /// The view with `warnings` (I24), when there are some.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Option<&Warnings>) -> Self {
        self.warnings = warnings.cloned();
        self
    }

    /// The view with a hook record's identities (I27), when its bus had a scheme.
    #[must_use]
    pub fn with_identities(mut self, identities: Option<&Identities>) -> Self {
        if let Some(ids) = identities {
            self.input_identity = Some(ids.input);
            self.enforced_identity = Some(ids.enforced);
        }
        self
    }
}

/// Precise monotonic nanoseconds (see [`crate::clock`]), so record times from different traces
/// compare.
pub fn now_ns() -> u64 {
    crate::clock::precise_ns()
}

/// The bytes a trace stores each record in.
pub const RECORD_BYTES: usize = std::mem::size_of::<Stored>();

/// Records per chunk of a trace's storage: 128 KiB, so a trace's unused room is at most that.
pub const CHUNK: usize = 4096;

/// The largest emit ordinal (I19): 2^53 − 1, the largest integer every JSON reader and
/// TypeScript's numbers hold exactly. Ordinals are 64-bit integers below it.
pub const MAX_EMIT: u64 = (1 << 53) - 1;

/// How many records a trace keeps unless told otherwise (I20): the newest 2^20 (32 MiB here).
pub const DEFAULT_LIMIT: usize = 1 << 20;

/// Records whose emit ordinals share their high 32 bits (`packed.rs`), in the order recorded.
#[derive(Debug)]
struct Chunk {
    high: u32,
    /// The position of its first record among every record the trace ever held.
    start: u64,
    /// Room for exactly [`CHUNK`], or fewer once closed early (then shrunk to fit).
    records: Vec<Stored>,
    /// How many of `records` name counted symbols, which the trace holds (issue 13): when
    /// none do, as in most traces, freeing records need not look at them.
    counted: usize,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.start + self.records.len() as u64
    }

    /// Lets go of (or hands to `into`) the counted symbols of `records[from..to]`.
    fn unhold(&mut self, from: usize, to: usize, into: Option<&mut Texts>) {
        if self.counted == 0 {
            return;
        }
        let held = self.records[from..to].iter().filter(|r| r.holds_counted());
        self.counted -= held.clone().count();
        let syms = held.flat_map(Stored::syms);
        match into {
            Some(texts) => texts.adopt(syms),
            None => release_all(syms),
        }
    }
}

/// Records taken out of a trace, holding the counted texts they name for as long as they live,
/// and their correlations (I21).
#[derive(Debug)]
pub struct Taken {
    pub records: Vec<Record>,
    pub texts: Texts,
    /// From which index of `records` on each correlation holds (before the first: none).
    pub spans: Vec<(usize, Arc<Correlation>)>,
    /// The warnings of the records that have some (I24), by index of `records`, in order.
    pub warnings: Vec<(usize, Warnings)>,
    /// The identities of the hook records that have them (I27), likewise.
    pub identities: Vec<(usize, Identities)>,
}

impl Taken {
    /// The correlation of `records[index]`.
    pub fn correlation(&self, index: usize) -> &Correlation {
        in_slice(&self.spans, index)
    }

    /// The records as views, with their correlations, in order.
    pub fn views(&self) -> impl Iterator<Item = RecordView> + '_ {
        let mut spans = self.spans.iter().peekable();
        let mut current = &Correlation::NONE;
        self.records.iter().enumerate().map(move |(index, record)| {
            while let Some((_, corr)) = spans.next_if(|(start, _)| *start <= index) {
                current = &**corr;
            }
            record
                .view_with(current)
                .with_warnings(notes::in_slice(&self.warnings, index))
                .with_identities(notes::in_slice(&self.identities, index))
        })
    }

    /// The records as JSON Lines, as [`TraceBuf::to_jsonl`] writes them.
    pub fn to_jsonl(&self) -> String {
        views_to_jsonl(self.views(), self.records.len())
    }
}

impl Deref for Taken {
    type Target = [Record];
    fn deref(&self) -> &[Record] {
        &self.records
    }
}

/// The records of one run context, in the order they were recorded: the newest `limit` of
/// them (I20); older ones are dropped and counted, or taken out first by [`TraceBuf::take`].
#[derive(Debug)]
pub struct TraceBuf {
    /// Full chunks, then the one being filled.
    chunks: VecDeque<Chunk>,
    /// Records at the front of the first chunk that were already taken out or dropped.
    skip: usize,
    len: usize,
    /// Records ever appended; the position of the next one.
    total: u64,
    /// The highest emit ordinal handed out or recorded.
    emits: u64,
    limit: usize,
    dropped: u64,
    /// The records' correlations (I21), run-length encoded by position (`correlation.rs`).
    spans: Spans,
    /// The warnings of outcome records (I24), by position (`notes.rs`).
    warnings: Notes<Warnings>,
    /// The identities of hook records (I27), by position (`notes.rs`).
    identities: Notes<Identities>,
}

impl Default for TraceBuf {
    fn default() -> Self {
        Self::with_limit(Some(DEFAULT_LIMIT))
    }
}

impl Drop for TraceBuf {
    fn drop(&mut self) {
        let mut from = self.skip;
        for mut chunk in self.chunks.drain(..) {
            let to = chunk.records.len();
            chunk.unhold(from, to, None);
            from = 0;
            spare::SPARE.keep(chunk.records);
        }
    }
}

impl TraceBuf {
    /// A trace that keeps the newest [`DEFAULT_LIMIT`] records.
    pub fn new() -> Self {
        Self::default()
    }

    /// A trace that keeps the newest `limit` records (at least one), or all with `None`.
    pub fn with_limit(limit: Option<usize>) -> Self {
        Self {
            chunks: VecDeque::new(),
            skip: 0,
            len: 0,
            total: 0,
            emits: 0,
            limit: limit.map_or(usize::MAX, |n| n.max(1)),
            dropped: 0,
            spans: Spans::default(),
            warnings: Notes::default(),
            identities: Notes::default(),
        }
    }

    /// How many records this trace keeps at most; `None` for no bound.
    pub fn limit(&self) -> Option<usize> {
        (self.limit != usize::MAX).then_some(self.limit)
    }

    /// Records dropped because the limit was reached (or counted so by a binding).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Counts `count` more records as dropped (a binding whose sink failed to take them).
    pub fn count_dropped(&mut self, count: u64) {
        self.dropped = self.dropped.saturating_add(count);
    }

    /// The ordinal of an emit starting now: 1, 2, 3, … (I8). It stops at [`MAX_EMIT`] rather
    /// than wrap to a number already used (I19).
    pub fn begin_emit(&mut self) -> u64 {
        self.emits = (self.emits + 1).min(MAX_EMIT);
        self.emits
    }

    /// The number of emits begun on this trace (the last ordinal handed out or recorded).
    pub fn emits(&self) -> u64 {
        self.emits
    }

    pub fn push(&mut self, record: Record) {
        self.extend(std::slice::from_ref(&record));
    }

    /// Appends one emit's records in one go, without a correlation.
    pub fn extend(&mut self, records: &[Record]) {
        self.extend_with(records, &Correlation::NONE);
    }

    /// Appends one emit's records in one go; they carry `corr` (I21).
    pub fn extend_with(&mut self, records: &[Record], corr: &Correlation) {
        self.note(records.len(), corr);
        self.append(records, Packed::pack);
    }

    /// Appends records already packed: a binding packs each as it records it, so writing an
    /// emit's records to the trace is a copy.
    pub fn extend_packed(&mut self, records: &[Packed]) {
        self.note(records.len(), &Correlation::NONE);
        self.extend_packed_inner(records, true);
    }

    /// [`TraceBuf::extend_packed`] for records a walk made whose counted symbols (`symbol.rs`)
    /// all came through `texts`: when it holds none, as on the plain-answer path, no record
    /// names one and they are not looked at for them.
    pub fn extend_packed_from(&mut self, records: &[Packed], texts: &Texts) {
        self.note(records.len(), &Correlation::NONE);
        self.extend_packed_inner(records, !texts.is_empty());
    }

    /// [`TraceBuf::extend_packed_from`] for records that carry `corr` (I21): an emit's
    /// records. The same `Arc` as the last records' (a binding shares one between emits of
    /// one event), it costs one comparison.
    pub fn extend_packed_from_with(
        &mut self,
        records: &[Packed],
        texts: &Texts,
        corr: &Arc<Correlation>,
    ) {
        if !records.is_empty() {
            self.spans.note_shared(self.total, corr);
        }
        self.extend_packed_inner(records, !texts.is_empty());
    }

    /// [`TraceBuf::extend_packed_from_with`] for an emit's records some of which hold warnings
    /// (I24): `warnings` pairs an index of `records` with its record's warnings, in order.
    pub fn extend_packed_warned(
        &mut self,
        records: &[Packed],
        texts: &Texts,
        corr: &Arc<Correlation>,
        warnings: &[(usize, Warnings)],
    ) {
        self.extend_packed_noted(records, texts, corr, warnings, None);
    }

    /// [`TraceBuf::extend_packed_warned`] for an emit whose records may hold warnings (I24)
    /// and whose hook record, at index `identities.0` of `records`, holds the identities of
    /// I27 when its bus has a scheme.
    pub fn extend_packed_noted(
        &mut self,
        records: &[Packed],
        texts: &Texts,
        corr: &Arc<Correlation>,
        warnings: &[(usize, Warnings)],
        identities: Option<(usize, Identities)>,
    ) {
        for (index, kept) in warnings {
            self.warnings.push(self.total + *index as u64, kept.clone());
        }
        if let Some((index, ids)) = identities {
            self.identities.push(self.total + index as u64, ids);
        }
        self.extend_packed_from_with(records, texts, corr);
    }

    /// Appends one record read back with its correlation, warnings (I24) and identities (I27).
    pub(crate) fn push_read(
        &mut self,
        record: Record,
        corr: &Correlation,
        warnings: Option<Warnings>,
        identities: Option<Identities>,
    ) {
        if let Some(warnings) = warnings {
            self.warnings.push(self.total, warnings);
        }
        if let Some(ids) = identities {
            self.identities.push(self.total, ids);
        }
        self.extend_with(std::slice::from_ref(&record), corr);
    }

    /// The next `count` records appended carry `corr`.
    #[inline]
    fn note(&mut self, count: usize, corr: &Correlation) {
        if count > 0 {
            self.spans.note(self.total, corr);
        }
    }

    fn extend_packed_inner(&mut self, records: &[Packed], counted: bool) {
        // The common case, one emit's records with room left in the open chunk and the same
        // high word: one copy, no per-record chunk check.
        if let Some(last) = self.chunks.back_mut() {
            let high = last.high;
            if CHUNK - last.records.len() >= records.len() && records.iter().all(|r| r.high == high)
            {
                last.records.extend(records.iter().map(|r| r.stored));
                if counted {
                    let held = records.iter().filter(|r| r.stored.holds_counted());
                    last.counted += held.clone().count();
                    retain_all(held.flat_map(|r| r.stored.syms()));
                }
                let most = records.iter().map(|r| r.stored.low()).max().unwrap_or(0);
                self.emits = self.emits.max(join(high, most));
                self.total += records.len() as u64;
                self.len += records.len();
                self.enforce_limit();
                return;
            }
        }
        self.append(records, |record| *record);
    }

    fn append<T>(&mut self, records: &[T], pack: impl Fn(&T) -> Packed) {
        for record in records {
            let Packed { stored, high } = pack(record);
            self.emits = self.emits.max(join(high, stored.low()));
            let chunk = self.open_chunk(high);
            chunk.records.push(stored);
            if stored.holds_counted() {
                chunk.counted += 1;
                retain_all(stored.syms().into_iter());
            }
            self.total += 1;
        }
        self.len += records.len();
        self.enforce_limit();
    }

    /// Drops the oldest records past the limit, counting them.
    fn enforce_limit(&mut self) {
        if self.len > self.limit {
            let over = self.len - self.limit;
            self.discard(over, None);
            self.count_dropped(over as u64);
        }
    }

    /// The chunk to add a record with ordinal high word `high` to: the last one while it has
    /// room and that high word, else a new one. A chunk closed early (only when ordinals cross
    /// a multiple of 2^32, or in a trace read back with ordinals all over) is shrunk to fit.
    fn open_chunk(&mut self, high: u32) -> &mut Chunk {
        let open = match self.chunks.back_mut() {
            Some(last) if last.high == high && last.records.len() < CHUNK => true,
            Some(last) => {
                if last.records.len() < CHUNK {
                    last.records.shrink_to_fit();
                }
                false
            }
            None => false,
        };
        if !open {
            self.chunks.push_back(Chunk {
                high,
                start: self.total,
                records: spare::SPARE.take(),
                counted: 0,
            });
        }
        let last = self.chunks.len() - 1;
        &mut self.chunks[last]
    }

    /// Forgets the oldest `count` records (at most all), giving emptied chunks back, and lets
    /// go of the counted texts they name (or hands them to `into`).
    fn discard(&mut self, count: usize, mut into: Option<&mut Texts>) {
        let mut count = count.min(self.len);
        self.len -= count;
        self.spans.forget_before(self.first());
        self.warnings.forget_before(self.first());
        self.identities.forget_before(self.first());
        while count > 0 {
            let only = self.chunks.len() == 1;
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            let live = front.records.len() - self.skip;
            if count < live {
                front.unhold(self.skip, self.skip + count, into.as_deref_mut());
                self.skip += count;
                break;
            }
            front.unhold(self.skip, front.records.len(), into.as_deref_mut());
            count -= live;
            self.skip = 0;
            if only {
                // The chunk being filled: empty it and go on filling it.
                front.start = front.end();
                front.records.clear();
            } else if let Some(chunk) = self.chunks.pop_front() {
                spare::SPARE.keep(chunk.records);
            }
        }
    }

    /// Takes out the oldest `most` records (or all there are), in order: they are no longer
    /// held. Emit ordinals go on.
    pub fn take(&mut self, most: usize) -> Taken {
        let records: Vec<Record> = self.raw().take(most).collect();
        let spans = self.spans.slice(self.first(), records.len());
        let warnings = self.warnings.slice(self.first(), records.len());
        let identities = self.identities.slice(self.first(), records.len());
        let mut texts = Texts::new();
        self.discard(records.len(), Some(&mut texts));
        Taken {
            records,
            texts,
            spans,
            warnings,
            identities,
        }
    }

    /// The position (among every record ever appended) of the first record held.
    fn first(&self) -> u64 {
        self.total - self.len as u64
    }

    /// Takes out every record held; see [`TraceBuf::take`].
    pub fn drain(&mut self) -> Taken {
        self.take(self.len)
    }

    /// The number of records held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes this trace's storage takes: the records' chunks, the list of chunks, the
    /// correlations' spans, and the notes beside records (warnings, identities).
    pub fn memory_bytes(&self) -> usize {
        let chunks = self.chunks.capacity() * std::mem::size_of::<Chunk>();
        let records: usize = self.chunks.iter().map(|c| c.records.capacity()).sum();
        let notes = self.warnings.memory_bytes() + self.identities.memory_bytes();
        chunks + records * RECORD_BYTES + self.spans.memory_bytes() + notes
    }

    pub fn get(&self, index: usize) -> Option<RecordView> {
        if index >= self.len {
            return None;
        }
        let front = self.chunks.front()?;
        let at = front.start + (self.skip + index) as u64;
        // Chunks are full but for early-closed ones, so the guess is nearly always right.
        let guess = usize::try_from((at - front.start) / CHUNK as u64).unwrap_or(usize::MAX);
        let found = match self.chunks.get(guess) {
            Some(chunk) if chunk.start <= at && at < chunk.end() => chunk,
            _ => {
                let after = self.chunks.partition_point(|chunk| chunk.start <= at);
                self.chunks.get(after.checked_sub(1)?)?
            }
        };
        let offset = usize::try_from(at - found.start).ok()?;
        let corr = self.spans.at(at);
        found.records.get(offset).map(|stored| {
            stored
                .unpack(found.high)
                .view_with(corr)
                .with_warnings(self.warnings.at(at))
                .with_identities(self.identities.at(at))
        })
    }

    /// The records as views, with their correlations (I21), in order.
    pub fn iter(&self) -> impl Iterator<Item = RecordView> + '_ {
        let mut cursor = self.spans.cursor(self.first());
        (self.first()..).zip(self.raw()).map(move |(at, record)| {
            record
                .view_with(cursor.at(at))
                .with_warnings(self.warnings.at(at))
                .with_identities(self.identities.at(at))
        })
    }

    /// The records themselves, in order. Their counted symbols (`symbol.rs`) stand for their
    /// texts while this trace holds the records: view them before letting go of it, or
    /// [`TraceBuf::take`] them, which hands over the hold.
    pub fn raw(&self) -> impl Iterator<Item = Record> + '_ {
        let skip = self.skip;
        self.chunks.iter().enumerate().flat_map(move |(i, chunk)| {
            let from = if i == 0 { skip } else { 0 };
            chunk.records[from..]
                .iter()
                .map(move |stored| stored.unpack(chunk.high))
        })
    }

    /// A copy of every record, in order.
    pub fn records(&self) -> Vec<Record> {
        self.raw().collect()
    }

    /// One compact JSON object per record, each followed by `\n`. Buffered internally.
    pub fn write_jsonl<W: Write>(&self, writer: W) -> io::Result<()> {
        write_views_jsonl(self.iter(), writer)
    }

    pub fn to_jsonl(&self) -> String {
        views_to_jsonl(self.iter(), self.len)
    }

    /// How many correlation spans the trace keeps (`correlation.rs`): for tests of their
    /// run-length encoding.
    pub fn correlation_spans(&self) -> usize {
        self.spans.len()
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

/// `views` as JSON Lines: one compact object each, followed by `\n`. Buffered internally.
pub fn write_views_jsonl<W: Write>(
    views: impl Iterator<Item = RecordView>,
    writer: W,
) -> io::Result<()> {
    let mut out = BufWriter::new(writer);
    for view in views {
        serde_json::to_writer(&mut out, &view)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// `views` (about `count` of them) as one JSON Lines string.
pub fn views_to_jsonl(views: impl Iterator<Item = RecordView>, count: usize) -> String {
    let mut bytes = Vec::with_capacity(count * 160);
    // Writing to a Vec cannot fail and a view always serialises, so there is no error to
    // report; should one ever happen, the lines written so far are returned.
    let _ = write_views_jsonl(views, &mut bytes);
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
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
            audit: false,
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
            audit: false,
        };
        [outcome, failure, hook]
    }

    #[test]
    fn records_fit_in_48_bytes() {
        assert!(std::mem::size_of::<Record>() <= 48);
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

    /// `count` hook records of emits `first`, `first + 1`, …
    fn emits_from(first: u64, count: u64) -> Vec<Record> {
        let [_, _, hook] = samples();
        (0..count)
            .map(|i| Record {
                emit: first + i,
                ..hook
            })
            .collect()
    }

    #[test]
    fn ordinals_go_on_past_u32_without_reuse_i19() {
        let mut trace = TraceBuf::new();
        trace.extend(&emits_from(u64::from(u32::MAX) - 1, 2));
        assert_eq!(trace.emits(), u64::from(u32::MAX));
        let next = [trace.begin_emit(), trace.begin_emit()];
        assert_eq!(next, [1 << 32, (1 << 32) + 1]);
        trace.extend(&emits_from(1 << 32, 2));
        let emits: Vec<u64> = trace.iter().map(|v| v.emit).collect();
        assert_eq!(
            emits,
            [
                u64::from(u32::MAX) - 1,
                u64::from(u32::MAX),
                1 << 32,
                (1 << 32) + 1
            ]
        );
        let back = TraceBuf::from_jsonl_str(&trace.to_jsonl()).unwrap();
        assert_eq!(back.records(), trace.records());
        assert_eq!(back.emits(), (1 << 32) + 1);
    }

    #[test]
    fn ordinals_stop_at_the_largest_i19() {
        let mut trace = TraceBuf::new();
        trace.extend(&emits_from(MAX_EMIT - 1, 1));
        assert_eq!(
            [trace.begin_emit(), trace.begin_emit()],
            [MAX_EMIT, MAX_EMIT]
        );
        trace.extend(&emits_from(MAX_EMIT, 1));
        let back = TraceBuf::from_jsonl_str(&trace.to_jsonl()).unwrap();
        assert_eq!(back.get(1).map(|v| v.emit), Some(MAX_EMIT));
        let over = trace.to_jsonl().replace(
            &format!("\"emit\":{MAX_EMIT}"),
            &format!("\"emit\":{}", MAX_EMIT + 1),
        );
        let error = TraceBuf::from_jsonl_str(&over).unwrap_err();
        assert!(error.to_string().contains("9007199254740992"), "{error}");
    }

    #[test]
    fn ordinals_all_over_cost_no_more_than_their_records() {
        // Alternating high words close a chunk per record; each closed one shrinks to fit.
        let mut trace = TraceBuf::new();
        for i in 0..200u64 {
            trace.extend(&emits_from(1 + (i % 2) * (1 << 40), 1));
        }
        assert_eq!(trace.len(), 200);
        // The open chunk, and some 80 bytes for each closed one of one record.
        let bound = CHUNK * RECORD_BYTES + 200 * 128;
        assert!(trace.memory_bytes() < bound, "{}", trace.memory_bytes());
        let emits: Vec<u64> = trace.iter().map(|v| v.emit).collect();
        assert_eq!(emits[..3], [1, 1 + (1 << 40), 1]);
        assert_eq!(trace.get(199).map(|v| v.emit), Some(1 + (1 << 40)));
    }

    #[test]
    fn a_trace_keeps_the_newest_records_up_to_its_limit_i20() {
        let records = numbered(3 * CHUNK + 10);
        let mut trace = TraceBuf::with_limit(Some(CHUNK + 5));
        for batch in records.chunks(9) {
            trace.extend(batch);
        }
        assert_eq!(trace.len(), CHUNK + 5);
        assert_eq!(trace.dropped(), (2 * CHUNK + 5) as u64);
        assert_eq!(trace.records(), records[2 * CHUNK + 5..]);
        assert_eq!(trace.get(0).map(|v| v.t_ns), Some((2 * CHUNK + 5) as u64));
        assert_eq!(
            trace.get(CHUNK + 4).map(|v| v.t_ns),
            Some((3 * CHUNK + 9) as u64)
        );
        assert!(trace.get(CHUNK + 5).is_none());
        // The storage is bounded too: the live records' chunks, plus one.
        assert!(trace.memory_bytes() <= 3 * CHUNK * RECORD_BYTES + 1024);
        assert_eq!(TraceBuf::new().limit(), Some(DEFAULT_LIMIT));
        assert_eq!(TraceBuf::with_limit(None).limit(), None);
    }

    #[test]
    fn taking_records_frees_them_and_ordinals_go_on() {
        let mut trace = TraceBuf::new();
        let mut next = 0u64;
        let mut taken = 0usize;
        for round in 0..50 {
            for _ in 0..(CHUNK / 2 + round) {
                let emit = trace.begin_emit();
                trace.push(Record {
                    emit,
                    t_ns: next,
                    ..samples()[2]
                });
                next += 1;
            }
            let out = trace.take(CHUNK / 3);
            assert_eq!(out.first().map(|r| r.t_ns), Some(taken as u64));
            taken += out.len();
            let rest = trace.drain();
            taken += rest.len();
            assert_eq!(rest.last().map(|r| r.t_ns), Some(next - 1));
            assert!(trace.is_empty());
            assert!(trace.memory_bytes() <= CHUNK * RECORD_BYTES + 1024);
        }
        assert_eq!(taken as u64, next);
        assert_eq!(trace.emits(), next);
        assert_eq!(trace.dropped(), 0);
    }

    /// A correlation of run `run`, step `step` and maybe tool `tool`.
    pub(crate) fn corr(run: &str, step: u64, tool: Option<&str>) -> Correlation {
        Correlation {
            run: Some(Arc::from(run)),
            step: Some(step),
            tool: tool.map(Arc::from),
        }
    }

    /// The (run, step, tool) of each record, in order.
    fn correlations(views: impl Iterator<Item = RecordView>) -> Vec<(String, Option<u64>, String)> {
        views
            .map(|v| {
                let text = |t: Option<Arc<str>>| t.map_or_else(String::new, |t| t.to_string());
                (text(v.run), v.step, text(v.tool))
            })
            .collect()
    }

    fn row(run: &str, step: Option<u64>, tool: &str) -> (String, Option<u64>, String) {
        (run.to_owned(), step, tool.to_owned())
    }

    #[test]
    fn emits_with_the_same_correlation_share_one_span_i21() {
        let mut trace = TraceBuf::new();
        let one = corr("run-1", 3, Some("lookup"));
        for _ in 0..1000 {
            // A fresh copy of the texts each time: equal text is enough.
            trace.extend_with(&samples(), &corr("run-1", 3, Some("lookup")));
        }
        assert_eq!(trace.correlation_spans(), 1);
        trace.extend_with(&samples(), &one);
        assert_eq!(trace.correlation_spans(), 1);
        trace.extend_with(&samples(), &corr("run-1", 4, Some("lookup")));
        trace.extend_with(&[], &corr("run-2", 4, None)); // no records: nothing to say
        assert_eq!(trace.correlation_spans(), 2);
        // Records without a correlation after some with one start a span of none.
        trace.extend(&samples());
        assert_eq!(trace.correlation_spans(), 3);
        assert_eq!(trace.get(3003).map(|v| v.step), Some(Some(4)));
        assert_eq!(trace.get(3006).map(|v| v.run), Some(None));
        // A trace that never had one keeps no span at all.
        let mut plain = TraceBuf::new();
        plain.extend(&samples());
        plain.push(samples()[0]);
        assert_eq!(plain.correlation_spans(), 0);
    }

    #[test]
    fn get_iter_and_json_show_the_correlation_in_i21_order() {
        let mut trace = TraceBuf::new();
        let [outcome, failure, hook] = samples();
        trace.extend_with(&[outcome], &corr("r1", 7, Some("refund")));
        trace.extend_with(
            &[failure],
            &Correlation {
                step: None,
                ..corr("r\"2", 0, None)
            },
        );
        trace.extend(&[hook]);
        let expected = concat!(
            r#"{"emit":1,"hook":"tool.before","run":"r1","step":7,"tool":"refund","#,
            r#""kind":"outcome","middleware":"acme.guard","band":"app","outcome":"block","#,
            r#""modified":false,"code":"refund_cap","t_ns":10,"duration_ns":5}"#,
            "\n",
            r#"{"emit":2,"hook":"tool.before","run":"r\"2","kind":"failure","#,
        );
        assert!(
            trace.to_jsonl().starts_with(expected),
            "{}",
            trace.to_jsonl()
        );
        assert!(trace.to_jsonl().ends_with(
            "{\"emit\":2,\"hook\":\"task.end\",\"kind\":\"hook\",\"outcome\":\"continue\",\
             \"modified\":true,\"t_ns\":30,\"duration_ns\":0}\n"
        ));
        let mut written = Vec::new();
        trace.write_jsonl(&mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), trace.to_jsonl());
        let rows = vec![
            row("r1", Some(7), "refund"),
            row("r\"2", None, ""),
            row("", None, ""),
        ];
        assert_eq!(correlations(trace.iter()), rows);
        assert_eq!(correlations((0..3).filter_map(|i| trace.get(i))), rows);
    }

    #[test]
    fn emits_that_finish_out_of_order_keep_their_own_correlation() {
        // Emit 1 flushes one record and suspends; emit 2 runs whole; emit 1 finishes.
        let (a, b) = (corr("r", 1, Some("slow")), corr("r", 2, Some("fast")));
        let [outcome, _, hook] = samples();
        let mut trace = TraceBuf::new();
        trace.extend_with(&[outcome], &a);
        trace.extend_with(
            &[Record { emit: 2, ..outcome }, Record { emit: 2, ..hook }],
            &b,
        );
        trace.extend_with(&[Record { emit: 1, ..hook }], &a);
        let steps: Vec<(u64, Option<u64>)> = trace.iter().map(|v| (v.emit, v.step)).collect();
        assert_eq!(
            steps,
            [(1, Some(1)), (2, Some(2)), (2, Some(2)), (1, Some(1))]
        );
        assert_eq!(trace.get(3).and_then(|v| v.tool).as_deref(), Some("slow"));
    }

    #[test]
    fn limits_and_takes_keep_each_record_s_correlation_at_their_boundaries() {
        // Emits of 3 records each, every emit a new step.
        let emit = |i: u64| -> Vec<Record> {
            samples()
                .iter()
                .map(|r| Record {
                    emit: i + 1,
                    t_ns: i,
                    ..*r
                })
                .collect()
        };
        let mut trace = TraceBuf::with_limit(Some(10));
        for i in 0..10 {
            trace.extend_with(&emit(i), &corr("r", i, None));
        }
        // 30 appended, the newest 10 held: the last record of emit 6, then emits 7, 8 and 9.
        assert_eq!(trace.len(), 10);
        let steps: Vec<Option<u64>> = trace.iter().map(|v| v.step).collect();
        assert_eq!(steps[..4], [Some(6), Some(7), Some(7), Some(7)]);
        assert_eq!(trace.get(0).map(|v| (v.t_ns, v.step)), Some((6, Some(6))));
        assert_eq!(
            trace.correlation_spans(),
            4,
            "the spans of dropped records are forgotten"
        );
        // A take that splits emit 7 in two: each half keeps step 7.
        let first = trace.take(2);
        let firsts: Vec<Option<u64>> = first.views().map(|v| v.step).collect();
        assert_eq!(firsts, [Some(6), Some(7)]);
        assert_eq!(first.correlation(1).step, Some(7));
        assert!(first.to_jsonl().contains("\"step\":7"));
        assert_eq!(trace.get(0).map(|v| v.step), Some(Some(7)));
        let rest = trace.drain();
        let rests: Vec<Option<u64>> = rest.views().map(|v| v.step).collect();
        assert_eq!(rests, [7, 7, 8, 8, 8, 9, 9, 9].map(Some));
        assert_eq!(rest.len(), 8);
        assert_eq!(
            trace.correlation_spans(),
            1,
            "the last span is kept to compare with"
        );
        // The next emit of the same step adds no span; its records still carry it.
        trace.extend_with(&emit(10), &corr("r", 9, None));
        assert_eq!(trace.correlation_spans(), 1);
        assert_eq!(trace.get(2).map(|v| v.step), Some(Some(9)));
        // Records from before any correlation, then some with one: a take of both halves.
        let mut mixed = TraceBuf::new();
        mixed.extend(&emit(0));
        mixed.extend_with(&emit(1), &corr("r", 1, None));
        let taken = mixed.take(4);
        let got: Vec<Option<u64>> = taken.views().map(|v| v.step).collect();
        assert_eq!(got, [None, None, None, Some(1)]);
    }

    #[test]
    fn spans_are_counted_in_the_memory_figure() {
        let mut trace = TraceBuf::new();
        trace.extend(&samples());
        let before = trace.memory_bytes();
        for i in 0..100 {
            trace.extend_with(&samples(), &corr("r", i, None));
        }
        let chunks_only = trace.chunks.capacity() * std::mem::size_of::<Chunk>()
            + trace
                .chunks
                .iter()
                .map(|c| c.records.capacity())
                .sum::<usize>()
                * RECORD_BYTES;
        assert_eq!(chunks_only, before);
        assert!(
            trace.memory_bytes() >= chunks_only + 100 * 40,
            "{}",
            trace.memory_bytes()
        );
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

    #[test]
    fn warnings_are_kept_beside_their_records_and_round_trip_i24() {
        let [outcome, _, hook] = samples();
        let mut trace = TraceBuf::with_limit(Some(3));
        let emit = trace.begin_emit();
        let packed: Vec<Packed> = [outcome, outcome, hook]
            .iter()
            .map(|r| Packed::pack(&Record { emit, ..*r }))
            .collect();
        let kept: Warnings = vec![Box::<str>::from("slow \"tool\"")].into();
        let corr = Arc::new(Correlation::NONE);
        trace.extend_packed_warned(&packed, &Texts::new(), &corr, &[(1, kept.clone())]);
        let views: Vec<RecordView> = trace.iter().collect();
        assert!(views[0].warnings.is_none() && views[2].warnings.is_none());
        assert_eq!(views[1].warnings.as_deref(), Some(&*kept));
        assert_eq!(trace.get(1).unwrap().warnings.as_deref(), Some(&*kept));
        let text = trace.to_jsonl();
        assert_eq!(
            text.matches("\"warnings\":[\"slow \\\"tool\\\"\"]").count(),
            1,
            "{text}"
        );
        let back = TraceBuf::from_jsonl_str(&text).unwrap();
        assert_eq!(back.to_jsonl(), text);
        // Records dropped past the limit take their warnings with them; taken ones keep them.
        let mut more = TraceBuf::with_limit(Some(3));
        more.extend_packed_warned(&packed, &Texts::new(), &corr, &[(1, kept.clone())]);
        let taken = more.take(2);
        assert_eq!(
            taken.views().nth(1).unwrap().warnings.as_deref(),
            Some(&*kept)
        );
        more.extend_packed_from_with(&packed, &Texts::new(), &corr);
        assert!(more.iter().all(|v| v.warnings.is_none()));
        assert_eq!(more.warnings.at(1).map(|w| w.len()), None);
    }

    /// Two distinct identities: of `{"n":1}` and of `{"n":2}`.
    fn two_identities() -> (Identity, Identity) {
        let of = |n: u64| {
            crate::identity::IdentityScheme::JcsSha256
                .identity_of(&serde_json::json!({ "n": n }))
                .unwrap()
        };
        (of(1), of(2))
    }

    #[test]
    fn identities_are_kept_beside_hook_records_and_round_trip_i27() {
        let [outcome, _, hook] = samples();
        let (a, b) = two_identities();
        let ids = Identities {
            input: Some(a),
            enforced: None,
        };
        let mut trace = TraceBuf::with_limit(Some(4));
        let corr = Arc::new(Correlation::NONE);
        let emit = |n: u64| -> Vec<Packed> {
            [outcome, hook]
                .iter()
                .map(|r| Packed::pack(&Record { emit: n, ..*r }))
                .collect()
        };
        trace.extend_packed_noted(&emit(1), &Texts::new(), &corr, &[], Some((1, ids)));
        trace.extend_packed_from_with(&emit(2), &Texts::new(), &corr);
        let views: Vec<RecordView> = trace.iter().collect();
        assert_eq!(views[1].input_identity, Some(Some(a)));
        assert_eq!(views[1].enforced_identity, Some(None));
        assert!(views[0].input_identity.is_none() && views[3].input_identity.is_none());
        assert_eq!(trace.get(1).unwrap().input_identity, Some(Some(a)));
        let text = trace.to_jsonl();
        let line = text.lines().nth(1).unwrap();
        assert!(
            line.ends_with(&format!(
                "\"modified\":true,\"input_identity\":\"{a}\",\"enforced_identity\":null,\"t_ns\":30,\"duration_ns\":0}}"
            )),
            "{line}"
        );
        assert_eq!(text.matches("_identity").count(), 2, "{text}");
        // Read back and written again: the same bytes.
        let back = TraceBuf::from_jsonl_str(&text).unwrap();
        assert_eq!(back.to_jsonl(), text);
        // Taken records keep them; records dropped past the limit forget them.
        let both = Identities {
            input: Some(a),
            enforced: Some(b),
        };
        trace.extend_packed_noted(&emit(3), &Texts::new(), &corr, &[], Some((1, both)));
        assert_eq!(trace.identities.at(1), None, "dropped with its record");
        let taken = trace.take(4);
        let got: Vec<_> = taken.views().map(|v| v.enforced_identity).collect();
        assert_eq!(got, [None, None, None, Some(Some(b))]);
        assert!(taken
            .to_jsonl()
            .contains(&format!("\"enforced_identity\":\"{b}\"")));
    }

    #[test]
    fn identities_are_counted_in_the_memory_figure() {
        let [_, _, hook] = samples();
        let (a, _) = two_identities();
        let corr = Arc::new(Correlation::NONE);
        let mut plain = TraceBuf::new();
        let mut noted = TraceBuf::new();
        for n in 1..=100 {
            let packed = [Packed::pack(&Record { emit: n, ..hook })];
            plain.extend_packed_from_with(&packed, &Texts::new(), &corr);
            let ids = Identities {
                input: Some(a),
                enforced: Some(a),
            };
            noted.extend_packed_noted(&packed, &Texts::new(), &corr, &[], Some((0, ids)));
        }
        let extra = noted.memory_bytes() - plain.memory_bytes();
        assert!(extra >= 100 * 64, "{extra}");
        noted.drain();
        assert_eq!(noted.identities.at(99), None);
    }

    #[test]
    fn a_reader_takes_warnings_only_where_i24_puts_them() {
        let line = |kind: &str, extra: &str| {
            let mw = if kind == "hook" {
                ""
            } else {
                "\"middleware\":\"m\",\"band\":\"app\","
            };
            format!("{{\"emit\":1,\"hook\":\"tool.before\",\"kind\":\"{kind}\",{mw}\"outcome\":\"continue\",\"modified\":false{extra}}}\n")
        };
        assert!(TraceBuf::from_jsonl_str(&line("outcome", ",\"warnings\":[\"a\"]")).is_ok());
        for bad in [
            line("hook", ",\"warnings\":[\"a\"]"),
            line("outcome", ",\"warnings\":[]"),
            line("outcome", ",\"warnings\":[\"\"]"),
            line("outcome", ",\"warnings\":[1]"),
            line("outcome", ",\"warnings\":\"a\""),
            line(
                "outcome",
                &format!(",\"warnings\":[\"{}\"]", "x".repeat(257)),
            ),
            line(
                "outcome",
                &format!(",\"warnings\":[{}]", ["\"a\""; 9].join(",")),
            ),
        ] {
            let error = TraceBuf::from_jsonl_str(&bad).unwrap_err();
            assert_eq!(error.kind, crate::error::ErrorKind::InvalidTrace, "{bad}");
        }
    }
}
