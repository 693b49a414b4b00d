//! Parent/child retrieval ("retrieve small, return big"), on edgerag's chunks: a chunk
//! cut out of a larger definition (it has `parent_symbol`) is a child; its parent is the whole
//! definition, rebuilt from the family of chunks sharing that `parent_symbol` in the file.
//!
//! - each parent is returned once, for its best-scoring child;
//! - scores are normalized by size: `raw × sqrt(avgSize / size)` (avg over the returned results,
//!   size = the returned text: the parent, or its window) so large parents do not win just by
//!   being large;
//! - a parent larger than the context window is returned as a window of whole lines around the
//!   matched child (the window always contains the child).
//!
//! Chunks without a parent are their own parent (document-level results).
//!
//! [`prose`] applies the same rules to documents chunked into parents and children by
//! `edgerag_core::chunk::parent_child` (children found by search, parents returned), sharing
//! [`grow_window`] and [`normalize_scores`].
use std::collections::HashMap;

pub mod prose;

use crate::candidate::{sort_by_score, Candidate, SnippetOverride};
use crate::ports::{ChunkRecord, SymbolFamily};

/// The families to read for the candidates.
pub fn families(candidates: &[Candidate]) -> Vec<SymbolFamily> {
    let mut out: Vec<SymbolFamily> = Vec::new();
    for c in candidates {
        if let Some(symbol) = &c.record.chunk.metadata.parent_symbol {
            let f = SymbolFamily {
                namespace: c.record.namespace.clone(),
                path: c.record.chunk.path.clone(),
                symbol: symbol.clone(),
            };
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Lines between two members that are taken as the blank lines between definitions.
const MAX_BLANK_RUN: u32 = 2;

/// A parent rebuilt from its chunks: lines `start_line..=end_line` and their text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParentDoc {
    pub start_line: u32,
    pub end_line: u32,
    /// One entry per line.
    pub lines: Vec<String>,
    /// Per line: whether a fetched chunk holds it (or it lies in a run of at most two lines between
    /// two that do: the blank lines between definitions). A parent whose members are not contiguous (Go
    /// methods of one receiver spread over a file, or a family fetched only in part) has lines
    /// nobody read; they are never returned as if they were its text.
    pub known: Vec<bool>,
}

impl ParentDoc {
    pub fn chars(&self) -> usize {
        self.lines.iter().map(|l| l.chars().count() + 1).sum()
    }

    /// Rebuild from chunks (any order; overlapping lines taken once).
    pub fn from_chunks(chunks: &[&ChunkRecord]) -> Option<ParentDoc> {
        let mut sorted: Vec<&&ChunkRecord> = chunks.iter().collect();
        sorted.sort_by_key(|r| (r.chunk.start_line, r.chunk.chunk_index));
        let start_line = sorted.first()?.chunk.start_line;
        let mut lines: Vec<String> = Vec::new();
        let mut known: Vec<bool> = Vec::new();
        let mut next_line = start_line;
        for r in sorted {
            for (i, line) in r.chunk.text.lines().enumerate() {
                let n = r.chunk.start_line + i as u32;
                if n >= next_line {
                    // A gap between chunks (should not happen) is kept as empty lines.
                    // The blank line or two between definitions is not in any chunk; a longer
                    // run of lines nobody read is a gap.
                    let short = n - next_line <= MAX_BLANK_RUN;
                    while next_line < n {
                        lines.push(String::new());
                        known.push(short);
                        next_line += 1;
                    }
                    lines.push(line.to_string());
                    known.push(true);
                    next_line = n + 1;
                }
            }
        }
        Some(ParentDoc { start_line, end_line: next_line.saturating_sub(1).max(start_line), lines, known })
    }

    /// Whether some of its lines were not read (see [`ParentDoc::known`]).
    pub fn has_gaps(&self) -> bool {
        self.known.iter().any(|k| !k)
    }

    /// Whole lines around `child_start..=child_end` within `window` characters (the child is
    /// always included, even if it alone is larger); a window never reaches over a line that was
    /// not read.
    pub fn window(&self, child_start: u32, child_end: u32, window: usize) -> (u32, u32, String) {
        let last = self.lines.len().saturating_sub(1);
        let idx = |line: u32| (line.saturating_sub(self.start_line) as usize).min(last);
        let sizes: Vec<usize> = self
            .lines
            .iter()
            .zip(&self.known)
            .map(|(l, &known)| if known { l.chars().count() + 1 } else { usize::MAX })
            .collect();
        let (lo, hi) = grow_window(&sizes, idx(child_start), idx(child_end.max(child_start)), window);
        (self.start_line + lo as u32, self.start_line + hi as u32, self.lines[lo..=hi].join("\n"))
    }
}

/// Grows the run of units `lo..=hi` (the match) by whole units, one on each side in turn, while
/// the total size stays within `window`; the match itself is always kept, even when larger.
/// Shared by code parents (units are lines) and prose parents (units are children).
pub fn grow_window(sizes: &[usize], mut lo: usize, mut hi: usize, window: usize) -> (usize, usize) {
    let last = sizes.len().saturating_sub(1);
    let mut used: usize = sizes[lo..=hi].iter().fold(0, |a: usize, &b| a.saturating_add(b));
    loop {
        let mut grew = false;
        if lo > 0 && used.saturating_add(sizes[lo - 1]) <= window {
            lo -= 1;
            used = used.saturating_add(sizes[lo]);
            grew = true;
        }
        if hi < last && used.saturating_add(sizes[hi + 1]) <= window {
            hi += 1;
            used = used.saturating_add(sizes[hi]);
            grew = true;
        }
        if !grew {
            return (lo, hi);
        }
    }
}

/// Size normalization: `score × sqrt(avgSize / size)`, the average taken over the given results,
/// so a large parent does not win only by being large. Shared by code and prose parents.
pub fn normalize_scores<'a>(items: impl IntoIterator<Item = (&'a mut f32, usize)>) {
    let items: Vec<(&mut f32, usize)> = items.into_iter().map(|(s, size)| (s, size.max(1))).collect();
    if items.is_empty() {
        return;
    }
    let avg = items.iter().map(|(_, size)| *size).sum::<usize>() as f32 / items.len() as f32;
    for (score, size) in items {
        *score *= (avg / size as f32).sqrt();
    }
}

/// Collapse children into parents. `fetched` holds the families' chunks.
///
/// A parent that fits the context window is returned whole, once, for its best child; later
/// children of it are dropped (they are inside). A larger parent is returned as windows: a child
/// already inside an earlier window of its parent is dropped, one outside gets its own window (so
/// a second relevant method of a big class is not lost).
/// Returns the new list (sorted by normalized score when normalizing) and how many children were
/// merged away.
pub fn apply(
    candidates: Vec<Candidate>,
    fetched: &[ChunkRecord],
    normalize: bool,
    window_chars: usize,
) -> (Vec<Candidate>, usize) {
    let total = candidates.len();
    // Parent key → line spans already returned for it.
    let mut returned: HashMap<(String, String, String), Vec<(u32, u32)>> = HashMap::new();
    let mut out: Vec<Candidate> = Vec::with_capacity(total);
    let mut sizes: Vec<usize> = Vec::with_capacity(total);
    for mut c in candidates {
        let chunk = &c.record.chunk;
        let Some(parent) = chunk.metadata.parent_symbol.clone() else {
            sizes.push(chunk.text.chars().count().max(1));
            out.push(c);
            continue;
        };
        let key = (c.record.namespace.clone(), chunk.path.clone(), parent.clone());
        let spans = returned.entry(key).or_default();
        if spans.iter().any(|(s, e)| *s <= chunk.start_line && *e >= chunk.end_line) {
            continue;
        }
        let family: Vec<&ChunkRecord> = fetched
            .iter()
            .filter(|r| {
                r.namespace == c.record.namespace
                    && r.chunk.path == chunk.path
                    && (r.chunk.metadata.parent_symbol.as_deref() == Some(parent.as_str())
                        || r.chunk.metadata.symbol_name.as_deref() == Some(parent.as_str()))
            })
            .collect();
        let mut members = family;
        if !members.iter().any(|r| r.chunk.id == chunk.id) {
            members.push(&c.record);
        }
        let Some(doc) = ParentDoc::from_chunks(&members) else {
            sizes.push(chunk.text.chars().count().max(1));
            out.push(c);
            continue;
        };
        let size = doc.chars().max(1);
        let (start, end, text, is_window) = if size > window_chars || doc.has_gaps() {
            let (s, e, t) = doc.window(chunk.start_line, chunk.end_line, window_chars);
            (s, e, t, true)
        } else {
            (doc.start_line, doc.end_line, doc.lines.join("\n"), false)
        };
        spans.push((start, end));
        // Normalize by what is returned (the whole parent, or its window): a big class returned
        // as a 1000-char window is not penalized for the lines it does not return.
        let returned_chars = text.chars().count().max(1);
        c.snippet = Some(SnippetOverride {
            text,
            start_line: start,
            end_line: end,
            parent_symbol: parent,
            parent_id: None,
            parent_chars: size as u32,
            raw_score: c.score,
            is_context_window: is_window,
        });
        sizes.push(returned_chars);
        out.push(c);
    }
    let merged = total - out.len();
    if normalize && !out.is_empty() {
        normalize_scores(out.iter_mut().map(|c| &mut c.score).zip(sizes.iter().copied()));
        sort_by_score(&mut out);
    }
    (out, merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{chunk_at, record};
    use edgerag_core::ChunkType;

    /// A class split into 3 methods of 5 lines each (lines 1-15), plus a separate small function.
    fn corpus() -> Vec<ChunkRecord> {
        let mut out = Vec::new();
        for i in 0..3u32 {
            let text: String =
                (0..5).map(|l| format!("    method{i} line {l} {}\n", "x".repeat(40))).collect();
            let mut c = chunk_at("a.py", ChunkType::CodeMethod, &text, i * 5 + 1, i);
            c.metadata.parent_symbol = Some("Service".into());
            c.metadata.symbol_name = Some(format!("method{i}"));
            out.push(record("ns", c));
        }
        out.push(record(
            "ns",
            chunk_at("b.py", ChunkType::CodeFunction, "def helper():\n    return 1\n", 1, 0),
        ));
        out
    }

    #[test]
    fn each_parent_is_returned_once_with_its_best_child() {
        let chunks = corpus();
        let cands = vec![
            Candidate::new(chunks[1].clone(), 0.9),
            Candidate::new(chunks[3].clone(), 0.8),
            Candidate::new(chunks[2].clone(), 0.7),
        ];
        assert_eq!(families(&cands).len(), 1);
        let (out, merged) = apply(cands, &chunks, false, 100_000);
        assert_eq!(merged, 1);
        assert_eq!(out.len(), 2);
        let parent = out[0].snippet.as_ref().unwrap();
        assert_eq!((parent.start_line, parent.end_line), (1, 15));
        assert_eq!(parent.text.lines().count(), 15);
        assert!(!parent.is_context_window);
        assert_eq!(parent.raw_score, 0.9);
    }

    #[test]
    fn a_parent_whose_members_are_apart_returns_no_unread_lines() {
        // Two methods of one receiver, 40 lines apart (Go): the gap was never read.
        let method = |start: u32, name: &str| {
            let mut c = chunk_at(
                "s.go",
                ChunkType::CodeMethod,
                &format!("func (s *S) {name}() {{\n\treturn\n}}\n"),
                start,
                start,
            );
            c.metadata.parent_symbol = Some("S".into());
            c.metadata.symbol_name = Some(name.into());
            record("ns", c)
        };
        let chunks = vec![method(10, "A"), method(50, "B")];
        let (out, _) = apply(vec![Candidate::new(chunks[1].clone(), 0.9)], &chunks, false, 100_000);
        let s = out[0].snippet.as_ref().unwrap();
        assert_eq!((s.start_line, s.end_line), (50, 52), "{}", s.text);
        assert!(s.text.contains("func (s *S) B()") && !s.text.contains("A()"));
    }

    #[test]
    fn normalization_removes_the_size_bias() {
        let chunks = corpus();
        let cands = vec![Candidate::new(chunks[0].clone(), 1.0), Candidate::new(chunks[3].clone(), 1.0)];
        let (out, _) = apply(cands, &chunks, true, 100_000);
        // Equal raw scores: the small function now ranks above the big class.
        assert_eq!(out[0].record.chunk.path, "b.py");
        let big = out.iter().find(|c| c.record.chunk.path == "a.py").unwrap();
        let small = out.iter().find(|c| c.record.chunk.path == "b.py").unwrap();
        let (bs, ss) = (big.snippet.as_ref().unwrap().text.chars().count() as f32, 27.0f32);
        let avg = (bs + ss) / 2.0;
        assert!((big.score - (avg / bs).sqrt()).abs() < 1e-4);
        assert!((small.score - (avg / ss).sqrt()).abs() < 1e-4);
    }

    #[test]
    fn a_second_child_outside_the_window_of_a_big_parent_is_kept() {
        let chunks = corpus();
        let cands = vec![Candidate::new(chunks[0].clone(), 0.9), Candidate::new(chunks[2].clone(), 0.8)];
        let (out, merged) = apply(cands, &chunks, false, 300);
        assert_eq!(merged, 0);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|c| c.snippet.as_ref().unwrap().is_context_window));
        // Inside the first window: merged away.
        let cands = vec![Candidate::new(chunks[0].clone(), 0.9), Candidate::new(chunks[0].clone(), 0.8)];
        let (out, merged) = apply(cands, &chunks, false, 300);
        assert_eq!((out.len(), merged), (1, 1));
    }

    #[test]
    fn context_window_contains_the_matched_child() {
        let chunks = corpus();
        let child = chunks[1].clone();
        let (out, _) = apply(vec![Candidate::new(child.clone(), 1.0)], &chunks, false, 400);
        let s = out[0].snippet.as_ref().unwrap();
        assert!(s.is_context_window);
        assert!(s.start_line <= child.chunk.start_line && s.end_line >= child.chunk.end_line);
        assert!(s.text.contains(child.chunk.text.trim_end()));
        assert!(s.text.chars().count() < 400 + 70);
        // A window smaller than the child still returns the whole child.
        let (out, _) = apply(vec![Candidate::new(child.clone(), 1.0)], &chunks, false, 10);
        let s = out[0].snippet.as_ref().unwrap();
        assert_eq!((s.start_line, s.end_line), (child.chunk.start_line, child.chunk.end_line));
    }
}
