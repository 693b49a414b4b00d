//! No wasted slots: one answer never holds the same lines twice.
//!
//! Matches of one file whose returned lines overlap or touch (adjacent lines, or consecutive
//! chunks with only blank lines between them) become one match, at the place and score of the
//! better one, covering both spans; a match whose lines another already covers is
//! dropped. A symbol's plan chunk (its rendered description) and the code it describes are one
//! answer: the code is kept, at the better of the two places.
//!
//! Texts are joined line by line, so a merge needs both texts to be exactly their line spans
//! (chunks and parent/child windows are); two partly overlapping matches whose texts are not are
//! left apart.
use std::collections::HashMap;

use edgerag_core::ChunkType;

use crate::candidate::{Candidate, SnippetOverride};

/// Which matches of a file [`merge`] folds together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Overlapping lines only.
    Overlap,
    /// Overlapping or adjacent lines.
    Adjacent,
    /// Overlapping, adjacent, or consecutive chunks with only blank lines between them.
    Consecutive,
}

/// Merge the matches of each file that `reach` joins, keeping the list's order (each merged match
/// sits where the better of its parts was). Returns how many matches were folded in.
pub fn merge(candidates: &mut Vec<Candidate>, touching: Reach) -> usize {
    let before = candidates.len();
    let mut kept: Vec<Candidate> = Vec::with_capacity(before);
    // (namespace, path) → indexes into `kept`.
    let mut by_file: HashMap<(String, String), Vec<usize>> = HashMap::new();
    // The span a folded match now lives in, for the neighbours that name it as their origin.
    let mut moved: HashMap<String, String> = HashMap::new();
    for c in candidates.drain(..) {
        let key = (c.record.namespace.clone(), c.record.chunk.path.clone());
        let slots = by_file.entry(key).or_default();
        let mut absorbed = false;
        for &i in slots.iter() {
            if let Some(merged) = join(&kept[i], &c, touching) {
                let now = span_of(&merged).to_string();
                for part in [span_of(&kept[i]), span_of(&c)] {
                    if part != now {
                        moved.insert(part.to_string(), now.clone());
                    }
                }
                kept[i] = merged;
                absorbed = true;
                break;
            }
        }
        if !absorbed {
            slots.push(kept.len());
            kept.push(c);
        }
    }
    if !moved.is_empty() {
        for c in kept.iter_mut() {
            let Some(mut origin) = c.neighbor_of.clone() else { continue };
            // Follow a chain of folds (bounded: each step is one fold of this pass).
            for _ in 0..moved.len() {
                match moved.get(&origin) {
                    Some(next) => origin = next.clone(),
                    None => break,
                }
            }
            c.neighbor_of = (origin != span_of(c)).then_some(origin);
        }
    }
    // A merge can make a kept match reach another one of its file: repeat until stable (rare, and
    // each pass only shrinks the list).
    let folded = before - kept.len();
    *candidates = kept;
    if folded > 0 && has_overlap(candidates, touching) {
        return folded + merge(candidates, touching);
    }
    folded
}

fn span_of(c: &Candidate) -> &str {
    &c.record.chunk.metadata.span_hash
}

fn has_overlap(candidates: &[Candidate], touching: Reach) -> bool {
    // Touching reaches the next line, or over a few blank lines to the next chunk (a pass too many
    // only finds nothing to fold).
    let reach = match touching {
        Reach::Overlap => 0,
        Reach::Adjacent => 1,
        Reach::Consecutive => MAX_BLANK_GAP + 1,
    };
    let mut by_file: HashMap<(&str, &str), Vec<(u32, u32)>> = HashMap::new();
    for c in candidates.iter().filter(|c| is_code(c)) {
        let spans = by_file.entry((&c.record.namespace, &c.record.chunk.path)).or_default();
        let (s, e) = c.lines();
        if spans.iter().any(|&(a, b)| s <= b.saturating_add(reach) && a <= e.saturating_add(reach)) {
            return true;
        }
        spans.push((s, e));
    }
    false
}

/// Prose (Markdown sections, text blocks) has its own dedup: a parent comes back once, as a window
/// of its children (`parent_child`); only code spans are merged here.
fn is_code(c: &Candidate) -> bool {
    !matches!(c.record.chunk.chunk_type, ChunkType::MarkdownSection | ChunkType::TextBlock)
        || !matches!(c.record.chunk.language, edgerag_core::Language::Text | edgerag_core::Language::Markdown)
}

fn is_plan(c: &Candidate) -> bool {
    c.record.chunk.chunk_type == ChunkType::SymbolPlan
}

/// Whether texts can be joined by line: a plan chunk's description never is.
fn line_exact(c: &Candidate) -> bool {
    !is_plan(c) && c.text_is_its_lines()
}

/// At most this many lines between two consecutive chunks of a file for them to count as touching.
const MAX_BLANK_GAP: u32 = 3;

/// Whether `a` and `b` are consecutive chunks of one file (as stored, not windows of them) with
/// at most [`MAX_BLANK_GAP`] lines between them: every non-whitespace character of a file is in
/// some chunk, so those lines are blank, and the two read as one span.
fn blank_between(a: &Candidate, b: &Candidate) -> bool {
    if a.snippet.is_some() || b.snippet.is_some() || !line_exact(a) || !line_exact(b) {
        return false;
    }
    let (first, second) =
        if a.record.chunk.chunk_index < b.record.chunk.chunk_index { (a, b) } else { (b, a) };
    let (f, s) = (&first.record.chunk, &second.record.chunk);
    s.chunk_index == f.chunk_index + 1
        && s.start_line > f.end_line
        && s.start_line - f.end_line - 1 <= MAX_BLANK_GAP
}

/// `better` (earlier in the list) and `other` as one match, or `None` when they stay apart. The
/// result is a direct match when either part is (a neighbour folded into its match stays the
/// match), with the higher score.
fn join(better: &Candidate, other: &Candidate, touching: Reach) -> Option<Candidate> {
    let mut merged = join_spans(better, other, touching)?;
    let direct = [better, other].into_iter().find(|c| c.neighbor_of.is_none());
    if let Some(lead) = direct.filter(|_| merged.neighbor_of.is_some()) {
        merged.neighbor_of = None;
        merged.trace = lead.trace.clone();
        merged.sub_query = lead.sub_query;
    }
    merged.score = better.score.max(other.score);
    Some(merged)
}

fn join_spans(better: &Candidate, other: &Candidate, touching: Reach) -> Option<Candidate> {
    if !is_code(better) || !is_code(other) {
        return None;
    }
    let (a1, a2) = better.lines();
    let (b1, b2) = other.lines();
    let overlap = b1 <= a2 && a1 <= b2;
    let adjacent = b1 == a2.saturating_add(1) || a1 == b2.saturating_add(1);
    let touch = match touching {
        Reach::Overlap => false,
        Reach::Adjacent => adjacent,
        Reach::Consecutive => adjacent || blank_between(better, other),
    };
    if !overlap && !touch {
        return None;
    }
    match (is_plan(better), is_plan(other)) {
        // A plan and its code (or two plans of one span): the code, at the better place.
        (true, false) if overlap => return Some(Candidate { score: better.score, ..other.clone() }),
        (false, true) | (true, true) if overlap => return Some(better.clone()),
        (true, _) | (_, true) => return None,
        _ => {}
    }
    if a1 <= b1 && b2 <= a2 {
        return Some(better.clone());
    }
    if b1 <= a1 && a2 <= b2 {
        return Some(Candidate {
            score: better.score,
            trace: better.trace.clone(),
            sub_query: better.sub_query,
            ..other.clone()
        });
    }
    if !line_exact(better) || !line_exact(other) {
        return None;
    }
    let (first, second) = if a1 <= b1 { (better, other) } else { (other, better) };
    let (f1, f2) = first.lines();
    let (_, s2) = second.lines();
    let second_text = second.text();
    let skip = (f2 + 1).saturating_sub(second.lines().0) as usize;
    let mut text = first.text().strip_suffix('\n').unwrap_or(first.text()).to_string();
    // Consecutive chunks: the lines between them hold only whitespace (the chunker's coverage
    // invariant), shown as empty lines.
    for _ in f2 + 1..second.lines().0 {
        text.push('\n');
    }
    for line in second_text.strip_suffix('\n').unwrap_or(second_text).split('\n').skip(skip) {
        text.push('\n');
        text.push_str(line);
    }
    if first.text().ends_with('\n') || second_text.ends_with('\n') {
        text.push('\n');
    }
    let parent = |c: &Candidate| c.snippet.as_ref().map(|s| s.parent_symbol.clone());
    let symbol = parent(better)
        .or_else(|| parent(other))
        .or_else(|| better.record.chunk.metadata.symbol_name.clone())
        .unwrap_or_default();
    let chars = text.chars().count() as u32;
    Some(Candidate {
        snippet: Some(SnippetOverride {
            text,
            start_line: f1,
            end_line: f2.max(s2),
            parent_symbol: symbol,
            parent_id: None,
            parent_chars: chars,
            raw_score: better.score,
            is_context_window: better.snippet.as_ref().is_some_and(|s| s.is_context_window),
        }),
        ..better.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{chunk_at, record};

    fn at(path: &str, start: u32, lines: u32, score: f32) -> Candidate {
        let text: String = (start..start + lines).map(|l| format!("line {l}\n")).collect();
        Candidate::new(
            record("repo:t/t", chunk_at(path, ChunkType::CodeFunction, &text, start, start)),
            score,
        )
    }

    fn spans(cs: &[Candidate]) -> Vec<(String, u32, u32)> {
        cs.iter().map(|c| (c.record.chunk.path.clone(), c.lines().0, c.lines().1)).collect()
    }

    #[test]
    fn a_contained_span_is_dropped_and_the_better_place_kept() {
        let mut cs = vec![at("a.rs", 130, 21, 0.9), at("b.rs", 1, 5, 0.8), at("a.rs", 129, 22, 0.7)];
        assert_eq!(merge(&mut cs, Reach::Adjacent), 1);
        assert_eq!(spans(&cs), [("a.rs".into(), 129, 150), ("b.rs".into(), 1, 5)]);
        assert_eq!(cs[0].score, 0.9);
        assert_eq!(cs[0].text(), at("a.rs", 129, 22, 0.0).text());
    }

    #[test]
    fn overlapping_and_touching_spans_are_joined_line_by_line() {
        let mut cs = vec![at("a.rs", 10, 5, 0.9), at("a.rs", 13, 5, 0.8), at("a.rs", 18, 2, 0.7)];
        assert_eq!(merge(&mut cs, Reach::Adjacent), 2);
        assert_eq!(spans(&cs), [("a.rs".into(), 10, 19)]);
        assert_eq!(cs[0].text(), at("a.rs", 10, 10, 0.0).text());
        assert_eq!(cs[0].score, 0.9);
    }

    #[test]
    fn a_later_merge_that_reaches_an_earlier_match_folds_again() {
        // 1-3 and 7-9 are apart until 4-6 joins them.
        let mut cs = vec![at("a.rs", 1, 3, 0.9), at("a.rs", 7, 3, 0.8), at("a.rs", 4, 3, 0.7)];
        merge(&mut cs, Reach::Adjacent);
        assert_eq!(spans(&cs), [("a.rs".into(), 1, 9)]);
        assert_eq!(cs[0].text(), at("a.rs", 1, 9, 0.0).text());
    }

    fn chunk(path: &str, start: u32, lines: u32, index: u32, score: f32) -> Candidate {
        let text: String = (start..start + lines).map(|l| format!("line {l}\n")).collect();
        Candidate::new(
            record("repo:t/t", chunk_at(path, ChunkType::CodeFunction, &text, start, index)),
            score,
        )
    }

    #[test]
    fn consecutive_chunks_with_blank_lines_between_read_as_one_span() {
        // Chunks 4 and 5 of a file, two blank lines apart; chunk 7 is three lines after chunk 5
        // but chunk 6 (not in the answer) may hold those lines: it stays apart.
        let mut cs =
            vec![chunk("a.rs", 10, 5, 4, 0.9), chunk("a.rs", 17, 3, 5, 0.5), chunk("a.rs", 23, 2, 7, 0.4)];
        assert_eq!(merge(&mut cs, Reach::Consecutive), 1);
        assert_eq!(spans(&cs), [("a.rs".into(), 10, 19), ("a.rs".into(), 23, 24)]);
        assert_eq!(
            cs[0].text(),
            "line 10\nline 11\nline 12\nline 13\nline 14\n\n\nline 17\nline 18\nline 19\n"
        );
        assert!(cs[0].text_is_its_lines());
        assert_eq!(cs[0].score, 0.9);
        // Too far apart, or only adjacent lines asked: apart.
        let mut far = vec![chunk("a.rs", 10, 5, 4, 0.9), chunk("a.rs", 19, 3, 5, 0.5)];
        assert_eq!(merge(&mut far, Reach::Consecutive), 0);
        let mut plain = vec![chunk("a.rs", 10, 5, 4, 0.9), chunk("a.rs", 17, 3, 5, 0.5)];
        assert_eq!(merge(&mut plain, Reach::Adjacent), 0);
    }

    #[test]
    fn a_neighbour_follows_its_origin_into_the_span_it_was_folded_into() {
        // b (lines 15-19) is folded into a (10-16); c is b's neighbour and must now name a.
        let a = at("a.rs", 10, 7, 0.9);
        let b = at("a.rs", 15, 5, 0.8);
        let mut c = at("a.rs", 40, 3, 0.5);
        c.neighbor_of = Some(span_of(&b).to_string());
        let mut cs = vec![a.clone(), b, c];
        assert_eq!(merge(&mut cs, Reach::Overlap), 1);
        assert_eq!(cs[1].neighbor_of.as_deref(), Some(span_of(&a)));
    }

    #[test]
    fn without_touching_only_overlaps_merge() {
        let mut cs = vec![at("a.rs", 10, 5, 0.9), at("a.rs", 15, 5, 0.8), at("a.rs", 12, 2, 0.7)];
        assert_eq!(merge(&mut cs, Reach::Overlap), 1);
        assert_eq!(spans(&cs), [("a.rs".into(), 10, 14), ("a.rs".into(), 15, 19)]);
    }

    #[test]
    fn a_neighbour_folded_into_its_match_keeps_the_match() {
        let mut neighbour = at("a.rs", 10, 5, 0.4);
        neighbour.neighbor_of = Some("span".into());
        let mut cs = vec![neighbour, at("a.rs", 12, 5, 0.9)];
        assert_eq!(merge(&mut cs, Reach::Overlap), 1);
        assert_eq!(cs[0].neighbor_of, None);
        assert_eq!(cs[0].score, 0.9);
        assert_eq!(spans(&cs), [("a.rs".into(), 10, 16)]);
    }

    #[test]
    fn prose_is_left_to_parent_child() {
        let prose = |start: u32| {
            let text: String = (start..start + 3).map(|l| format!("line {l}\n")).collect();
            Candidate::new(
                record("repo:t/t", chunk_at("a.md", ChunkType::MarkdownSection, &text, start, start)),
                0.5,
            )
        };
        let mut cs = vec![prose(1), prose(2)];
        assert_eq!(merge(&mut cs, Reach::Adjacent), 0);
    }

    #[test]
    fn other_files_and_gaps_stay_apart() {
        let mut cs = vec![at("a.rs", 1, 3, 0.9), at("b.rs", 1, 3, 0.8), at("a.rs", 5, 3, 0.7)];
        assert_eq!(merge(&mut cs, Reach::Adjacent), 0);
        assert_eq!(cs.len(), 3);
    }

    #[test]
    fn a_plan_chunk_and_its_code_are_one_answer_the_code() {
        let code = at("a.rs", 635, 4, 0.5);
        let mut plan = at("a.rs", 636, 3, 0.9);
        plan.record.chunk.chunk_type = ChunkType::SymbolPlan;
        plan.record.chunk.text = "function foo in a.rs: does things".into();
        let mut cs = vec![plan, code];
        assert_eq!(merge(&mut cs, Reach::Adjacent), 1);
        assert_eq!(cs[0].record.chunk.chunk_type, ChunkType::CodeFunction);
        assert_eq!(cs[0].score, 0.9);
        assert_eq!(spans(&cs), [("a.rs".into(), 635, 638)]);
    }

    #[test]
    fn texts_that_are_not_their_lines_are_not_spliced() {
        let mut a = at("a.rs", 10, 5, 0.9);
        a.record.chunk.text = "a summary, not the lines".into();
        let mut cs = vec![a, at("a.rs", 13, 5, 0.8)];
        assert_eq!(merge(&mut cs, Reach::Adjacent), 0);
    }
}
