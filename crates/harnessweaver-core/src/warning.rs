//! Warnings an answer carries (I24): the bounds every implementation applies when the bus
//! takes an answer. Judging the value (a list of strings, no lone surrogate) is the binding's,
//! since only it sees the host language's values; what is kept is decided here.

use std::sync::Arc;

/// At most this many warnings of one answer are kept; later ones are dropped (I24).
pub const MAX_WARNINGS: usize = 8;

/// A warning longer than this many characters (Unicode code points) is cut (I24).
pub const MAX_WARNING_CHARS: usize = 256;

/// What ends a cut warning: U+2026, so the cut text is `MAX_WARNING_CHARS` long in all.
pub const CUT_MARK: char = '\u{2026}';

/// One answer's bounded warnings, shared between the trace and the result.
pub type Warnings = Arc<[Box<str>]>;

/// `text` within the length bound: as it is when it has at most [`MAX_WARNING_CHARS`]
/// characters, else its first 255 followed by [`CUT_MARK`]. `None` for the empty text, which
/// is dropped (I24).
pub fn bounded(text: &str) -> Option<Box<str>> {
    if text.is_empty() {
        return None;
    }
    if text.char_indices().nth(MAX_WARNING_CHARS).is_none() {
        return Some(text.into());
    }
    // The byte offset of the 256th character: keep the 255 before it, then the mark.
    let cut = text
        .char_indices()
        .nth(MAX_WARNING_CHARS - 1)
        .map_or(text.len(), |(at, _)| at);
    let mut kept = String::with_capacity(cut + CUT_MARK.len_utf8());
    kept.push_str(&text[..cut]);
    kept.push(CUT_MARK);
    Some(kept.into_boxed_str())
}

/// The warnings kept of an answer's texts, in their order (empty texts dropped, then at most
/// [`MAX_WARNINGS`], each [`bounded`]); `None` when none is kept.
pub fn keep<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<Warnings> {
    let kept: Vec<Box<str>> = texts
        .into_iter()
        .filter_map(bounded)
        .take(MAX_WARNINGS)
        .collect();
    (!kept.is_empty()).then(|| kept.into())
}

/// Whether `texts` are warnings a trace may hold (I24): 1 to [`MAX_WARNINGS`] texts of 1 to
/// [`MAX_WARNING_CHARS`] characters. A reader rejects anything else.
pub fn valid_in_trace(texts: &[Box<str>]) -> Result<(), String> {
    if texts.is_empty() || texts.len() > MAX_WARNINGS {
        return Err(format!(
            "warnings holds {} texts: 1 to {MAX_WARNINGS} when present (I24)",
            texts.len()
        ));
    }
    for text in texts {
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_WARNING_CHARS {
            return Err(format!(
                "a warning of {chars} characters: 1 to {MAX_WARNING_CHARS} (I24)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_kept_and_empty_ones_dropped_i24() {
        assert_eq!(bounded("careful").as_deref(), Some("careful"));
        assert_eq!(bounded(""), None);
        let exact = "é".repeat(MAX_WARNING_CHARS);
        assert_eq!(bounded(&exact).as_deref(), Some(exact.as_str()));
    }

    #[test]
    fn long_texts_are_cut_by_code_points_i24() {
        // Characters outside the BMP count one each, as in every implementation.
        let long = "😀".repeat(MAX_WARNING_CHARS + 1);
        let cut = bounded(&long).unwrap();
        assert_eq!(cut.chars().count(), MAX_WARNING_CHARS);
        assert!(cut.ends_with(CUT_MARK));
        assert_eq!(
            cut.chars().filter(|c| *c == '😀').count(),
            MAX_WARNING_CHARS - 1
        );
    }

    #[test]
    fn at_most_eight_are_kept_in_order_i24() {
        let texts: Vec<String> = (0..12).map(|i| format!("w{i}")).collect();
        let mut given: Vec<&str> = vec![""];
        given.extend(texts.iter().map(String::as_str));
        let kept = keep(given).unwrap();
        let kept: Vec<&str> = kept.iter().map(|t| &**t).collect();
        assert_eq!(kept, ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"]);
        assert!(keep(["", ""]).is_none());
        assert!(keep([]).is_none());
    }

    #[test]
    fn a_trace_holds_only_bounded_warnings_i24() {
        assert!(valid_in_trace(&["a".into()]).is_ok());
        assert!(valid_in_trace(&[]).is_err());
        assert!(valid_in_trace(&["".into()]).is_err());
        assert!(valid_in_trace(&vec!["a".into(); 9]).is_err());
        assert!(valid_in_trace(&["x".repeat(257).into()]).is_err());
    }
}
