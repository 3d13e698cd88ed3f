//! Content identity (I27), paired with `_pycore/identity.py`: the bus's identity scheme, the
//! domain an identity is defined on, and the identity itself.
//!
//! An identity is `sha256:` and the lowercase hex SHA-256 of the RFC 8785 (JCS) bytes of an
//! event's JSON form. The canonical form is the maintained library's (`serde_json_canonicalizer`,
//! which agrees with Python's `rfc8785`); the domain check is ours, because the libraries
//! differ on it: RFC 8785 serialises I-JSON only, so a number whose value is an integer beyond
//! 2^53 − 1 (held as an integer or as a float) has no identity. Non-finite numbers and lone
//! surrogates, the rest of the domain, cannot be in a `serde_json::Value`: the binding that
//! builds one reports those values as outside the domain itself.

use std::fmt;
use std::io;

use serde::{Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::error::{invalid_value, quote, Error, ErrorKind};

/// The largest integer magnitude inside the domain: 2^53 − 1, the last one every JSON reader
/// (and an IEEE double) holds exactly.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// What every identity's text starts with.
pub const PREFIX: &str = "sha256:";

/// A bus's content-identity scheme (I27). There is one; a bus without a scheme has `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdentityScheme {
    /// RFC 8785 canonical JSON, hashed with SHA-256.
    JcsSha256,
}

impl IdentityScheme {
    /// `jcs-sha256`, exactly; anything else is `invalid_identity` naming the value (I27).
    pub fn parse(text: &str) -> Result<IdentityScheme, Error> {
        match text {
            "jcs-sha256" => Ok(Self::JcsSha256),
            _ => Err(invalid_value(
                ErrorKind::InvalidIdentity,
                "identity scheme",
                &quote(text),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::JcsSha256 => "jcs-sha256",
        }
    }

    /// The identity of `value` under this scheme; `None` outside the domain.
    pub fn identity_of(self, value: &Value) -> Option<Identity> {
        match self {
            Self::JcsSha256 => jcs_sha256(value),
        }
    }
}

/// One identity: the SHA-256 digest, kept as its 32 bytes (a trace holds two per hook record,
/// so not as text), written as `sha256:` and 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity([u8; 32]);

impl Identity {
    /// The identity written as `text`: exactly `sha256:` and 64 lowercase hex digits, or `None`.
    pub fn parse(text: &str) -> Option<Identity> {
        let hex = text.strip_prefix(PREFIX)?.as_bytes();
        if hex.len() != 64 {
            return None;
        }
        let mut digest = [0u8; 32];
        for (byte, pair) in digest.iter_mut().zip(hex.chunks_exact(2)) {
            *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
        }
        Some(Identity(digest))
    }

    pub fn digest(&self) -> &[u8; 32] {
        &self.0
    }
}

/// The value of one lowercase hex digit (uppercase is not an identity's spelling).
fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 64];
        for (pair, byte) in text.chunks_exact_mut(2).zip(self.0) {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0xf)];
        }
        f.write_str(PREFIX)?;
        // Only ASCII hex digits were written.
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for Identity {
    fn serialize<S: Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        out.collect_str(self)
    }
}

/// The two identities of a hook record (I27): of the event the emit was given, and of the
/// event the chain left. Either is `None` when its event is outside the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Identities {
    pub input: Option<Identity>,
    pub enforced: Option<Identity>,
}

/// Whether `value` is inside the domain of I27: no number whose value is an integer of
/// magnitude above 2^53 − 1. (A `Value` holds no lone surrogate and no non-finite number.)
pub fn in_domain(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => true,
        Value::Number(number) => {
            if let Some(n) = number.as_u64() {
                n <= MAX_SAFE_INTEGER
            } else if let Some(n) = number.as_i64() {
                n.unsigned_abs() <= MAX_SAFE_INTEGER
            } else {
                // Every double of magnitude above 2^53 − 1 is an integer, so this is the
                // integral-float rule; a finite double below it is always inside.
                #[allow(clippy::cast_precision_loss)] // 2^53 − 1 is exact as a double
                let most = MAX_SAFE_INTEGER as f64;
                number
                    .as_f64()
                    .is_some_and(|n| n.is_finite() && n.abs() <= most)
            }
        }
        Value::Array(items) => items.iter().all(in_domain),
        Value::Object(map) => map.values().all(in_domain),
    }
}

/// The identity of `value` as text (`sha256:` + 64 lowercase hex digits), or `None` outside
/// the domain. Never an error.
pub fn identity(value: &Value) -> Option<String> {
    jcs_sha256(value).map(|id| id.to_string())
}

/// SHA-256 of the RFC 8785 bytes of `value`, fed to the hash as they are written.
fn jcs_sha256(value: &Value) -> Option<Identity> {
    if !in_domain(value) {
        return None;
    }
    let mut hasher = Hashing(Sha256::new());
    // A `Value` inside the domain always canonicalises; were it ever to fail, the identity is
    // unknown rather than an error.
    canonical::write(value, &mut hasher).ok()?;
    Some(Identity(hasher.0.finalize().into()))
}

/// The hash as a byte sink for the canonicaliser.
struct Hashing(Sha256);

impl io::Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// CONTRACT.md's golden value, computed with Python's `rfc8785` and this library alike.
    const GOLDEN: &str = r#"{"b":[1.0,1e21,-0.0,0.000001,1e-7,3.14],"a":"\u00e9\u0007","\ue000":1,"\ud83d\ude00":2}"#;

    #[test]
    fn the_canonical_form_and_its_hash_match_the_golden_value() {
        let value: Value = serde_json::from_str(GOLDEN).unwrap();
        let canonical = serde_json_canonicalizer::to_string(&value).unwrap();
        assert_eq!(
            canonical,
            "{\"a\":\"\u{e9}\\u0007\",\"b\":[1,1e+21,0,0.000001,1e-7,3.14],\"\u{1f600}\":2,\"\u{e000}\":1}"
        );
        // The hash of those bytes, through the streaming path the identity takes.
        let mut hasher = Hashing(Sha256::new());
        serde_json_canonicalizer::to_writer(&value, &mut hasher).unwrap();
        let digest = Identity(hasher.0.finalize().into());
        assert_eq!(
            digest.to_string(),
            "sha256:577eda756ff01d94c02915fb9c71837ed185759ad04b3adde8769534b97a923f"
        );
        // As an event's identity it has none: 1e21 is an integer beyond 2^53 − 1.
        assert_eq!(identity(&value), None);
    }

    #[test]
    fn identities_are_prefixed_lowercase_hex_sha256() {
        // SHA-256 of the canonical bytes `{"a":1}`.
        let expected = format!("{PREFIX}{}", hex_of(&Sha256::digest(b"{\"a\":1}")));
        assert_eq!(identity(&json!({"a": 1.0})), Some(expected.clone()));
        assert_eq!(identity(&json!({"a": 1})), Some(expected));
        // Key order does not matter; JCS sorts.
        assert_eq!(
            identity(&json!({"b": [true, null], "a": "x"})),
            identity(&serde_json::from_str(r#"{"a":"x","b":[true,null]}"#).unwrap())
        );
    }

    fn hex_of(bytes: &[u8]) -> String {
        use std::fmt::Write;
        bytes.iter().fold(String::new(), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
    }

    #[test]
    fn the_domain_ends_at_2_to_the_53_minus_1() {
        let max = MAX_SAFE_INTEGER;
        let cases: [(Value, bool); 12] = [
            (json!(max), true),
            (json!(max + 1), false),
            (json!(-i64::try_from(max).unwrap()), true),
            (json!(-i64::try_from(max).unwrap() - 1), false),
            (json!(u64::MAX), false),
            (json!(i64::MIN), false),
            (json!(1e21), false),
            (json!(-1e21), false),
            (json!(9_007_199_254_740_992.0), false),
            (json!(9_007_199_254_740_991.0), true),
            (json!(3.5), true),
            (json!(1e-300), true),
        ];
        for (value, inside) in cases {
            assert_eq!(in_domain(&value), inside, "{value}");
            assert_eq!(identity(&value).is_some(), inside, "{value}");
            // Deep inside a structure, the same.
            let nested = json!({"a": [{"b": value}]});
            assert_eq!(identity(&nested).is_some(), inside, "{nested}");
        }
    }

    #[test]
    fn identities_parse_back_from_their_text_only() {
        let id = jcs_sha256(&json!({"x": [1, 2]})).unwrap();
        let text = id.to_string();
        assert_eq!(text.len(), PREFIX.len() + 64);
        assert_eq!(Identity::parse(&text), Some(id));
        assert_eq!(format!("{id:?}"), text);
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{text}\""));
        let upper = format!("{PREFIX}{}", text[PREFIX.len()..].to_uppercase());
        for bad in [
            "",
            "sha256:",
            &text[..text.len() - 1],
            &format!("{text}0"),
            &text.replace("sha256:", "sha512:"),
            &text.replace("sha256:", "SHA256:"),
            &upper,
            &format!("{}g", &text[..text.len() - 1]),
            &format!(" {text}"),
        ] {
            assert_eq!(Identity::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_scheme_is_jcs_sha256_or_an_error_naming_the_value() {
        let scheme = IdentityScheme::parse("jcs-sha256").unwrap();
        assert_eq!(scheme, IdentityScheme::JcsSha256);
        assert_eq!(scheme.as_str(), "jcs-sha256");
        assert_eq!(
            scheme.identity_of(&json!(null)).map(|i| i.to_string()),
            identity(&json!(null))
        );
        let error = IdentityScheme::parse("sha256").unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidIdentity);
        assert_eq!(
            error.message,
            "invalid identity scheme 'sha256': the identity scheme is 'jcs-sha256', or None \
             for no identities (I27)"
        );
        for bad in ["", "JCS-SHA256", "jcs-sha256 ", "jcs_sha256"] {
            let error = IdentityScheme::parse(bad).unwrap_err();
            assert!(error.message.contains(&format!("'{bad}'")), "{error}");
        }
    }
}
