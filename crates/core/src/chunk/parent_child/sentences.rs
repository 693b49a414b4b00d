//! Sentence units: the document cut at sentence ends and line ends into spans that tile it.
//!
//! A unit ends after `.`, `!` or `?` (with any run of them and closing quotes or brackets)
//! followed by whitespace or the end of the text, after `。`, `！` or `？` (no space needed), and
//! at every line end. It keeps the whitespace that follows it up to and including the last line
//! break of that run, so the units concatenate back to the text exactly and every line start is a
//! unit start. No cut is made:
//! - after a known abbreviation (`e.g.`, `Dr.`, `z.B.`, `т.е.` …) or a single capital initial (`J.`);
//! - inside a decimal or a URL (their dots are not followed by whitespace);
//! - inside inline code (between backticks on one line).
//!
//! A unit longer than `max_chars` is cut at its last space before the limit (or at the limit when
//! it has none in its second half), so no unit — and hence no child — exceeds the child maximum.
use std::ops::Range;

use crate::chunk::config::count_chars;

/// Abbreviations (lowercase, without the final dot) after which a `.` does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "cf", "vs", "al", "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "nr", "fig", "figs",
    "eq", "approx", "inc", "ltd", "corp", "dept", "vol", "pp", "resp", "z.b", "d.h", "u.a", "bzw", "usw",
    "ggf", "vgl", "ca", "sog", "т.е", "т.д", "т.п", "др", "см", "гг", "стр",
];

/// Byte spans of the units of `text` (see the module docs). Empty for a whitespace-only text.
pub fn split(text: &str, max_chars: usize) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Range<usize>> = Vec::with_capacity(text.len() / 64 + 1);
    let mut start = 0usize;
    let mut in_code = false;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        let cut = match b {
            b'\n' => {
                in_code = false;
                Some(i)
            }
            b'`' => {
                in_code = !in_code;
                None
            }
            b'.' | b'!' | b'?' if !in_code => sentence_end(text, i),
            0xE3 | 0xEF if !in_code => cjk_end(text, i),
            _ => None,
        };
        let Some(after) = cut else {
            i += 1;
            continue;
        };
        let end = absorb_whitespace(bytes, after);
        if end == bytes.len() || text[start..end].trim().is_empty() {
            // A leading whitespace-only span joins the next unit; the tail joins the last one.
            if end == bytes.len() {
                break;
            }
        } else {
            out.push(start..end);
            start = end;
        }
        in_code = in_code && !text[after..end].contains('\n');
        i = end.max(i + 1);
    }
    if start < bytes.len() {
        if text[start..].trim().is_empty() {
            match out.last_mut() {
                Some(last) => last.end = bytes.len(),
                None => return Vec::new(),
            }
        } else {
            out.push(start..bytes.len());
        }
    }
    cap(text, out, max_chars.max(1))
}

/// After the punctuation at `i` (ASCII `.!?`): the byte after the sentence end, if it is one.
fn sentence_end(text: &str, i: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut j = i;
    while j < bytes.len() && matches!(bytes[j], b'.' | b'!' | b'?') {
        j += 1;
    }
    j = skip_closers(text, j);
    if j < bytes.len() && !bytes[j].is_ascii_whitespace() {
        return None;
    }
    if bytes[i] == b'.' && j - i == 1 && is_abbreviation(text, i) {
        return None;
    }
    Some(j)
}

/// `。` (E3 80 82), `！` (EF BC 81), `？` (EF BC 9F): the byte after the sentence end.
fn cjk_end(text: &str, i: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let is_end = |k: usize| {
        bytes
            .get(k..k + 3)
            .is_some_and(|s| s == [0xE3, 0x80, 0x82] || s == [0xEF, 0xBC, 0x81] || s == [0xEF, 0xBC, 0x9F])
    };
    if !is_end(i) {
        return None;
    }
    let mut j = i + 3;
    while is_end(j) {
        j += 3;
    }
    Some(skip_closers(text, j))
}

/// Closing quotes and brackets that belong to the sentence before them.
fn skip_closers(text: &str, mut j: usize) -> usize {
    while let Some(c) = text[j..].chars().next() {
        if matches!(c, '"' | '\'' | ')' | ']' | '}' | '»' | '”' | '’' | '」' | '』' | '）' | '*' | '_')
        {
            j += c.len_utf8();
        } else {
            break;
        }
    }
    j
}

/// Whether the word ending at the `.` at `dot` is an abbreviation or an initial.
fn is_abbreviation(text: &str, dot: usize) -> bool {
    let before = &text[..dot];
    let word_start = before
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '.'))
        .map_or(0, |(k, c)| k + c.len_utf8());
    let word = &before[word_start..];
    if word.is_empty() {
        return false;
    }
    let mut chars = word.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_uppercase() {
            return true;
        }
    }
    let lower = word.to_lowercase();
    ABBREVIATIONS.contains(&lower.as_str())
}

/// The end of the whitespace run at `from`: after its last line break, or after the run when it
/// has none (the indentation of the next line belongs to that line's unit).
fn absorb_whitespace(bytes: &[u8], from: usize) -> usize {
    let mut j = from;
    let mut last_break = None;
    while j < bytes.len() && bytes[j].is_ascii_whitespace() {
        if bytes[j] == b'\n' {
            last_break = Some(j + 1);
        }
        j += 1;
    }
    match last_break {
        Some(k) if j < bytes.len() => k,
        _ => j,
    }
}

/// Cuts units over `max_chars` chars: at the last space in the second half of the window, else at
/// the char limit.
fn cap(text: &str, units: Vec<Range<usize>>, max_chars: usize) -> Vec<Range<usize>> {
    if units.iter().all(|u| u.end - u.start <= max_chars) {
        return units;
    }
    let mut out = Vec::with_capacity(units.len() + 4);
    for u in units {
        let mut s = u.start;
        while count_chars(&text.as_bytes()[s..u.end]) > max_chars {
            let limit = text[s..u.end].char_indices().nth(max_chars).map_or(u.end, |(k, _)| s + k);
            let half = text[s..limit].char_indices().nth(max_chars / 2).map_or(limit, |(k, _)| s + k);
            let cut = text[half..limit].rfind(' ').map_or(limit, |k| half + k + 1);
            out.push(s..cut);
            s = cut;
        }
        if s < u.end {
            out.push(s..u.end);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn units(text: &str) -> Vec<&str> {
        split(text, 400).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn sentences_and_lines_tile_the_text() {
        let text = "One. Two! Three?\nFour\n\nFive.";
        assert_eq!(units(text), ["One. ", "Two! ", "Three?\n", "Four\n\n", "Five."]);
    }

    #[test]
    fn abbreviations_decimals_urls_and_inline_code_do_not_end_sentences() {
        assert_eq!(units("See e.g. the docs. Done."), ["See e.g. the docs. ", "Done."]);
        assert_eq!(units("Pi is 3.14 today. Yes."), ["Pi is 3.14 today. ", "Yes."]);
        assert_eq!(units("Ask Dr. Who and J. Smith. Ok."), ["Ask Dr. Who and J. Smith. ", "Ok."]);
        assert_eq!(
            units("Visit https://example.com/a.b?c=d. Then go."),
            ["Visit https://example.com/a.b?c=d. ", "Then go."]
        );
        assert_eq!(units("Call `a. b! c?` now. Next."), ["Call `a. b! c?` now. ", "Next."]);
        assert_eq!(units("Das ist z.B. gut. Ja."), ["Das ist z.B. gut. ", "Ja."]);
    }

    #[test]
    fn cjk_punctuation_needs_no_space() {
        assert_eq!(units("你好。今天很好！真的吗？是的"), ["你好。", "今天很好！", "真的吗？", "是的"]);
        assert_eq!(units("「終わり。」次"), ["「終わり。」", "次"]);
    }

    #[test]
    fn quotes_runs_and_whitespace() {
        assert_eq!(
            units("He said \"stop.\" Then left... Bye?!  End"),
            ["He said \"stop.\" ", "Then left... ", "Bye?!  ", "End"]
        );
        assert_eq!(units("\n\n  Lead. Tail.  \n\n"), ["\n\n  Lead. ", "Tail.  \n\n"]);
        assert_eq!(units("a\n  b"), ["a\n", "  b"]);
        assert!(units(" \n\t ").is_empty());
    }

    #[test]
    fn long_units_are_capped_at_a_space() {
        let text = format!("{} end.", "word ".repeat(200));
        let parts = split(&text, 100);
        assert!(parts.len() > 1);
        assert_eq!(parts.first().unwrap().start, 0);
        assert_eq!(parts.last().unwrap().end, text.len());
        for w in parts.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        for p in &parts {
            assert!(text[p.clone()].chars().count() <= 100);
        }
        assert!(text[parts[0].clone()].ends_with(' '));
        let cjk = "字".repeat(250);
        assert!(split(&cjk, 100).iter().all(|r| cjk[r.clone()].chars().count() <= 100));
    }
}
