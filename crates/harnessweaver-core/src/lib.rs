//! The pure-Rust core of the harnessweaver hook bus.
//!
//! What the bus decides lives here: the hook-point catalogue and directions, bands and fail
//! modes, timeouts and chain deadlines (I26), declaration, registration overrides and layer
//! checks in their fixed order (I4, I10, I13), matchers (I22) and audit mode (I25), chain
//! planning, outcome severity and reduction, and the walk of one emit (`walk.rs`): a resumable
//! state machine that owns the run order, stopping, clocks, limits and late answers, failures
//! and their fail modes, hook contracts (I14), warnings (I24), the records and the combined
//! outcome, with content identities (I27) and the compact trace with its correlation (I21),
//! its bound (I20) and its JSON Lines form, written and read back. What needs a host language
//! (calling and awaiting middleware, holding its events and outcome objects, judging a host
//! value as an answer) is the host's job: Python never appears in this crate;
//! `crates/harnessweaver-py` drives it from Python with `PyO3`, and any Rust program can drive
//! the same walk (see [`walk`]).
//!
//! The rules cited in this crate (`rule 1`, `ruling 15`, `R2`, `S8`, `detail-trace`) are
//! sections of `docs/spec/hook-bus.md`; the project's rulings I1–I32 and the error table are
//! `conformance/INTERPRETING.md`. `docs/architecture.md` pairs this crate's names with the
//! binding's, the pure-Python core's and TypeScript's. Nothing here panics on input: every
//! failure is an [`Error`].

pub mod band;
pub mod canonical;
pub mod catalogue;
pub mod clock;
pub mod contract;
pub mod deadline;
pub mod declaration;
pub mod duration;
pub mod error;
pub mod fail_mode;
pub mod failure;
pub mod identity;
pub mod layer;
pub mod matcher;
pub mod mode;
pub mod outcome;
pub mod registry;
pub mod symbol;
pub mod trace;
pub mod walk;
pub mod warning;

pub use band::Band;
pub use catalogue::{Direction, HookId, CATALOGUE};
pub use contract::{ContractMode, EventView, MessageView, Rule};
pub use declaration::{Declaration, DeclarationInput, Overrides, Overriding, TimeoutInput};
pub use error::{Error, ErrorKind};
pub use fail_mode::FailMode;
pub use failure::FailureKind;
pub use identity::{Identities, Identity, IdentityScheme};
pub use layer::Layer;
pub use matcher::{MatchKey, Matcher};
pub use mode::Mode;
pub use outcome::{OutcomeKind, Reducer};
pub use registry::{Chain, Entry, Registry};
pub use symbol::{Sym, NO_SYM};
pub use trace::{Record, RecordKind, RecordView, TraceBuf};
pub use walk::{Answer, Combined, Decision, Ending, Fold, Log, Options, Step, Verdict, Walk};
