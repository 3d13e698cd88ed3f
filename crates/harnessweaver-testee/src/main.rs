//! `harnessweaver-testee`: the conformance testee over the Rust core alone.
//!
//! Speaks the JSON Lines protocol of `conformance/INTERPRETING.md` §9 on stdin and stdout: one
//! message a line, stdout flushed after each; diagnostics go to stderr. Each `run` carries one
//! case out on a fresh bus (`case.rs`) and answers what it observed.

mod answer;
mod behaviours;
mod case;
mod cedar;
mod declare;
mod emit;
mod events;
mod text;

use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::{json, Value};

use crate::events::Catalogue;

const PROTOCOL: u64 = 1;

fn main() {
    let catalogue = match Catalogue::load() {
        Ok(catalogue) => catalogue,
        Err(e) => {
            eprintln!("harnessweaver-testee: cannot read the catalogue: {e}");
            std::process::exit(2);
        }
    };
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let message = match text::parse(&line) {
            Ok(message) => message,
            Err(e) => {
                eprintln!("harnessweaver-testee: unreadable line: {e}");
                json!({"cmd": "run", "seq": seq_of(&line), "unreadable": e})
            }
        };
        let reply = match message.get("cmd").and_then(Value::as_str) {
            Some("hello") => hello(),
            Some("run") => answer(&catalogue, &message),
            Some("stop") => return,
            other => json!({"errored": true, "message": format!("unknown command {other:?}")}),
        };
        let written = writeln!(stdout, "{}", text::write(&reply)).and_then(|()| stdout.flush());
        if written.is_err() {
            return;
        }
    }
}

fn hello() -> Value {
    json!({
        "protocol": PROTOCOL,
        "implementation": {
            "name": "harnessweaver",
            "language": "rust",
            "version": env!("CARGO_PKG_VERSION"),
            "core": "rust",
        },
        "features": ["timeouts", "concurrency", "cedar"],
    })
}

/// The answer to a `run`: the observation, or `errored` when the case cannot be carried out.
fn answer(catalogue: &Catalogue, message: &Value) -> Value {
    let seq = message.get("seq").cloned().unwrap_or(Value::Null);
    if let Some(e) = message.get("unreadable") {
        return json!({"seq": seq, "errored": true, "message": format!("unreadable case: {e}")});
    }
    let case = message.get("case").unwrap_or(&Value::Null);
    // A panic is a bug of this testee: reported for the case, never a dead testee.
    let observed = catch_unwind(AssertUnwindSafe(|| {
        case::CaseRun::new(catalogue, case).run(case)
    }));
    match observed {
        Ok(Ok(actual)) => json!({"seq": seq, "actual": actual}),
        Ok(Err(fault)) => json!({"seq": seq, "errored": true, "message": fault}),
        Err(_) => json!({"seq": seq, "errored": true, "message": "the testee panicked"}),
    }
}

/// The `seq` of a line that could not be read as a whole, found by a plain search.
fn seq_of(line: &str) -> Value {
    line.split("\"seq\":")
        .nth(1)
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().ok()
        })
        .map_or(Value::Null, Value::from)
}
