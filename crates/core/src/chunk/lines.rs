//! The line chunker, and the line-packing engine every chunker uses to cut a span that is too big.
//!
//! Packing is greedy over lines: a piece grows while it stays within `max_lines` and `max_tokens`;
//! where it must end, it ends at the best boundary of the window (the highest score, the latest
//! such line — blank lines for text and code, headings and block starts for Markdown), never in
//! the first quarter of the window unless nothing better exists. Pieces after the first repeat up
//! to `overlap_lines` lines of the previous piece. A single line over the token limit (minified
//! code) is cut inside the line at a char boundary, so no piece is ever over the limit.
//!
//! Pieces never start or end with blank lines, and end at the last non-whitespace char of their
//! last line: blank separator lines belong to no piece.
use std::ops::Range;

use super::config::{count_chars, TokenCounter};
use super::{ChunkConfig, ChunkMetadata, ChunkType, Piece};

/// Cut `text` into `text-block` pieces (see the module docs).
pub fn chunk(text: &str, config: &ChunkConfig) -> Vec<Piece> {
    split_span(text, 0, text.len(), ChunkType::TextBlock, &ChunkMetadata::default(), config)
}

/// Cut the byte span `start..end` of `text` into pieces within `max_lines` and `max_tokens`,
/// preferring blank lines as boundaries, with `overlap_lines` lines of each piece repeated at the
/// start of the next (never into the first piece; recorded in `metadata.overlap_lines`). Every
/// piece gets `chunk_type` and a copy of `metadata`. A line longer than the token limit is cut
/// inside the line. Whitespace-only spans give no pieces.
///
/// `start` and `end` must be char boundaries with `start <= end <= text.len()`; `start` need not
/// be a line start (the first line then begins at `start`).
pub fn split_span(
    text: &str,
    start: usize,
    end: usize,
    chunk_type: ChunkType,
    metadata: &ChunkMetadata,
    config: &ChunkConfig,
) -> Vec<Piece> {
    if start >= end || end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return Vec::new();
    }
    let lines = line_table(text, start, end);
    pack(text, &lines, 0..lines.len(), config, |i| blank_score(&lines, i), |_| true)
        .into_iter()
        .map(|p| Piece {
            start_byte: p.start,
            end_byte: p.end,
            chunk_type,
            metadata: ChunkMetadata { overlap_lines: p.overlap_lines as u32, ..metadata.clone() },
        })
        .collect()
}

/// Boundary preference for text and code: start a piece after a blank line if possible.
fn blank_score(lines: &[Line], i: usize) -> u8 {
    if i > 0 && lines[i - 1].blank {
        2
    } else {
        1
    }
}

/// One line of a span. `start..end` is its content without the terminator (`\n`; a `\r` before
/// it is dropped too), `chars_*` count chars from the start of the table (terminators included).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
    pub blank: bool,
    pub chars_before: usize,
    pub chars_to_end: usize,
}

/// The lines of `text[start..end]`. A final `\n` does not open an empty line after it.
pub(crate) fn line_table(text: &str, start: usize, end: usize) -> Vec<Line> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity((end - start) / 32 + 1);
    let mut pos = start;
    let mut chars = 0;
    while pos < end {
        let (content_end, next) = match text[pos..end].find('\n') {
            Some(nl) => {
                let nl = pos + nl;
                let content_end = if nl > pos && bytes[nl - 1] == b'\r' { nl - 1 } else { nl };
                (content_end, nl + 1)
            }
            None => (end, end),
        };
        let content = &text[pos..content_end];
        let content_chars = count_chars(content.as_bytes());
        lines.push(Line {
            start: pos,
            end: content_end,
            blank: content.chars().all(char::is_whitespace),
            chars_before: chars,
            chars_to_end: chars + content_chars,
        });
        chars += content_chars + (next - content_end);
        pos = next;
    }
    lines
}

/// Decides whether a span fits `max_tokens`: exact prefix sums of chars for the default chars/4
/// counter (`ceil(c / 4) <= t` ⇔ `c <= 4t`), the configured counter otherwise.
pub(crate) struct Meter<'a> {
    custom: Option<&'a dyn TokenCounter>,
    max_tokens: usize,
    max_chars: usize,
}

impl<'a> Meter<'a> {
    pub fn new(config: &'a ChunkConfig) -> Self {
        let max_tokens = config.token_limit();
        Meter { custom: config.token_counter.custom(), max_tokens, max_chars: max_tokens.saturating_mul(4) }
    }

    /// Do lines `s..=j` fit?
    pub fn fits_lines(&self, text: &str, lines: &[Line], s: usize, j: usize) -> bool {
        match self.custom {
            None => lines[j].chars_to_end - lines[s].chars_before <= self.max_chars,
            Some(counter) => counter.count(&text[lines[s].start..lines[j].end]) <= self.max_tokens,
        }
    }

    /// Does `text[a..b]` fit?
    pub fn fits_bytes(&self, text: &str, a: usize, b: usize) -> bool {
        match self.custom {
            None => b - a <= self.max_chars || count_chars(&text.as_bytes()[a..b]) <= self.max_chars,
            Some(counter) => counter.count(&text[a..b]) <= self.max_tokens,
        }
    }

    /// The largest char boundary `b` in `a+1..=e` with `text[a..b]` fitting (at least one char,
    /// even when that char alone is over the limit). `a < e`, both char boundaries.
    fn max_fit(&self, text: &str, a: usize, e: usize) -> usize {
        let one_char = a + text[a..e].chars().next().map_or(1, char::len_utf8);
        if self.custom.is_none() {
            // Exactly `max_chars` chars, or the rest.
            return match text[a..e].char_indices().nth(self.max_chars) {
                Some((offset, _)) => (a + offset).max(one_char),
                None => e,
            };
        }
        if self.fits_bytes(text, a, e) {
            return e;
        }
        // Gallop from a guess of 4 bytes per token, then binary search between fit and no fit.
        let mut good = a;
        let mut bad = e;
        let mut step = self.max_chars.max(4);
        loop {
            let probe = ceil_boundary(text, a + step);
            if probe >= bad {
                break;
            }
            if self.fits_bytes(text, a, probe) {
                good = probe;
                step = step.saturating_mul(2);
            } else {
                bad = probe;
                break;
            }
        }
        while bad - good > 1 {
            let mid = ceil_boundary(text, good + (bad - good) / 2);
            if mid >= bad {
                break;
            }
            if self.fits_bytes(text, a, mid) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        good.max(one_char)
    }
}

/// The smallest char boundary at or after `i` (clamped to the text).
fn ceil_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A packed piece: byte span, the index of its first line that is not overlap, and how many lines
/// at its start repeat the previous piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Packed {
    pub start: usize,
    pub end: usize,
    pub first_new_line: usize,
    pub overlap_lines: usize,
}

/// Pack lines `range` of `lines` into pieces (see the module docs). `score(i)` is the preference
/// for starting a piece at line `i` (0: avoid, e.g. inside a fenced code block; higher is better);
/// `overlap_at(i)` says whether a piece starting at line `i` takes overlap from the previous one.
pub(crate) fn pack(
    text: &str,
    lines: &[Line],
    range: Range<usize>,
    config: &ChunkConfig,
    score: impl Fn(usize) -> u8,
    overlap_at: impl Fn(usize) -> bool,
) -> Vec<Packed> {
    let max_lines = config.line_limit();
    let overlap = config.overlap_limit();
    let meter = Meter::new(config);
    let n = range.end;
    let mut out = Vec::new();
    // First and last line of the previous whole-line piece (None after a cut inside a line).
    let mut prev: Option<(usize, usize)> = None;
    let mut i = range.start;
    loop {
        while i < n && lines[i].blank {
            i += 1;
        }
        if i >= n {
            break;
        }
        if !meter.fits_lines(text, lines, i, i) {
            split_long_line(text, &lines[i], i, &meter, &mut out);
            prev = None;
            i += 1;
            continue;
        }
        let s = match prev {
            Some((pf, pl)) if overlap > 0 && overlap_at(i) => {
                overlap_start(text, lines, &meter, pf, pl, i, overlap, max_lines)
            }
            _ => i,
        };
        // The largest window s..=j within both limits (fits(s, i) holds).
        let (mut lo, mut hi) = (i, (s + max_lines - 1).min(n - 1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if meter.fits_lines(text, lines, s, mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let j = lo;
        let next = if j + 1 >= n { n } else { best_cut(i, j, &score) };
        let mut last = next - 1;
        while lines[last].blank {
            last -= 1;
        }
        let line = &lines[last];
        let end = line.start + text[line.start..line.end].trim_end().len();
        let overlap_lines = match prev {
            Some((_, pl)) if s < i => pl + 1 - s,
            _ => 0,
        };
        out.push(Packed { start: lines[s].start, end, first_new_line: i, overlap_lines });
        prev = Some((s, last));
        i = next;
    }
    out
}

/// Where a piece whose first new line is `i` starts when it repeats up to `overlap` lines of the
/// previous piece `pf..=pl`: the most lines that keep the piece within both limits, never the
/// whole previous piece, never starting on a blank line.
#[allow(clippy::too_many_arguments)]
fn overlap_start(
    text: &str,
    lines: &[Line],
    meter: &Meter,
    pf: usize,
    pl: usize,
    i: usize,
    overlap: usize,
    max_lines: usize,
) -> usize {
    let mut k = overlap.min(pl - pf);
    while k > 0 {
        let mut s = pl + 1 - k;
        while lines[s].blank {
            s += 1;
        }
        if s <= pl && i - s < max_lines && meter.fits_lines(text, lines, s, i) {
            return s;
        }
        k -= 1;
    }
    i
}

/// The first line of the next piece when the window is lines `i..=j`: the best-scoring line in
/// the window's last three quarters (latest on ties), or anywhere in it if all of those are 0.
fn best_cut(i: usize, j: usize, score: &impl Fn(usize) -> u8) -> usize {
    let pick = |from: usize| {
        let mut best = (score(j + 1), j + 1);
        for c in (from..=j).rev() {
            let sc = score(c);
            if sc > best.0 {
                best = (sc, c);
            }
        }
        best
    };
    let guarded = pick(i + 1 + (j - i) / 4);
    if guarded.0 > 0 {
        return guarded.1;
    }
    pick(i + 1).1
}

/// Cut one line that is over the token limit into pieces inside the line, preferring to cut after
/// a space or punctuation in the last quarter of each piece.
fn split_long_line(text: &str, line: &Line, index: usize, meter: &Meter, out: &mut Vec<Packed>) {
    let e = line.start + text[line.start..line.end].trim_end().len();
    let skip_ws = |a: usize| e - text[a..e].trim_start().len();
    let mut a = skip_ws(line.start);
    while a < e {
        let b = meter.max_fit(text, a, e);
        let mut cut = b;
        if b < e {
            let floor = a + (b - a) * 3 / 4;
            let bytes = text.as_bytes();
            if let Some(p) = (floor + 1..=b)
                .rev()
                .find(|&p| matches!(bytes[p - 1], b' ' | b'\t' | b';' | b',' | b')' | b'}' | b']' | b'>'))
            {
                cut = p;
            }
        }
        let end = a + text[a..cut].trim_end().len();
        if end > a {
            out.push(Packed { start: a, end, first_new_line: index, overlap_lines: 0 });
        }
        a = skip_ws(cut);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn spans<'a>(text: &'a str, pieces: &[Piece]) -> Vec<&'a str> {
        pieces.iter().map(|p| &text[p.start_byte..p.end_byte]).collect()
    }

    #[test]
    fn small_text_is_one_trimmed_piece() {
        let text = "\n\nhello\nworld  \n\n\n";
        let pieces = chunk(text, &ChunkConfig::default());
        assert_eq!(spans(text, &pieces), ["hello\nworld"]);
        assert!(chunk("", &ChunkConfig::default()).is_empty());
        assert!(chunk(" \n\t\n", &ChunkConfig::default()).is_empty());
    }

    #[test]
    fn prefers_blank_lines_and_overlaps() {
        let text = "a1\na2\na3\n\nb1\nb2\nb3\nb4\n";
        let config = ChunkConfig { max_lines: 6, overlap_lines: 1, ..ChunkConfig::default() };
        let pieces = chunk(text, &config);
        assert_eq!(spans(text, &pieces), ["a1\na2\na3", "a3\n\nb1\nb2\nb3\nb4"]);
        assert_eq!(pieces[0].metadata.overlap_lines, 0);
        assert_eq!(pieces[1].metadata.overlap_lines, 1);
    }

    #[test]
    fn no_overlap_when_disabled() {
        let text: String = (0..25).map(|i| format!("line {i}\n")).collect();
        let config = ChunkConfig { max_lines: 10, overlap_lines: 0, ..ChunkConfig::default() };
        let pieces = chunk(&text, &config);
        assert_eq!(pieces.len(), 3);
        assert!(pieces.windows(2).all(|w| w[0].end_byte < w[1].start_byte));
    }

    #[test]
    fn long_line_is_cut_inside_the_line() {
        let text = format!("short\n{}\nafter\n", "var x=1;".repeat(3000));
        let config = ChunkConfig::default();
        let pieces = chunk(&text, &config);
        assert!(pieces.len() > 3);
        for p in &pieces {
            assert!(config.count_tokens(&text[p.start_byte..p.end_byte]) <= config.max_tokens);
        }
        assert_eq!(&text[pieces[0].start_byte..pieces[0].end_byte], "short");
        assert_eq!(&text[pieces.last().unwrap().start_byte..pieces.last().unwrap().end_byte], "after");
        // Cut after a `;`, not inside a statement.
        assert!(text[pieces[1].start_byte..pieces[1].end_byte].ends_with(';'));
    }

    #[test]
    fn multibyte_long_line_cuts_on_char_boundaries() {
        let text = "日本語のテキスト".repeat(2000);
        let config = ChunkConfig { max_tokens: 100, ..ChunkConfig::default() };
        let pieces = chunk(&text, &config);
        assert!(pieces.len() > 1);
        for p in &pieces {
            assert!(text.is_char_boundary(p.start_byte) && text.is_char_boundary(p.end_byte));
            assert!(config.count_tokens(&text[p.start_byte..p.end_byte]) <= 100);
        }
    }

    #[test]
    fn split_span_of_a_sub_range_keeps_type_and_metadata() {
        let text = "head\n    fn a() {\n        x();\n    }\n\n    fn b() {}\ntail";
        let start = text.find("    fn a").unwrap();
        let end = text.find("\ntail").unwrap();
        let meta = ChunkMetadata { symbol_name: Some("m".into()), ..ChunkMetadata::default() };
        let config = ChunkConfig { max_lines: 3, overlap_lines: 0, ..ChunkConfig::default() };
        let pieces = split_span(text, start, end, ChunkType::CodeImpl, &meta, &config);
        assert_eq!(spans(text, &pieces), ["    fn a() {\n        x();\n    }", "    fn b() {}"]);
        assert!(pieces.iter().all(|p| p.chunk_type == ChunkType::CodeImpl));
        assert!(pieces.iter().all(|p| p.metadata.symbol_name.as_deref() == Some("m")));
    }

    struct Words;
    impl TokenCounter for Words {
        fn count(&self, text: &str) -> usize {
            text.split_whitespace().count()
        }
    }

    #[test]
    fn custom_token_counter_is_respected() {
        let text = "one two three four five six seven eight nine ten ".repeat(50);
        let config = ChunkConfig { max_tokens: 30, ..ChunkConfig::default() }
            .with_token_counter(std::sync::Arc::new(Words));
        let pieces = chunk(&text, &config);
        assert!(pieces.len() >= 17);
        for p in &pieces {
            assert!(config.count_tokens(&text[p.start_byte..p.end_byte]) <= 30);
        }
    }
}
