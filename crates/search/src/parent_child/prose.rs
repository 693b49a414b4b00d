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
}
