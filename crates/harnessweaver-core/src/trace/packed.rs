//! The 32-byte form a trace stores each [`Record`] in.
//!
//! The emit ordinal is 64 bits (I19) but a stored record keeps only its low 32: the high 32 are
//! kept once per chunk of the trace (`trace.rs`), which holds only records whose ordinals share
//! them. [`Packed`] is a stored record with its high word, what a binding buffers during an
//! emit; the trace drops the high word as it copies the record into a chunk.
//!
//! A `Record` is convenient to build and compare, but its six one-byte fields and two symbols
//! that are never both present take 40 bytes. Stored, the small fields share 16 bits, and the
//! code and the error share one symbol: a failure record's code is fixed by its fail mode and
//! failure (ruling 9: closed → `middleware_error` or `middleware_timeout`, open → none), and only
//! failure records have an error. Packing and unpacking are a few shifts on the recording path
//! and on reads; they are exact for every record a walk or the reader makes (tested below).

use super::{Record, RecordKind, ABSENT};
use crate::catalogue::HookId;
use crate::fail_mode::FailMode;
use crate::failure::{resolve, FailureKind};
use crate::outcome::OutcomeKind;
use crate::symbol::{intern_opt, is_counted, Sym, NO_SYM};

/// A stored record: its emit ordinal's high 32 bits are its chunk's.
#[derive(Debug, Clone, Copy)]
pub struct Stored {
    t_ns: u64,
    duration_ns: u64,
    /// The low 32 bits of the emit ordinal.
    emit: u32,
    middleware: Sym,
    /// The error of a failure record, the code of any other.
    text: Sym,
    hook: HookId,
    /// kind (2 bits), outcome (3), modified (1), band (3), fail mode (2), failure (3), audit (1).
    flags: u16,
    /// The broken contract rule (I14), or ABSENT: the byte the alignment leaves free.
    contract: u8,
}

// The trace's memory budget: 32 bytes a record (issue 5 asks for at most 40).
const _: () = assert!(std::mem::size_of::<Stored>() == 32);

/// A record packed for storage, with the high 32 bits of its emit ordinal beside it.
#[derive(Debug, Clone, Copy)]
pub struct Packed {
    pub(super) stored: Stored,
    pub(super) high: u32,
}

/// The high and low 32 bits of an ordinal.
#[allow(clippy::cast_possible_truncation)] // the split is the point
fn split(emit: u64) -> (u32, u32) {
    ((emit >> 32) as u32, emit as u32)
}

/// The ordinal from its high and low 32 bits.
pub(super) fn join(high: u32, low: u32) -> u64 {
    (u64::from(high) << 32) | u64::from(low)
}

/// (shift, width) of each small field in `flags`; an all-ones field is ABSENT.
const KIND: (u32, u32) = (0, 2);
const OUTCOME: (u32, u32) = (2, 3);
const MODIFIED: (u32, u32) = (5, 1);
const BAND: (u32, u32) = (6, 3);
const FAIL_MODE: (u32, u32) = (9, 2);
// Four bits: eight failure kinds (I26 added `deadline` and `skipped`) plus ABSENT.
const FAILURE: (u32, u32) = (11, 4);
/// I25: the record of an audited middleware (the last bit of `flags`).
const AUDIT: (u32, u32) = (15, 1);

/// `value` in its field of `flags`: ABSENT (255) saturates to the all-ones field.
fn put(flags: &mut u16, (shift, width): (u32, u32), value: u8) {
    let all_ones = (1u16 << width) - 1;
    debug_assert!(value == ABSENT || u16::from(value) < all_ones || width == 1);
    *flags |= u16::from(value).min(all_ones) << shift;
}

fn get(flags: u16, (shift, width): (u32, u32)) -> u8 {
    let all_ones = (1u16 << width) - 1;
    let field = (flags >> shift) & all_ones;
    if field == all_ones && width > 1 {
        ABSENT
    } else {
        // At most 4 bits wide, so it fits.
        u8::try_from(field).unwrap_or(ABSENT)
    }
}

/// The code a failure record carries, as ruling 9 resolves it.
fn failure_code(fail_mode: u8, failure: u8) -> Sym {
    match (FailMode::from_u8(fail_mode), FailureKind::from_u8(failure)) {
        (Some(mode), Some(kind)) => intern_opt(resolve(mode, kind).code),
        _ => NO_SYM,
    }
}

impl Packed {
    pub fn pack(record: &Record) -> Self {
        let (high, low) = split(record.emit);
        Self {
            stored: Stored::pack(record, low),
            high,
        }
    }

    /// The ordinal of the emit this record belongs to.
    pub fn emit(&self) -> u64 {
        join(self.high, self.stored.emit)
    }

    pub fn unpack(&self) -> Record {
        self.stored.unpack(self.high)
    }
}

impl Stored {
    /// Whether it names a counted symbol (issue 13), which its trace holds while it does.
    #[inline]
    pub fn holds_counted(&self) -> bool {
        is_counted(self.middleware) || is_counted(self.text)
    }

    /// The symbols it names.
    pub fn syms(&self) -> [Sym; 2] {
        [self.middleware, self.text]
    }

    /// The low 32 bits of its emit ordinal.
    pub fn low(&self) -> u32 {
        self.emit
    }

    fn pack(record: &Record, low: u32) -> Self {
        let failure = record.kind == RecordKind::Failure;
        debug_assert!(
            if failure {
                record.code == failure_code(record.fail_mode, record.failure)
            } else {
                record.error == NO_SYM
            },
            "a record no walk or reader makes: {record:?}"
        );
        let mut flags = 0;
        put(&mut flags, KIND, record.kind as u8);
        put(&mut flags, OUTCOME, record.outcome as u8);
        put(&mut flags, MODIFIED, u8::from(record.modified));
        put(&mut flags, BAND, record.band);
        put(&mut flags, FAIL_MODE, record.fail_mode);
        put(&mut flags, FAILURE, record.failure);
        put(&mut flags, AUDIT, u8::from(record.audit));
        Self {
            t_ns: record.t_ns,
            duration_ns: record.duration_ns,
            emit: low,
            middleware: record.middleware,
            text: if failure { record.error } else { record.code },
            hook: record.hook,
            flags,
            contract: record.contract,
        }
    }

    /// The record, its ordinal's high 32 bits being `high`.
    pub fn unpack(&self, high: u32) -> Record {
        let kind = RecordKind::from_u8(get(self.flags, KIND)).unwrap_or(RecordKind::Outcome);
        let (fail_mode, failure) = (get(self.flags, FAIL_MODE), get(self.flags, FAILURE));
        let (code, error) = if kind == RecordKind::Failure {
            (failure_code(fail_mode, failure), self.text)
        } else {
            (self.text, NO_SYM)
        };
        Record {
            t_ns: self.t_ns,
            duration_ns: self.duration_ns,
            emit: join(high, self.emit),
            middleware: self.middleware,
            code,
            error,
            hook: self.hook,
            kind,
            outcome: OutcomeKind::from_u8(get(self.flags, OUTCOME))
                .unwrap_or(OutcomeKind::Continue),
            modified: get(self.flags, MODIFIED) == 1,
            band: get(self.flags, BAND),
            fail_mode,
            failure,
            contract: self.contract,
            audit: get(self.flags, AUDIT) == 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::band::Band;
    use crate::symbol::intern;
    use crate::trace::tests::samples;

    #[test]
    fn the_samples_survive_packing() {
        for record in samples() {
            assert_eq!(Packed::pack(&record).unpack(), record);
        }
    }

    /// Every combination of the small fields a walk can produce, with extreme numbers.
    #[test]
    fn packing_is_exact_for_every_record_a_walk_makes() {
        let bands = [Band::Baseline, Band::Platform, Band::App, Band::Task].map(|b| b as u8);
        let mut checked = 0;
        for outcome in OutcomeKind::ALL {
            for modified in [false, true] {
                for band in bands {
                    let record = Record {
                        t_ns: u64::MAX,
                        duration_ns: u64::MAX - 1,
                        emit: u64::MAX,
                        middleware: intern("acme.guard"),
                        code: if outcome == OutcomeKind::Continue {
                            NO_SYM
                        } else {
                            intern("some_code")
                        },
                        error: NO_SYM,
                        hook: 7,
                        kind: RecordKind::Outcome,
                        outcome,
                        modified: modified && outcome == OutcomeKind::Continue,
                        band,
                        fail_mode: ABSENT,
                        failure: ABSENT,
                        contract: if modified { 5 } else { ABSENT },
                        audit: band == Band::App as u8,
                    };
                    assert_eq!(Packed::pack(&record).unpack(), record);
                    let hook = Record {
                        kind: RecordKind::Hook,
                        middleware: NO_SYM,
                        band: ABSENT,
                        ..record
                    };
                    assert_eq!(Packed::pack(&hook).unpack(), hook);
                    checked += 2;
                }
                for mode in [FailMode::Closed, FailMode::Open] {
                    for failure in FailureKind::ALL {
                        let resolved = resolve(mode, failure);
                        let record = Record {
                            t_ns: 0,
                            duration_ns: 0,
                            emit: 1,
                            middleware: intern("tracer"),
                            code: intern_opt(resolved.code),
                            error: intern("TimeoutError"),
                            hook: 0,
                            kind: RecordKind::Failure,
                            outcome: resolved.outcome,
                            modified: false,
                            band: Band::Baseline as u8,
                            fail_mode: mode as u8,
                            failure: failure as u8,
                            contract: if failure == FailureKind::ContractViolation {
                                3
                            } else {
                                ABSENT
                            },
                            audit: mode == FailMode::Open,
                        };
                        assert_eq!(Packed::pack(&record).unpack(), record);
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 5 * 2 * (4 * 2 + 2 * FailureKind::ALL.len()));
    }
}
