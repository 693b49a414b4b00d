//! Parents: the natural blocks of a document, sized.
//!
//! - Markdown: a block is a section (it starts at any heading, with the heading path in force);
//!   a *chapter* starts at a heading of level ≤ `chapterHeadingDepth` (default 1, so a document
//!   with one H1 title is one chapter). Content before the first chapter heading is a chapter.
//! - Plain text: a block is a paragraph (it starts after a blank line); the whole document is one
//!   chapter.
//!
//! Blocks over `maxParentSize` are split: at paragraph (or heading) boundaries first — the least
//! similar one in the window — then at semantic cliffs between sentences; never inside a fenced
//! code block, table or HTML block when another cut fits. Blocks under `minParentSize` merge with
//! their smaller neighbour **within the chapter**; when the two together exceed the maximum they
//! are re-split into two pieces within bounds. With `maxParentSize ≥ 2·minParentSize +
//! maxChildSize` every parent is then within bounds, except a chapter smaller than the minimum,
//! which is one parent.
use std::ops::Range;

use super::cliffs::{prefix_sums, split_run};
use super::ParentChildConfig;
use crate::chunk::lines::line_table;
use crate::chunk::markdown::{outline, AFTER_BLANK, HEADING_BASE, INSIDE_BLOCK};
use crate::lang::Language;

/// How good a unit start is as a parent boundary.
pub(crate) const TIER_INSIDE_BLOCK: u8 = 0;
pub(crate) const TIER_SENTENCE: u8 = 1;
pub(crate) const TIER_PARAGRAPH: u8 = 2;
pub(crate) const TIER_HEADING: u8 = 3;

/// What the document structure says about each unit start.
#[derive(Debug, Clone, Default)]
pub(crate) struct Structure {
    pub tier: Vec<u8>,
    /// The unit starts a natural block (section or paragraph).
    pub block_start: Vec<bool>,
    /// The unit starts a chapter (unit 0 always does).
    pub chapter_start: Vec<bool>,
    /// Index into `paths` of the heading path in force at the unit's start.
    pub path_of: Vec<usize>,
    pub paths: Vec<Vec<String>>,
}

/// A parent before bookkeeping: its units, its chapter, its heading path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParentSpan {
    pub units: Range<usize>,
    pub chapter: u32,
    pub path: usize,
}

/// Reads the structure of `text` for its `units` (see [`super::sentences::split`]).
pub(crate) fn structure(
    text: &str,
    language: Language,
    units: &[Range<usize>],
    chapter_depth: u8,
) -> Structure {
    let n = units.len();
    let mut s = Structure {
        tier: vec![TIER_SENTENCE; n],
        block_start: vec![false; n],
        chapter_start: vec![false; n],
        path_of: vec![0; n],
        paths: vec![Vec::new()],
    };
    if n == 0 {
        return s;
    }
    let bytes = text.as_bytes();
    let lines = line_table(text, 0, text.len());
    let line_of = |byte: usize| lines.partition_point(|l| l.start <= byte).saturating_sub(1);
    let at_line_start = |byte: usize| byte == 0 || bytes[byte - 1] == b'\n';
    // The line a unit's content is on (the first unit may open with blank lines).
    let content_line = |u: &Range<usize>| {
        let lead = bytes[u.clone()].iter().take_while(|b| b.is_ascii_whitespace()).count();
        line_of((u.start + lead).min(u.end.saturating_sub(1)))
    };
    if language == Language::Markdown {
        let (headings, scores) = outline(text, &lines);
        let mut next = 0;
        let mut stack: Vec<(u8, String)> = Vec::new();
        for (u, unit) in units.iter().enumerate() {
            if !at_line_start(unit.start) {
                s.path_of[u] = s.paths.len() - 1;
                continue;
            }
            let line = content_line(unit);
            let score = scores[line];
            s.tier[u] = match score {
                INSIDE_BLOCK => TIER_INSIDE_BLOCK,
                x if x >= HEADING_BASE - 6 => TIER_HEADING,
                x if x >= AFTER_BLANK => TIER_PARAGRAPH,
                _ => TIER_SENTENCE,
            };
            let mut entered = false;
            while next < headings.len() && headings[next].line <= line {
                let h = &headings[next];
                if h.line == line {
                    s.block_start[u] = true;
                    s.chapter_start[u] |= h.level <= chapter_depth;
                }
                while stack.last().is_some_and(|(level, _)| *level >= h.level) {
                    stack.pop();
                }
                stack.push((h.level, h.text.clone()));
                entered = true;
                next += 1;
            }
            if entered {
                s.paths.push(stack.iter().map(|(_, t)| t.clone()).collect());
            }
            s.path_of[u] = s.paths.len() - 1;
        }
    } else {
        for (u, unit) in units.iter().enumerate() {
            if at_line_start(unit.start) {
                let line = content_line(unit);
                if line > 0 && lines[line - 1].blank {
                    s.tier[u] = TIER_PARAGRAPH;
                    s.block_start[u] = true;
                }
            }
        }
    }
    s.chapter_start[0] = true;
    s.block_start[0] = true;
    s
}

/// The parents of a document whose units have `sizes` (chars), similarities `sims` and
/// `structure`, in order, covering every unit.
pub(crate) fn parents(
    sizes: &[usize],
    sims: &[f32],
    structure: &Structure,
    config: &ParentChildConfig,
) -> Vec<ParentSpan> {
    let n = sizes.len();
    let prefix = prefix_sums(sizes);
    let (min, max) = (config.min_parent_size, config.max_parent_size);
    // Paragraph and heading boundaries first, then the least similar sentence boundary; a cut
    // inside a fenced block last.
    let cost = |k: usize, _piece: usize| -> f32 {
        let tier = structure.tier[k];
        let rank = if tier >= TIER_PARAGRAPH {
            0.0
        } else if tier == TIER_SENTENCE {
            4.0
        } else {
            8.0
        };
        rank + sims[k - 1]
    };
    let mut out = Vec::new();
    let mut chapter = 0u32;
    let mut c = 0;
    while c < n {
        let mut end = c + 1;
        while end < n && !structure.chapter_start[end] {
            end += 1;
        }
        let mut pieces: Vec<Range<usize>> = Vec::new();
        let mut b = c;
        while b < end {
            let mut e = b + 1;
            while e < end && !structure.block_start[e] {
                e += 1;
            }
            if prefix[e] - prefix[b] > max {
                pieces.extend(split_run(&prefix, b..e, min, max, cost));
            } else {
                pieces.push(b..e);
            }
            b = e;
        }
        merge_small(&mut pieces, &prefix, min, max, cost);
        for units in pieces {
            let path = structure.path_of[units.start];
            out.push(ParentSpan { units, chapter, path });
        }
        chapter += 1;
        c = end;
    }
    out
}

/// Merges pieces under `min` with their smaller neighbour (all pieces are in one chapter); two
/// that together exceed `max` are re-split within bounds.
fn merge_small(
    pieces: &mut Vec<Range<usize>>,
    prefix: &[usize],
    min: usize,
    max: usize,
    cost: impl Fn(usize, usize) -> f32 + Copy,
) {
    let size = |r: &Range<usize>| prefix[r.end] - prefix[r.start];
    let mut budget = 4 * pieces.len() + 8;
    let mut i = 0;
    while i < pieces.len() && pieces.len() > 1 && budget > 0 {
        if size(&pieces[i]) >= min {
            i += 1;
            continue;
        }
        budget -= 1;
        let j = match (i.checked_sub(1), (i + 1 < pieces.len()).then_some(i + 1)) {
            (Some(p), Some(q)) => {
                if size(&pieces[p]) <= size(&pieces[q]) {
                    p
                } else {
                    q
                }
            }
            (Some(p), None) => p,
            (None, Some(q)) => q,
            (None, None) => break,
        };
        let (a, b) = (i.min(j), i.max(j));
        let span = pieces[a].start..pieces[b].end;
        let replacement =
            if size(&span) <= max { vec![span] } else { split_run(prefix, span, min, max, cost) };
        pieces.splice(a..=b, replacement);
        i = a;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::chunk::parent_child::sentences;

    fn plan(text: &str, language: Language) -> (Vec<Range<usize>>, Vec<ParentSpan>, Structure) {
        let units = sentences::split(text, 400);
        let st = structure(text, language, &units, 1);
        let sizes: Vec<usize> = units.iter().map(|u| text[u.clone()].chars().count()).collect();
        let sims = vec![0.5; sizes.len().saturating_sub(1)];
        let ps = parents(&sizes, &sims, &st, &ParentChildConfig::default());
        (units, ps, st)
    }

    #[test]
    fn markdown_sections_paths_and_chapters() {
        let para = "Words about the topic go here and continue for a while. ".repeat(4);
        let text = format!("# One\n\n{para}\n\n## Sub\n\n{para}\n\n# Two\n\nShort.\n");
        let (units, ps, st) = plan(&text, Language::Markdown);
        let texts: Vec<&str> =
            ps.iter().map(|p| &text[units[p.units.start].start..units[p.units.end - 1].end]).collect();
        assert_eq!(ps.len(), 3, "{texts:#?}");
        assert!(texts[1].starts_with("## Sub"));
        assert_eq!(st.paths[ps[1].path], ["One", "Sub"]);
        assert_eq!((ps[0].chapter, ps[1].chapter, ps[2].chapter), (0, 0, 1));
        // The short last chapter stays alone (never merged across chapters).
        assert_eq!(texts[2], "# Two\n\nShort.\n");
    }

    #[test]
    fn small_sections_merge_within_a_chapter() {
        let text = "# A\n\n## x\n\nTiny.\n\n## y\n\nTiny too.\n\n## z\n\nAlso tiny.\n";
        let (_, ps, _) = plan(text, Language::Markdown);
        assert_eq!(ps.len(), 1);
    }

    #[test]
    fn big_plain_text_splits_at_paragraphs() {
        let para = "A sentence that fills the paragraph with words. ".repeat(8);
        let text = format!("{para}\n\n{para}\n\n{para}\n\n{para}\n");
        let (units, ps, _) = plan(&text, Language::Text);
        assert!(ps.len() >= 2);
        for p in &ps[1..] {
            let start = units[p.units.start].start;
            assert!(text[..start].ends_with("\n\n"), "parent does not start at a paragraph");
        }
    }
}
