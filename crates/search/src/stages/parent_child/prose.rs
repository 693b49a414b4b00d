//! Two-stage retrieval over prose parents and children: children are searched, each parent is
//! returned **once** with the score of its best child, optionally normalized by size
//! (`raw × sqrt(avgSize / size)`, size = the returned text), and a parent over the context window
//! is returned as a window of whole children around the matched one (`isContextWindow`, with
//! `rawScore` and `parentChars`). When the parent stage cannot be completed (a child or parent is
//! missing, or the children do not tile their parent) [`two_stage_or_flat`] returns the children
//! themselves, flat, with a warning, instead of failing the search.
use std::collections::HashMap;

use edgerag_core::chunk::parent_child::{ChildChunk, ParentChunk};
use serde::Serialize;

use super::{grow_window, normalize_scores};
use crate::candidate::{Candidate, SnippetOverride};
use crate::ports::ProseFamily;

/// A child found by the first stage.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildHit {
    pub child_id: String,
    pub score: f32,
}

/// A result of the second stage: a parent (or a window of it), once.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentHit {
    pub parent_id: String,
    /// The child whose score the parent carries.
    pub matched_child_id: String,
    pub heading_path: Vec<String>,
    /// The whole parent, or the window when `is_context_window`.
    pub text: String,
    /// Char span of `text` in the parent.
    pub start_char: usize,
    pub end_char: usize,
    /// 1-based, inclusive lines of `text` in the document.
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
    /// The best child's score before size normalization.
    pub raw_score: f32,
    pub parent_chars: usize,
    pub is_context_window: bool,
}

/// Why the parent stage could not be completed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParentStageError {
    #[error("child {0} was not found")]
    MissingChild(String),
    #[error("parent {0} was not found")]
    MissingParent(String),
    #[error("the children of parent {0} do not cover it")]
    Inconsistent(String),
}

/// Parents for child hits (any order): each parent once, for its best child, sorted by score
/// (normalized when `normalize`). `parents` and `children` must hold the hits' parents and all
/// their children.
pub fn parents_for_hits(
    hits: &[ChildHit],
    parents: &[ParentChunk],
    children: &[ChildChunk],
    normalize: bool,
    window_chars: usize,
) -> Result<Vec<ParentHit>, ParentStageError> {
    let parent_by_id: HashMap<&str, &ParentChunk> = parents.iter().map(|p| (p.id.as_str(), p)).collect();
    let child_by_id: HashMap<&str, &ChildChunk> = children.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut family: HashMap<&str, Vec<&ChildChunk>> = HashMap::new();
    for c in children {
        family.entry(c.parent_id.as_str()).or_default().push(c);
    }
    let mut order: Vec<&ChildHit> = hits.iter().collect();
    order.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.child_id.cmp(&b.child_id)));

    let mut out: Vec<ParentHit> = Vec::new();
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for hit in order {
        let child = child_by_id
            .get(hit.child_id.as_str())
            .ok_or_else(|| ParentStageError::MissingChild(hit.child_id.clone()))?;
        let parent = parent_by_id
            .get(child.parent_id.as_str())
            .ok_or_else(|| ParentStageError::MissingParent(child.parent_id.clone()))?;
        if seen.insert(parent.id.as_str(), ()).is_some() {
            continue;
        }
        let parent_chars = parent.end_char - parent.start_char;
        let mut siblings = family.get(parent.id.as_str()).cloned().unwrap_or_default();
        siblings.sort_by_key(|c| c.order);
        let tiles = siblings.first().is_some_and(|c| c.start_char == 0)
            && siblings.windows(2).all(|w| w[0].end_char == w[1].start_char)
            && siblings.last().is_some_and(|c| c.end_char == parent_chars);
        if !tiles {
            return Err(ParentStageError::Inconsistent(parent.id.clone()));
        }
        let (lo, hi, is_window) = if parent_chars > window_chars {
            let sizes: Vec<usize> = siblings.iter().map(|c| c.end_char - c.start_char).collect();
            let at = siblings.iter().position(|c| c.id == child.id).unwrap_or(0);
            let (lo, hi) = grow_window(&sizes, at, at, window_chars);
            (lo, hi, true)
        } else {
            (0, siblings.len() - 1, false)
        };
        let text: String = siblings[lo..=hi].iter().map(|c| c.text.as_str()).collect();
        out.push(ParentHit {
            parent_id: parent.id.clone(),
            matched_child_id: child.id.clone(),
            heading_path: parent.heading_path.clone(),
            text,
            start_char: siblings[lo].start_char,
            end_char: siblings[hi].end_char,
            start_line: siblings[lo].start_line,
            end_line: siblings[hi].end_line,
            score: hit.score,
            raw_score: hit.score,
            parent_chars,
            is_context_window: is_window,
        });
    }
    if normalize {
        let sizes: Vec<usize> = out.iter().map(|h| h.end_char - h.start_char).collect();
        normalize_scores(out.iter_mut().map(|h| &mut h.score).zip(sizes));
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.parent_id.cmp(&b.parent_id)));
    }
    Ok(out)
}

/// [`parents_for_hits`], or — when the parent stage fails — the children themselves as flat
/// results (each its own "parent"), with a warning saying why.
pub fn two_stage_or_flat(
    hits: &[ChildHit],
    parents: &[ParentChunk],
    children: &[ChildChunk],
    normalize: bool,
    window_chars: usize,
) -> (Vec<ParentHit>, Option<String>) {
    match parents_for_hits(hits, parents, children, normalize, window_chars) {
        Ok(out) => (out, None),
        Err(e) => {
            let by_id: HashMap<&str, &ChildChunk> = children.iter().map(|c| (c.id.as_str(), c)).collect();
            let mut flat: Vec<ParentHit> = hits
                .iter()
                .filter_map(|h| by_id.get(h.child_id.as_str()).map(|c| (h, c)))
                .map(|(h, c)| ParentHit {
                    parent_id: c.parent_id.clone(),
                    matched_child_id: c.id.clone(),
                    heading_path: Vec::new(),
                    text: c.text.clone(),
                    start_char: c.start_char,
                    end_char: c.end_char,
                    start_line: c.start_line,
                    end_line: c.end_line,
                    score: h.score,
                    raw_score: h.score,
                    parent_chars: c.end_char - c.start_char,
                    is_context_window: false,
                })
                .collect();
            flat.sort_by(|a, b| b.score.total_cmp(&a.score));
            (flat, Some(format!("PARENT_STAGE_FAILED: {e}; returning children without their parents")))
        }
    }
}

/// Two-stage retrieval on the pipeline's candidates. A candidate that is a child in `families`
/// is replaced by its parent — whole, or a window of whole children around it when the parent is
/// over `window_chars` — once, for its best-scoring child; the parent's other children are
/// dropped. Other candidates pass untouched. Scores are left raw (the pipeline normalizes every
/// result together). Returns how many children were merged away; on an error the candidates are
/// left as they were (the caller falls back to flat results).
pub fn apply(
    candidates: &mut Vec<Candidate>,
    families: &[ProseFamily],
    window_chars: usize,
) -> Result<usize, ParentStageError> {
    let mut family_of: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, f) in families.iter().enumerate() {
        for c in &f.children {
            family_of.insert((f.namespace.as_str(), c.id.as_str()), i);
        }
    }
    let lookup =
        |c: &Candidate| family_of.get(&(c.record.namespace.as_str(), c.record.chunk.id.as_str())).copied();
    // The best candidate of each family (the first on equal scores).
    let mut best: HashMap<usize, usize> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        if let Some(f) = lookup(c) {
            let entry = best.entry(f).or_insert(i);
            if c.score > candidates[*entry].score {
                *entry = i;
            }
        }
    }
    let mut snippets: HashMap<usize, SnippetOverride> = HashMap::new();
    for (&f, &i) in &best {
        let family = &families[f];
        let hit = ChildHit { child_id: candidates[i].record.chunk.id.clone(), score: candidates[i].score };
        let parent = parents_for_hits(
            std::slice::from_ref(&hit),
            std::slice::from_ref(&family.parent),
            &family.children,
            false,
            window_chars,
        )?
        .pop()
        .ok_or_else(|| ParentStageError::MissingParent(family.parent.id.clone()))?;
        snippets.insert(
            i,
            SnippetOverride {
                text: parent.text,
                start_line: parent.start_line,
                end_line: parent.end_line,
                parent_symbol: parent.heading_path.last().cloned().unwrap_or_default(),
                parent_id: Some(parent.parent_id),
                parent_chars: parent.parent_chars as u32,
                raw_score: parent.raw_score,
                is_context_window: parent.is_context_window,
            },
        );
    }
    let in_family: Vec<bool> = candidates.iter().map(|c| lookup(c).is_some()).collect();
    let total = candidates.len();
    let mut out = Vec::with_capacity(total);
    for (i, mut c) in std::mem::take(candidates).into_iter().enumerate() {
        if !in_family[i] {
            out.push(c);
        } else if let Some(snippet) = snippets.remove(&i) {
            c.snippet = Some(snippet);
            out.push(c);
        }
    }
    *candidates = out;
    Ok(total - candidates.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgerag_core::chunk::parent_child::{prepare, ParentChildConfig, ParentChildDocument};
    use edgerag_core::Language;

    fn doc(text: &str) -> ParentChildDocument {
        let config = ParentChildConfig::default();
        let p = prepare(text, Language::Markdown, &config);
        // Every boundary a cliff: children as small as the sizes allow.
        let sims = vec![0.0; p.unit_count().saturating_sub(1)];
        p.assemble("a.md", &sims, &config)
    }

    fn hit(id: &str, score: f32) -> ChildHit {
        ChildHit { child_id: id.into(), score }
    }

    #[test]
    fn each_parent_once_with_its_best_child_and_a_window_when_large() {
        let para = "Retry with backoff keeps the queue healthy under load. ".repeat(6);
        let text = format!("# A\n\n{para}\n\n{para}\n\n{para}\n\n# B\n\nSmall part about gardens.\n");
        let d = doc(&text);
        let big = &d.parents[0];
        assert!(big.end_char - big.start_char > 1000);
        let kids: Vec<&ChildChunk> = d.children.iter().filter(|c| c.parent_id == big.id).collect();
        let small_kid = d.children.iter().find(|c| c.parent_id == d.parents[1].id).unwrap();
        let hits = [hit(&kids[2].id, 0.5), hit(&kids[1].id, 0.9), hit(&small_kid.id, 0.7)];
        let out = parents_for_hits(&hits, &d.parents, &d.children, false, 1000).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].parent_id, big.id);
        assert_eq!(out[0].matched_child_id, kids[1].id);
        assert_eq!(out[0].raw_score, 0.9);
        assert!(out[0].is_context_window);
        assert!(out[0].text.contains(&kids[1].text));
        assert!(out[0].text.chars().count() <= 1000);
        assert!(!out[1].is_context_window);
        assert_eq!(out[1].text, d.parents[1].text);
    }

    #[test]
    fn a_missing_parent_falls_back_to_flat_children_with_a_warning() {
        let d = doc("# A\n\nOne sentence here. Another one there.\n");
        let hits = [hit(&d.children[0].id, 0.4)];
        let (out, warning) = two_stage_or_flat(&hits, &[], &d.children, true, 1000);
        assert!(warning.unwrap().starts_with("PARENT_STAGE_FAILED"));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].text, d.children[0].text);
        let (out, warning) = two_stage_or_flat(&hits, &d.parents, &d.children, true, 1000);
        assert!(warning.is_none());
        assert_eq!(out[0].text, d.parents[0].text);
    }

    fn child_candidate(c: &ChildChunk, score: f32) -> Candidate {
        let mut chunk = crate::testutil::chunk_at(
            "a.md",
            edgerag_core::ChunkType::MarkdownSection,
            &c.text,
            c.start_line,
            c.order,
        );
        chunk.id = c.id.clone();
        Candidate::new(crate::testutil::record("repo:t/t", chunk), score)
    }

    #[test]
    fn candidates_that_are_children_become_their_parent_once_and_others_pass_untouched() {
        let para = "Retry with backoff keeps the queue healthy under load. ".repeat(6);
        let text = format!("# A\n\n{para}\n\n{para}\n\n{para}\n\n# B\n\nSmall part about gardens.\n");
        let d = doc(&text);
        let families: Vec<ProseFamily> = d
            .parents
            .iter()
            .map(|p| ProseFamily {
                namespace: "repo:t/t".into(),
                path: "a.md".into(),
                parent: p.clone(),
                children: d.children.iter().filter(|c| c.parent_id == p.id).cloned().collect(),
            })
            .collect();
        let big: Vec<&ChildChunk> = d.children.iter().filter(|c| c.parent_id == d.parents[0].id).collect();
        let small = d.children.iter().find(|c| c.parent_id == d.parents[1].id).unwrap();
        let code =
            crate::testutil::candidate("src/lib.rs", edgerag_core::ChunkType::CodeFunction, "fn x() {}", 0.8);
        let mut candidates = vec![
            child_candidate(big[1], 0.9),
            code.clone(),
            child_candidate(big[2], 0.7),
            child_candidate(small, 0.6),
        ];
        let merged = apply(&mut candidates, &families, 1000).unwrap();
        assert_eq!(merged, 1);
        assert_eq!(candidates.len(), 3);
        let first = candidates[0].snippet.as_ref().unwrap();
        assert_eq!(first.parent_id.as_deref(), Some(d.parents[0].id.as_str()));
        assert!(first.is_context_window);
        assert!(first.text.contains(&big[1].text));
        assert_eq!(first.raw_score, 0.9);
        assert_eq!(first.parent_chars as usize, d.parents[0].end_char - d.parents[0].start_char);
        assert_eq!(candidates[1], code);
        let last = candidates[2].snippet.as_ref().unwrap();
        assert_eq!(last.text, d.parents[1].text);
        assert!(!last.is_context_window);
    }

    #[test]
    fn a_family_whose_children_do_not_tile_the_parent_fails_and_leaves_the_candidates_alone() {
        let d = doc("# A\n\nOne sentence here. Another one there.\n");
        let family = ProseFamily {
            namespace: "repo:t/t".into(),
            path: "a.md".into(),
            parent: d.parents[0].clone(),
            children: vec![ChildChunk { end_char: 3, ..d.children[0].clone() }],
        };
        let mut candidates = vec![child_candidate(&d.children[0], 0.5)];
        let before = candidates.clone();
        assert!(matches!(apply(&mut candidates, &[family], 1000), Err(ParentStageError::Inconsistent(_))));
        assert_eq!(candidates, before);
    }
}
