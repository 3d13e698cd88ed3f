//! Reading a trace back from JSON Lines, strictly (I8).
//!
//! Blank lines are skipped. Every other line must be one record object with exactly the keys
//! its kind allows: every record has `emit` (from 1), `hook`, `kind`, `outcome`, `modified`;
//! `code` only when the outcome has one (never on a continue); middleware records add
//! `middleware` and `band`; failure records add `failure`, `error` and `fail_mode` and carry the
//! outcome and code that their fail mode resolves to (rulings 11–12). `t_ns` and `duration_ns`
//! are optional (0 when absent) because conformance strips them. The correlation (I21) is
//! optional too (traces written before it have none): `run` and `tool` are strings, `step` an
//! integer from 0 to 2^53 − 1. A hook record may carry the identities of I27, both
//! `input_identity` and `enforced_identity` or neither, each null or `sha256:` and 64 lowercase
//! hex digits; no other record has them. Anything else is an error naming the line.

use std::borrow::Cow;
use std::io::BufRead;
use std::sync::Arc;

use serde::{Deserialize, Deserializer};

use super::{Correlation, Record, RecordKind, RecordView, TraceBuf, ABSENT, MAX_EMIT};
use crate::band::Band;
use crate::catalogue::hook_id;
use crate::contract::Rule;
use crate::error::{invalid_trace, quote, Error};
use crate::fail_mode::FailMode;
use crate::failure::{is_type_name, resolve, FailureKind, MAX_TYPE_NAME};
use crate::identity::{Identities, Identity};
use crate::outcome::{within, OutcomeKind, MAX_TOKEN_CHARS};
use crate::symbol::Texts;
use crate::warning::{valid_in_trace, Warnings};

/// Reads a JSON Lines trace. The emit counter of the result goes on from the highest `emit`.
/// It keeps the newest [`super::DEFAULT_LIMIT`] records, like any new trace (I20).
pub fn read_jsonl<R: BufRead>(reader: R) -> Result<TraceBuf, Error> {
    read_jsonl_into(reader, TraceBuf::new())
}

/// [`read_jsonl`] into `trace` (a new one, with the limit its reader wants).
pub fn read_jsonl_into<R: BufRead>(mut reader: R, mut trace: TraceBuf) -> Result<TraceBuf, Error> {
    let mut line = String::new();
    let mut number = 0usize;
    // Holds a line's counted texts until the trace holds them (`symbol.rs`).
    let mut texts = Texts::new();
    // The last line's correlation, whose texts the next line shares when it names the same
    // (so the trace keeps one span for a run of them, as it did when they were recorded).
    let mut last = Correlation::NONE;
    loop {
        line.clear();
        number += 1;
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(invalid_trace(number, &format!("cannot be read: {e}"))),
        }
        if line.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
            continue;
        }
        let read = parse_line(&line, &mut texts, &last)
            .map_err(|problem| invalid_trace(number, &problem))?;
        trace.push_read(read.record, &read.corr, read.warnings, read.identities);
        last = read.corr;
        texts.clear();
    }
    Ok(trace)
}

pub fn from_jsonl_str(text: &str) -> Result<TraceBuf, Error> {
    read_jsonl(text.as_bytes())
}

/// One line read: the record and what is kept beside it.
struct Line {
    record: Record,
    corr: Correlation,
    warnings: Option<Warnings>,
    identities: Option<Identities>,
}

fn parse_line(line: &str, texts: &mut Texts, last: &Correlation) -> Result<Line, String> {
    let wire = serde_json::from_str::<Wire<'_>>(line).map_err(|e| json_problem(&e))?;
    let corr = wire.correlation(last)?;
    let warnings = wire.warnings()?;
    let identities = wire.identities()?;
    Ok(Line {
        record: wire.into_record(texts)?,
        corr,
        warnings,
        identities,
    })
}

/// `serde_json`'s message without its "at line 1 column N" suffix (the line is ours to give).
fn json_problem(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&suffix) {
        Some(message) => format!("{message} (column {})", error.column()),
        None => text,
    }
}

/// A string that borrows from the line unless it had escapes. (serde only borrows a bare
/// `Cow<str>` field, not one inside an `Option`.)
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(Visitor(std::marker::PhantomData))
    }
}

/// A record as it appears on a line, before the checks. Null counts as absent.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire<'a> {
    emit: u64,
    #[serde(borrow)]
    hook: Text<'a>,
    #[serde(borrow)]
    kind: Text<'a>,
    /// The correlation (I21), checked by hand to name the field and the rule.
    #[serde(default)]
    run: Option<serde_json::Value>,
    #[serde(default)]
    step: Option<serde_json::Value>,
    #[serde(default)]
    tool: Option<serde_json::Value>,
    #[serde(borrow, default)]
    middleware: Option<Text<'a>>,
    #[serde(borrow, default)]
    band: Option<Text<'a>>,
    #[serde(borrow)]
    outcome: Text<'a>,
    modified: bool,
    #[serde(borrow, default)]
    code: Option<Text<'a>>,
    #[serde(borrow, default)]
    failure: Option<Text<'a>>,
    #[serde(borrow, default)]
    error: Option<Text<'a>>,
    #[serde(borrow, default)]
    fail_mode: Option<Text<'a>>,
    #[serde(borrow, default)]
    contract: Option<Text<'a>>,
    /// An outcome record's warnings (I24), checked by hand to name the rule.
    #[serde(default)]
    warnings: Option<Vec<Box<str>>>,
    /// I25: `true` on an audited middleware's records, absent elsewhere.
    #[serde(default)]
    audit: Option<bool>,
    /// A hook record's identities (I27): `Some(Null)` when null, which is not absent here.
    #[serde(default, deserialize_with = "present")]
    input_identity: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    enforced_identity: Option<serde_json::Value>,
    #[serde(default)]
    t_ns: u64,
    #[serde(default)]
    duration_ns: u64,
}

/// A key that is present, whatever its value (null included): absent keys take the default.
fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// One identity of a hook record (I27): null, or `sha256:` and 64 lowercase hex digits.
fn identity_in(value: &serde_json::Value, key: &str) -> Result<Option<Identity>, String> {
    let parsed = match value {
        serde_json::Value::Null => return Ok(None),
        serde_json::Value::String(text) => Identity::parse(text),
        _ => None,
    };
    parsed.map(Some).ok_or_else(|| {
        format!("invalid {key} {value}: an identity is null or 'sha256:' and 64 lowercase hex digits (I27)")
    })
}

/// A correlation text (I21): a string, shared with `last` when it is the same text.
fn shared(
    value: Option<&serde_json::Value>,
    what: &str,
    last: Option<&Arc<str>>,
) -> Result<Option<Arc<str>>, String> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => Ok(Some(match last {
            Some(last) if **last == **text => last.clone(),
            _ => Arc::from(text.as_str()),
        })),
        Some(other) => Err(format!(
            "invalid {what} {other}: it is a string when present (I21)"
        )),
    }
}

impl Wire<'_> {
    /// The record's warnings (I24): only an outcome record has them, 1 to 8 texts of 1 to 256
    /// characters.
    fn warnings(&self) -> Result<Option<Warnings>, String> {
        let Some(texts) = &self.warnings else {
            return Ok(None);
        };
        if &*self.kind.0 != "outcome" {
            return Err("only an outcome record has warnings (I24)".to_owned());
        }
        valid_in_trace(texts)?;
        Ok(Some(texts.clone().into()))
    }

    /// The record's identities (I27): only a hook record has them, both keys or neither.
    fn identities(&self) -> Result<Option<Identities>, String> {
        let (input, enforced) = match (&self.input_identity, &self.enforced_identity) {
            (None, None) => return Ok(None),
            (Some(input), Some(enforced)) => (input, enforced),
            (Some(_), None) => {
                return Err("input_identity comes with enforced_identity (I27)".to_owned())
            }
            (None, Some(_)) => {
                return Err("enforced_identity comes with input_identity (I27)".to_owned())
            }
        };
        if &*self.kind.0 != "hook" {
            return Err(
                "only a hook record has input_identity and enforced_identity (I27)".to_owned(),
            );
        }
        Ok(Some(Identities {
            input: identity_in(input, "input_identity")?,
            enforced: identity_in(enforced, "enforced_identity")?,
        }))
    }

    /// The record's correlation (I21), its texts shared with `last` where they are equal.
    fn correlation(&self, last: &Correlation) -> Result<Correlation, String> {
        let step = match &self.step {
            None | Some(serde_json::Value::Null) => None,
            Some(value) => match value.as_u64() {
                Some(step) if step <= MAX_EMIT && !value.is_f64() => Some(step),
                _ => {
                    return Err(format!(
                        "invalid step {value}: a step is an integer from 0 to {MAX_EMIT} (I21)"
                    ))
                }
            },
        };
        Ok(Correlation {
            run: shared(self.run.as_ref(), "run", last.run.as_ref())?,
            step,
            tool: shared(self.tool.as_ref(), "tool", last.tool.as_ref())?,
        })
    }

    /// The checks of I8, then the compact record.
    /// The record, its texts interned into `texts` (which holds the counted ones).
    fn into_record(self, texts: &mut Texts) -> Result<Record, String> {
        let unknown = |what: &str, text: &Text<'_>| format!("unknown {what} {}", quote(&text.0));
        let hook = hook_id(&self.hook.0).map_err(|_| unknown("hook", &self.hook))?;
        let kind = RecordKind::parse(&self.kind.0).ok_or_else(|| unknown("kind", &self.kind))?;
        let outcome =
            OutcomeKind::parse(&self.outcome.0).ok_or_else(|| unknown("outcome", &self.outcome))?;
        let band = parse_opt(self.band.as_ref(), "band", |t| Band::parse(t).ok())?;
        let fail_mode = parse_opt(self.fail_mode.as_ref(), "fail_mode", |t| {
            FailMode::parse(t).ok()
        })?;
        let failure = parse_opt(self.failure.as_ref(), "failure", FailureKind::parse)?;
        if self.emit == 0 {
            return Err("emit is an ordinal from 1, not 0".to_owned());
        }
        if self.emit > MAX_EMIT {
            return Err(format!(
                "invalid emit {}: ordinals end at {MAX_EMIT} (I19)",
                self.emit
            ));
        }
        if self.modified && outcome != OutcomeKind::Continue {
            let shown = quote(outcome.as_str());
            return Err(format!(
                "modified is true only for a continue, not for {shown}"
            ));
        }
        if self.code.is_some() && outcome == OutcomeKind::Continue {
            return Err("a continue has no code".to_owned());
        }
        check_names(self.code.as_ref(), self.error.as_ref())?;
        let shape = Shape {
            middleware: self.middleware.is_some(),
            band: band.is_some(),
            failure: failure.is_some(),
            error: self.error.is_some(),
            fail_mode: fail_mode.is_some(),
        };
        shape.check(kind)?;
        if let (Some(fail_mode), Some(failure)) = (fail_mode, failure) {
            check_resolution(fail_mode, failure, outcome, self.code.as_ref())?;
        }
        let contract = parse_opt(self.contract.as_ref(), "contract", Rule::parse)?;
        check_contract(kind, self.modified, failure, contract.is_some())?;
        let audit = match (self.audit, kind) {
            (None, _) => false,
            (Some(true), RecordKind::Outcome | RecordKind::Failure) => true,
            (Some(true), RecordKind::Hook) => return Err("a hook record has no audit".to_owned()),
            (Some(false), _) => return Err("audit is true when present (I25)".to_owned()),
        };
        Ok(Record {
            t_ns: self.t_ns,
            duration_ns: self.duration_ns,
            emit: self.emit,
            middleware: texts.intern_opt(self.middleware.as_ref().map(|t| &*t.0)),
            code: texts.intern_opt(self.code.as_ref().map(|t| &*t.0)),
            error: texts.intern_opt(self.error.as_ref().map(|t| &*t.0)),
            hook,
            kind,
            outcome,
            modified: self.modified,
            band: band.map_or(ABSENT, |b| b as u8),
            fail_mode: fail_mode.map_or(ABSENT, |m| m as u8),
            failure: failure.map_or(ABSENT, |f| f as u8),
            contract: contract.map_or(ABSENT, Rule::as_u8),
            audit,
        })
    }
}

/// I14: a contract rule is named by the record of a modification that broke it, in warn mode
/// (an outcome record of a modified continue) or in strict mode (a `contract_violation`
/// failure record, which always names it); nowhere else.
fn check_contract(
    kind: RecordKind,
    modified: bool,
    failure: Option<FailureKind>,
    contract: bool,
) -> Result<(), String> {
    let violation = failure == Some(FailureKind::ContractViolation);
    match kind {
        RecordKind::Failure if violation && !contract => {
            Err("a contract_violation failure record needs contract".to_owned())
        }
        RecordKind::Failure if !violation && contract => {
            Err("only a contract_violation failure record has a contract".to_owned())
        }
        RecordKind::Outcome if contract && !modified => {
            Err("only a modified outcome record has a contract".to_owned())
        }
        RecordKind::Hook if contract => Err("a hook record has no contract".to_owned()),
        _ => Ok(()),
    }
}

/// An optional name that, when present, must be one of the known ones.
fn parse_opt<T>(
    text: Option<&Text<'_>>,
    what: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, String> {
    text.map(|t| parse(&t.0).ok_or_else(|| format!("unknown {what} {}", quote(&t.0))))
        .transpose()
}

/// A code within its bound, and an error that is a type name (I28): what no implementation
/// records is no trace line.
fn check_names(code: Option<&Text<'_>>, error: Option<&Text<'_>>) -> Result<(), String> {
    if let Some(code) = code {
        if !within(&code.0, MAX_TOKEN_CHARS) {
            return Err(format!(
                "invalid code: longer than {MAX_TOKEN_CHARS} characters (I28)"
            ));
        }
    }
    if let Some(error) = error {
        if !is_type_name(&error.0) {
            return Err(format!(
                "invalid error: a type name is ASCII identifiers joined by dots, at most \
                 {MAX_TYPE_NAME} characters (I28)"
            ));
        }
    }
    Ok(())
}

/// Which of the kind-dependent keys a line has.
#[allow(clippy::struct_excessive_bools)] // one flag per optional key, nothing more
struct Shape {
    middleware: bool,
    band: bool,
    failure: bool,
    error: bool,
    fail_mode: bool,
}

impl Shape {
    /// Middleware records need `middleware` and `band`; failure records also need `failure`,
    /// `error` and `fail_mode`; no record has a key that its kind does not list.
    fn check(&self, kind: RecordKind) -> Result<(), String> {
        let middleware_keys = kind != RecordKind::Hook;
        let failure_keys = kind == RecordKind::Failure;
        let keys = [
            ("middleware", self.middleware, middleware_keys),
            ("band", self.band, middleware_keys),
            ("failure", self.failure, failure_keys),
            ("error", self.error, failure_keys),
            ("fail_mode", self.fail_mode, failure_keys),
        ];
        let name = match kind {
            RecordKind::Outcome => "an outcome",
            RecordKind::Failure => "a failure",
            RecordKind::Hook => "a hook",
        };
        for (key, present, wanted) in keys {
            if wanted && !present {
                return Err(format!("a {name} record needs {key}"));
            }
            if present && !wanted {
                return Err(format!("a {name} record has no {key}"));
            }
        }
        Ok(())
    }
}

/// A failure record holds the outcome and code its fail mode resolves to (I8, rulings 11–12).
fn check_resolution(
    fail_mode: FailMode,
    failure: FailureKind,
    outcome: OutcomeKind,
    code: Option<&Text<'_>>,
) -> Result<(), String> {
    let resolved = resolve(fail_mode, failure);
    if resolved.outcome == outcome && resolved.code == code.map(|t| &*t.0) {
        return Ok(());
    }
    Err(format!(
        "a {} failure of a fail_mode {} middleware is recorded as {} with code {}",
        failure.as_str(),
        fail_mode.as_str(),
        resolved.outcome.as_str(),
        resolved.code.map_or_else(|| "none".to_owned(), quote),
    ))
}

/// Deserialising a view runs the same checks as reading a line.
impl<'de> Deserialize<'de> for RecordView {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut texts = Texts::new();
        let wire = Wire::deserialize(deserializer)?;
        let corr = wire
            .correlation(&Correlation::NONE)
            .map_err(serde::de::Error::custom)?;
        let warnings = wire.warnings().map_err(serde::de::Error::custom)?;
        let identities = wire.identities().map_err(serde::de::Error::custom)?;
        let record = wire
            .into_record(&mut texts)
            .map_err(serde::de::Error::custom)?;
        Ok(record
            .view_with(&corr)
            .with_warnings(warnings.as_ref())
            .with_identities(identities.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::symbol::intern;
    use crate::trace::tests::samples;

    fn trace_of(records: impl IntoIterator<Item = Record>) -> TraceBuf {
        let mut trace = TraceBuf::new();
        records.into_iter().for_each(|r| trace.push(r));
        trace
    }

    fn problem(text: &str) -> String {
        let error = from_jsonl_str(text).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidTrace);
        assert!(error.message.ends_with("(I8)"), "{}", error.message);
        error.message
    }

    const HOOK: &str =
        r#""emit":1,"hook":"task.end","kind":"hook","outcome":"continue","modified":false"#;
    const MW: &str = r#""emit":1,"hook":"task.end","middleware":"g","band":"app","modified":false"#;

    #[test]
    fn a_written_trace_reads_back_identical() {
        let trace = trace_of(samples());
        let back = from_jsonl_str(&trace.to_jsonl()).unwrap();
        assert_eq!(back.records(), trace.records());
        let back = TraceBuf::read_jsonl(trace.to_jsonl().as_bytes()).unwrap();
        assert_eq!(back.records(), trace.records());
    }

    #[test]
    fn the_emit_counter_goes_on_from_the_highest_emit_i8() {
        let mut back = from_jsonl_str(&trace_of(samples()).to_jsonl()).unwrap();
        assert_eq!(back.begin_emit(), 3);
        let text = format!("{{{}}}\n", HOOK.replace("\"emit\":1", "\"emit\":5"))
            + &format!("{{{HOOK}}}\n");
        assert_eq!(TraceBuf::from_jsonl_str(&text).unwrap().begin_emit(), 6);
        assert_eq!(from_jsonl_str("").unwrap().begin_emit(), 1);
    }

    #[test]
    fn blank_lines_are_skipped_and_errors_name_their_line() {
        let text = format!("\n{{{HOOK}}}\r\n  \t\n{{{HOOK},\"reason\":\"x\"}}\n");
        let message = problem(&text);
        assert!(
            message.starts_with("invalid trace line 4: unknown field `reason`"),
            "{message}"
        );
        assert_eq!(
            from_jsonl_str(&text.replace(",\"reason\":\"x\"", ""))
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn unknown_names_are_rejected_naming_the_value() {
        let hook = |from: &str, to: &str| format!("{{{}}}", HOOK.replace(from, to));
        let outcome =
            |extra: &str| format!("{{{MW},\"kind\":\"outcome\",\"outcome\":\"block\"{extra}}}");
        let failure = |extra: &str| {
            format!("{{{MW},\"kind\":\"failure\",\"outcome\":\"continue\",\"error\":\"E\"{extra}}}")
        };
        let cases = [
            (
                hook("task.end", "tool.around"),
                "unknown hook 'tool.around'",
            ),
            (hook("\"hook\",", "\"step\","), "unknown kind 'step'"),
            (hook("continue", "allow"), "unknown outcome 'allow'"),
            (outcome("").replace("app", "core"), "unknown band 'core'"),
            (
                failure(",\"failure\":\"crash\",\"fail_mode\":\"open\""),
                "unknown failure 'crash'",
            ),
            (
                failure(",\"failure\":\"timeout\",\"fail_mode\":\"ajar\""),
                "unknown fail_mode 'ajar'",
            ),
        ];
        for (line, expected) in cases {
            assert!(
                problem(&line).contains(expected),
                "{line}: {}",
                problem(&line)
            );
        }
        assert!(from_jsonl_str(&outcome("")).is_ok());
    }

    #[test]
    fn each_kind_has_exactly_its_keys_i8() {
        let cases = [
            (format!("{{{HOOK},\"middleware\":\"g\"}}"), "a hook record has no middleware"),
            (format!("{{{HOOK},\"band\":\"app\"}}"), "a hook record has no band"),
            (format!("{{{HOOK},\"error\":\"E\"}}"), "a hook record has no error"),
            (
                format!("{{{}}}", HOOK.replace("hook\",", "outcome\",")),
                "an outcome record needs middleware",
            ),
            (
                format!("{{{MW},\"kind\":\"outcome\",\"outcome\":\"continue\",\"failure\":\"timeout\"}}"),
                "an outcome record has no failure",
            ),
            (
                format!("{{{MW},\"kind\":\"failure\",\"outcome\":\"continue\",\"failure\":\"timeout\"}}"),
                "a failure record needs error",
            ),
        ];
        for (line, expected) in cases {
            let message = problem(&line);
            assert!(message.contains(expected), "{line}: {message}");
        }
    }

    #[test]
    fn failure_records_hold_their_resolution_rulings_11_12() {
        let line = |fail_mode: &str, outcome: &str, code: &str| {
            format!(
                "{{{MW},\"kind\":\"failure\",\"failure\":\"timeout\",\"error\":\"MiddlewareTimeout\",\
                 \"fail_mode\":\"{fail_mode}\",\"outcome\":\"{outcome}\"{code}}}"
            )
        };
        assert!(
            from_jsonl_str(&line("closed", "block", ",\"code\":\"middleware_timeout\"")).is_ok()
        );
        assert!(from_jsonl_str(&line("open", "continue", "")).is_ok());
        let message = problem(&line("closed", "block", ",\"code\":\"middleware_error\""));
        assert!(
            message.contains("recorded as block with code 'middleware_timeout'"),
            "{message}"
        );
        assert!(problem(&line("open", "block", ",\"code\":\"x\"")).contains("recorded as continue"));
    }

    #[test]
    fn outcome_fields_must_agree() {
        let modified = format!(
            "{{{}}}",
            HOOK.replace("continue\",\"modified\":false", "block\",\"modified\":true")
        );
        assert!(
            problem(&modified).contains("modified is true only for a continue, not for 'block'")
        );
        assert!(problem(&format!("{{{HOOK},\"code\":\"c\"}}")).contains("a continue has no code"));
        assert!(
            problem(&format!("{{{}}}", HOOK.replace("\"emit\":1", "\"emit\":0")))
                .contains("from 1")
        );
    }

    #[test]
    fn malformed_lines_are_errors() {
        for line in [
            "not json",
            "[1]",
            "{}",
            "{\"emit\":-1}",
            "{\"emit\":\"1\"}",
            "{}{}",
            "{\"emit\":1,",
        ] {
            assert!(
                problem(line).starts_with("invalid trace line 1: "),
                "{line}"
            );
        }
        let duplicate = format!("{{{HOOK},\"hook\":\"task.end\"}}");
        assert!(problem(&duplicate).contains("duplicate field `hook`"));
        assert!(problem(&format!("{{{HOOK}}}\n\u{0}")).starts_with("invalid trace line 2: "));
        let error = read_jsonl(&[b'{', 0xff, b'}', b'\n'][..]).unwrap_err();
        assert!(
            error.message.contains("line 1: cannot be read"),
            "{}",
            error.message
        );
    }

    #[test]
    fn timings_are_optional_and_escapes_are_read() {
        let trace = from_jsonl_str(&format!(
            "{{{}}}",
            HOOK.replace("task.end", "task\\u002eend")
        ))
        .unwrap();
        assert_eq!(trace.records()[0].hook, 7);
        assert_eq!(
            (trace.records()[0].t_ns, trace.records()[0].duration_ns),
            (0, 0)
        );
        let mut record = samples()[0];
        record.code = intern("quote\"back\\slash é");
        let back = from_jsonl_str(&trace_of([record]).to_jsonl()).unwrap();
        assert_eq!(back.records(), [record]);
    }

    #[test]
    fn record_views_deserialize_through_the_same_checks() {
        let view: RecordView = serde_json::from_str(&format!("{{{HOOK}}}")).unwrap();
        assert_eq!(
            (view.hook, view.kind, view.code),
            ("task.end", "hook", None)
        );
        assert!(
            serde_json::from_str::<RecordView>(&format!("{{{HOOK},\"band\":\"app\"}}")).is_err()
        );
        for record in samples() {
            let json = serde_json::to_string(&record.view()).unwrap();
            assert_eq!(
                serde_json::from_str::<RecordView>(&json).unwrap(),
                record.view()
            );
        }
    }

    #[test]
    fn correlations_are_read_and_round_trip_exactly_i21() {
        use crate::trace::tests::corr;
        let [outcome, failure, hook] = samples();
        let mut trace = TraceBuf::new();
        trace.extend_with(
            &[outcome, failure],
            &corr("run \u{e9}\"1", 0, Some("lookup")),
        );
        trace.extend_with(&[hook], &corr("run \u{e9}\"1", MAX_EMIT, None));
        trace.extend(&[hook]);
        trace.extend_with(&[hook], &corr("\u{fffd}", 2, Some("\u{fffd}x")));
        let text = trace.to_jsonl();
        let back = from_jsonl_str(&text).unwrap();
        assert_eq!(back.to_jsonl(), text);
        assert_eq!(back.records(), trace.records());
        assert_eq!(
            back.iter().collect::<Vec<_>>(),
            trace.iter().collect::<Vec<_>>()
        );
        // Rebuilt run-length, as they were recorded.
        assert_eq!(back.correlation_spans(), trace.correlation_spans());
        assert_eq!(back.correlation_spans(), 4);
        // Lines written before I21, without them, still read; null is absent like elsewhere.
        let old = from_jsonl_str(&format!(
            "{{{HOOK}}}\n{{{HOOK},\"run\":null,\"step\":null}}\n"
        ))
        .unwrap();
        assert_eq!(
            old.get(1).map(|v| (v.run, v.step, v.tool)),
            Some((None, None, None))
        );
        // Deserialising a view reads them too.
        let view: RecordView =
            serde_json::from_str(&format!("{{{HOOK},\"run\":\"r\",\"step\":3}}")).unwrap();
        assert_eq!((view.run.as_deref(), view.step), (Some("r"), Some(3)));
    }

    #[test]
    fn bad_correlations_are_rejected_naming_the_field_and_the_rule_i21() {
        let line = |extra: &str| format!("{{{HOOK},{extra}}}");
        for (extra, expected) in [
            (
                "\"step\":-1",
                "invalid step -1: a step is an integer from 0 to 9007199254740991 (I21)",
            ),
            (
                "\"step\":9007199254740992",
                "invalid step 9007199254740992: a step is an integer",
            ),
            ("\"step\":1.5", "invalid step 1.5: a step is an integer"),
            ("\"step\":3.0", "invalid step 3.0: a step is an integer"),
            ("\"step\":\"3\"", "invalid step \"3\": a step is an integer"),
            ("\"step\":true", "invalid step true: a step is an integer"),
            ("\"step\":[]", "invalid step []: a step is an integer"),
            (
                "\"run\":5",
                "invalid run 5: it is a string when present (I21)",
            ),
            (
                "\"run\":{}",
                "invalid run {}: it is a string when present (I21)",
            ),
            (
                "\"tool\":false",
                "invalid tool false: it is a string when present (I21)",
            ),
        ] {
            let message = problem(&line(extra));
            assert!(message.contains(expected), "{extra}: {message}");
            assert!(message.starts_with("invalid trace line 1: "), "{message}");
            assert!(serde_json::from_str::<RecordView>(&line(extra)).is_err());
        }
        assert!(from_jsonl_str(&line("\"step\":9007199254740991")).is_ok());
        assert!(from_jsonl_str(&line("\"step\":0,\"run\":\"\",\"tool\":\"\"")).is_ok());
        // Unknown keys stay rejected.
        assert!(problem(&line("\"runs\":\"r\"")).contains("unknown field `runs`"));
    }

    #[test]
    fn identities_are_read_only_where_i27_puts_them() {
        let id = format!("sha256:{}", "0123456789abcdef".repeat(4));
        let ids = |input: &str, enforced: &str| {
            format!(",\"input_identity\":{input},\"enforced_identity\":{enforced}")
        };
        let quoted = format!("\"{id}\"");
        for extra in [
            ids(&quoted, &quoted),
            ids("null", &quoted),
            ids(&quoted, "null"),
            ids("null", "null"),
        ] {
            let line = format!("{{{HOOK}{extra}}}\n");
            let back = from_jsonl_str(&line).unwrap();
            assert_eq!(
                back.to_jsonl().replace(",\"t_ns\":0,\"duration_ns\":0", ""),
                line
            );
            let view: RecordView = serde_json::from_str(&line).unwrap();
            assert!(view.input_identity.is_some() && view.enforced_identity.is_some());
        }
        let outcome = format!("{MW},\"kind\":\"outcome\",\"outcome\":\"continue\"");
        let upper = format!("\"{}\"", id.to_uppercase().replace("SHA256", "sha256"));
        let short = format!("\"{}\"", &id[..id.len() - 1]);
        for (line, expected) in [
            (
                format!("{{{HOOK},\"input_identity\":{quoted}}}"),
                "input_identity comes with enforced_identity (I27)",
            ),
            (
                format!("{{{HOOK},\"enforced_identity\":null}}"),
                "enforced_identity comes with input_identity (I27)",
            ),
            (
                format!("{{{outcome}{}}}", ids(&quoted, &quoted)),
                "only a hook record has input_identity and enforced_identity (I27)",
            ),
            (
                format!("{{{HOOK}{}}}", ids(&upper, &quoted)),
                "invalid input_identity \"sha256:0123456789ABCDEF",
            ),
            (
                format!("{{{HOOK}{}}}", ids(&quoted, &short)),
                "invalid enforced_identity",
            ),
            (
                format!("{{{HOOK}{}}}", ids("5", &quoted)),
                "invalid input_identity 5: an identity is null or 'sha256:' and 64 lowercase hex digits (I27)",
            ),
            (
                format!("{{{HOOK}{}}}", ids(&quoted, "\"sha256:\"")),
                "invalid enforced_identity \"sha256:\"",
            ),
            (
                format!("{{{HOOK}{}}}", ids(&quoted, "[]")),
                "invalid enforced_identity []",
            ),
        ] {
            let message = problem(&line);
            assert!(message.contains(expected), "{line}: {message}");
            assert!(serde_json::from_str::<RecordView>(&line).is_err(), "{line}");
        }
    }

    #[test]
    fn contracts_are_named_only_where_i14_puts_them() {
        let head = r#""emit":1,"hook":"tool.before","middleware":"g","band":"app""#;
        let warn = format!(
            "{{{head},\"kind\":\"outcome\",\"outcome\":\"continue\",\"modified\":true,\
             \"contract\":\"tool.before/tool_unchanged\"}}"
        );
        assert!(from_jsonl_str(&warn).is_ok(), "{warn}");
        for (line, problem) in [
            (
                warn.replace("tool_unchanged", "nope"),
                "unknown contract 'tool.before/nope'",
            ),
            (
                warn.replace("true", "false"),
                "only a modified outcome record has a contract",
            ),
            (
                format!(
                    "{{{head},\"kind\":\"failure\",\"outcome\":\"continue\",\"modified\":false,\
                     \"failure\":\"contract_violation\",\"error\":\"ContractViolation\",\
                     \"fail_mode\":\"open\"}}"
                ),
                "a contract_violation failure record needs contract",
            ),
        ] {
            let err = from_jsonl_str(&line).unwrap_err();
            assert!(err.message.contains(problem), "{}", err.message);
        }
    }
}
