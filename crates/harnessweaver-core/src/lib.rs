//! The pure-Rust core of the harnessweaver hook bus.
//!
//! Everything the bus decides lives here: the hook-point catalogue and directions, bands and
//! fail modes, timeouts, declaration and registration checks, chain planning, outcome severity
//! and reduction, the chain walk, and the compact trace with its JSON Lines form. What it cannot
//! decide without a host language (calling middleware, awaiting them, events) is the binding's
//! job: Python never appears in this crate; `crates/harnessweaver-py` wraps it with `PyO3`.
//!
//! The normative texts are `hook-bus.md`, `INTERPRETATION.md` (rulings 1–21) and
//! `conformance/INTERPRETING.md` (error kinds, I1–I12). Nothing here panics on input: every
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
pub use declaration::{Declaration, DeclarationInput, Overrides, TimeoutInput};
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
pub use walk::{Answer, Combined, Decision, Walk};
