//! Markdown chunker: sections by heading, on pulldown-cmark's block structure (never regex, so a
//! `#` line inside a fenced code block or front matter is not a heading).
//!
//! - Every top-level heading of level ≤ `markdown_split_depth` (default 2: H1 and H2) starts a
//!   chunk; deeper headings stay inside their parent's chunk. Content before the first
//!   such heading (front matter included) is a chunk of its own.
//! - Every chunk carries `heading_path` (breadcrumbs from the top heading down to the innermost
//!   heading in force at its start); `symbol_name` / `heading_level` are that innermost heading.
//! - A section over `max_lines` / `max_tokens` is cut by [`super::lines`]' packer with Markdown
//!   boundary scores: deeper headings first (H3 over H4 …), then block starts (paragraphs, lists,
//!   code blocks), then blank lines, then any line; never inside a fenced code block, front matter,
//!   HTML block or table when a cut elsewhere exists. Pieces of a cut section take `overlap_lines`,
//!   except those starting at a heading.
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::lines::{line_table, pack, Line};
use super::{ChunkConfig, ChunkMetadata, ChunkType, Piece};

/// Boundary scores (preference for starting a piece at a line).
pub(crate) const INSIDE_BLOCK: u8 = 0;
const ANY_LINE: u8 = 1;
pub(crate) const AFTER_BLANK: u8 = 2;
const BLOCK_START: u8 = 3;
/// A heading of level `h` scores `HEADING_BASE - h` (H1 = 9 … H6 = 4).
pub(crate) const HEADING_BASE: u8 = 10;

/// A top-level heading.
#[derive(Debug, Clone)]
pub(crate) struct Heading {
    pub line: usize,
    pub level: u8,
    pub text: String,
}

/// Cut Markdown `text` into `markdown-section` pieces (see the module docs).
pub fn chunk(text: &str, config: &ChunkConfig) -> Vec<Piece> {
    let lines = line_table(text, 0, text.len());
    if lines.iter().all(|l| l.blank) {
        return Vec::new();
    }
    let (headings, scores) = outline(text, &lines);
    let depth = config.markdown_split_depth;
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(headings.iter().filter(|h| h.level <= depth && h.line > 0).map(|h| h.line));
    bounds.push(lines.len());

    let mut pieces = Vec::new();
    let mut trail = Breadcrumbs::default();
    let mut next_heading = 0;
    for section in bounds.windows(2) {
        let packed = pack(
            text,
            &lines,
            section[0]..section[1],
            config,
            |i| scores[i],
            |i| scores[i] < HEADING_BASE - 6,
        );
        for p in packed {
            while next_heading < headings.len() && headings[next_heading].line <= p.first_new_line {
                trail.enter(&headings[next_heading]);
                next_heading += 1;
            }
            let mut metadata = trail.metadata();
            metadata.overlap_lines = p.overlap_lines as u32;
            pieces.push(Piece {
                start_byte: p.start,
                end_byte: p.end,
                chunk_type: ChunkType::MarkdownSection,
                metadata,
            });
        }
    }
    pieces
}

/// The headings in force at a point of the document.
#[derive(Default)]
struct Breadcrumbs(Vec<(u8, String)>);

impl Breadcrumbs {
    fn enter(&mut self, h: &Heading) {
        while self.0.last().is_some_and(|(level, _)| *level >= h.level) {
            self.0.pop();
        }
        self.0.push((h.level, h.text.clone()));
    }

    fn metadata(&self) -> ChunkMetadata {
        let mut m = ChunkMetadata::default();
        if let Some((level, text)) = self.0.last() {
            m.heading_level = Some(*level);
            m.symbol_name = Some(text.clone()).filter(|t| !t.is_empty());
            m.heading_path = self.0.iter().map(|(_, t)| t.clone()).collect();
        }
        m
    }
}

/// Top-level headings and the boundary score of every line.
pub(crate) fn outline(text: &str, lines: &[Line]) -> (Vec<Heading>, Vec<u8>) {
    let line_of = |byte: usize| lines.partition_point(|l| l.start <= byte).saturating_sub(1);
    let mut scores: Vec<u8> =
        (0..lines.len()).map(|i| if i > 0 && lines[i - 1].blank { AFTER_BLANK } else { ANY_LINE }).collect();
    let mut atomic: Vec<(usize, usize)> = Vec::new();
    let mut headings = Vec::new();
    let mut current: Option<Heading> = None;
    let mut depth = 0usize;
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    let line = line_of(range.start);
                    scores[line] = scores[line].max(BLOCK_START);
                    match tag {
                        Tag::Heading { level, .. } => {
                            let level = level as u8;
                            scores[line] = HEADING_BASE - level;
                            current = Some(Heading { line, level, text: String::new() });
                        }
                        Tag::CodeBlock(_) | Tag::MetadataBlock(_) | Tag::HtmlBlock | Tag::Table(_) => {
                            atomic.push((line, line_of(range.end.saturating_sub(1).max(range.start))));
                        }
                        _ => {}
                    }
                }
                depth += 1;
            }
            Event::End(tag) => {
                depth = depth.saturating_sub(1);
                if depth == 0 && matches!(tag, TagEnd::Heading(_)) {
                    if let Some(mut h) = current.take() {
                        h.text = h.text.split_whitespace().collect::<Vec<_>>().join(" ");
                        headings.push(h);
                    }
                }
            }
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                if let Some(h) = current.as_mut() {
                    h.text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = current.as_mut() {
                    h.text.push(' ');
                }
            }
            Event::Rule if depth == 0 => {
                let line = line_of(range.start);
                scores[line] = scores[line].max(BLOCK_START);
            }
            _ => {}
        }
    }
    for (first, last) in atomic {
        for score in &mut scores[first + 1..=last.min(lines.len() - 1)] {
            *score = INSIDE_BLOCK;
        }
    }
    (headings, scores)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lines_of(text: &str, pieces: &[Piece]) -> Vec<(usize, usize)> {
        let line = |b: usize| 1 + text[..b].matches('\n').count();
        pieces.iter().map(|p| (line(p.start_byte), line(p.end_byte - 1))).collect()
    }

    #[test]
    fn hash_lines_in_code_and_front_matter_are_not_headings() {
        let text = "---\ntitle: x\n# not a heading\n---\n\nIntro\n\n```sh\n# comment\n## also not\n```\n\n## Real\n\nBody\n";
        let pieces = chunk(text, &ChunkConfig::default());
        assert_eq!(lines_of(text, &pieces), [(1, 11), (13, 15)]);
        assert_eq!(pieces[0].metadata, ChunkMetadata::default());
        assert_eq!(pieces[1].metadata.symbol_name.as_deref(), Some("Real"));
    }

    #[test]
    fn setext_headings_and_breadcrumbs() {
        let text = "Title\n=====\n\nIntro.\n\nPart *one*\n----------\n\nText.\n";
        let pieces = chunk(text, &ChunkConfig::default());
        assert_eq!(lines_of(text, &pieces), [(1, 4), (6, 9)]);
        assert_eq!(pieces[1].metadata.heading_path, ["Title", "Part one"]);
        assert_eq!(pieces[1].metadata.heading_level, Some(2));
    }

    #[test]
    fn split_depth_is_configurable() {
        let text = "# A\n\n## B\n\n### C\n\ntext\n";
        let deep = ChunkConfig { markdown_split_depth: 3, ..ChunkConfig::default() };
        assert_eq!(lines_of(text, &chunk(text, &deep)), [(1, 1), (3, 3), (5, 7)]);
        let shallow = ChunkConfig { markdown_split_depth: 1, ..ChunkConfig::default() };
        assert_eq!(lines_of(text, &chunk(text, &shallow)), [(1, 7)]);
    }

    #[test]
    fn oversize_section_splits_at_deeper_headings_first() {
        let mut text = String::from("## Big\n\nintro\n\n");
        for sub in 0..4 {
            text.push_str(&format!("### Sub {sub}\n\n"));
            for i in 0..6 {
                text.push_str(&format!("para {sub}.{i}\n\n"));
            }
        }
        let config = ChunkConfig { max_lines: 30, ..ChunkConfig::default() };
        let pieces = chunk(&text, &config);
        assert!(pieces.len() >= 2);
        for p in &pieces[1..] {
            assert!(text[p.start_byte..].starts_with("### Sub"), "{:?}", &text[p.start_byte..p.end_byte]);
            assert_eq!(p.metadata.overlap_lines, 0);
            assert_eq!(p.metadata.heading_path[0], "Big");
        }
    }

    #[test]
    fn fenced_code_is_not_cut_when_avoidable() {
        let mut text = String::from("## Code\n\nSome text.\n\n```rust\n");
        for i in 0..20 {
            text.push_str(&format!("let x{i} = {i};\n\n"));
        }
        text.push_str("```\n\nAfter.\n");
        let config = ChunkConfig { max_lines: 45, overlap_lines: 0, ..ChunkConfig::default() };
        let pieces = chunk(&text, &config);
        let fence = text.find("```rust").unwrap();
        let fence_end = text.rfind("```").unwrap();
        for p in &pieces {
            let inside = |b: usize| b > fence && b < fence_end;
            assert!(!(inside(p.start_byte) || (inside(p.end_byte) && p.start_byte < fence)), "{p:?}");
        }
    }
}
