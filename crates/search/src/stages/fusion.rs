//! Hybrid fusion: weighted reciprocal rank fusion of the vector and BM25 rankings.
//!
//! `score(d) = Σ_r w_r / (k + rank_r(d))`, normalized by `Σ_r w_r / (k + 1)` over the retrievers
//! that ran, so 1.0 means "first in every retriever" and scores stay comparable across queries
//! (which is what `minScore` needs). Ranks, not raw scores, are fused: cosine similarities and
//! BM25 values live on unrelated scales. Weights matter on code: with a small general embedder
//! BM25 over identifier-split text is the stronger signal, so the default favours it.
use std::collections::HashMap;

use serde::Serialize;

use crate::ports::{ChunkKey, ScoredKey};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionParams {
    pub vector_weight: f32,
    pub keyword_weight: f32,
    pub k: f32,
}

/// One fused hit with its per-retriever trace (ranks are 1-based).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fused {
    pub key: ChunkKey,
    pub score: f32,
    pub vector_rank: Option<u32>,
    pub vector_score: Option<f32>,
    pub keyword_rank: Option<u32>,
    pub keyword_score: Option<f32>,
}

/// Fuse two rankings (each best first). `None` = the retriever did not run (it then does not
/// count in the normalization); `Some(empty)` = it ran and found nothing. Result: best first,
/// ties by key.
pub fn fuse(vector: Option<&[ScoredKey]>, keyword: Option<&[ScoredKey]>, params: FusionParams) -> Vec<Fused> {
    fuse_with_named(vector, keyword, None, params)
}

/// [`fuse`] with a third ranking: the chunks of the files a question names
/// ([`crate::evidence`]), ranked by BM25 among themselves and weighted as the keyword retriever
/// is — naming a file counts like a retriever putting its best chunk first. Their ranks are not
/// traced (`keywordRank` stays the keyword retriever's).
pub fn fuse_with_named<'a>(
    vector: Option<&'a [ScoredKey]>,
    keyword: Option<&'a [ScoredKey]>,
    named: Option<&'a [ScoredKey]>,
    params: FusionParams,
) -> Vec<Fused> {
    let mut by_key: HashMap<&ChunkKey, Fused> = HashMap::new();
    let mut norm = 0.0;
    let k = params.k;
    norm += add_ranking(&mut by_key, vector, params.vector_weight, k, |f, rank, score| {
        let first = f.vector_rank.is_none();
        if first {
            (f.vector_rank, f.vector_score) = (Some(rank), Some(score));
        }
        first
    });
    norm += add_ranking(&mut by_key, keyword, params.keyword_weight, k, |f, rank, score| {
        let first = f.keyword_rank.is_none();
        if first {
            (f.keyword_rank, f.keyword_score) = (Some(rank), Some(score));
        }
        first
    });
    let mut seen: std::collections::HashSet<ChunkKey> = std::collections::HashSet::new();
    norm += add_ranking(&mut by_key, named, params.keyword_weight, k, |f, _, _| seen.insert(f.key.clone()));
    let mut out: Vec<Fused> = by_key.into_values().collect();
    if norm > 0.0 {
        for f in &mut out {
            f.score /= norm;
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    out
}

/// Adds one retriever's ranking (`None`: it did not run) at `weight / (k + rank)` to each hit
/// `first` accepts (it records the hit's trace and says whether this is the ranking's first find of
/// it); returns the ranking's share of the normalization.
fn add_ranking<'a>(
    by_key: &mut HashMap<&'a ChunkKey, Fused>,
    list: Option<&'a [ScoredKey]>,
    weight: f32,
    k: f32,
    mut first: impl FnMut(&mut Fused, u32, f32) -> bool,
) -> f32 {
    let Some(list) = list else { return 0.0 };
    for (i, hit) in list.iter().enumerate() {
        let rank = i as u32 + 1;
        let f = by_key.entry(&hit.key).or_insert_with(|| empty(&hit.key));
        if first(f, rank, hit.score) {
            f.score += weight / (k + rank as f32);
        }
    }
    weight / (k + 1.0)
}

fn empty(key: &ChunkKey) -> Fused {
    Fused {
        key: key.clone(),
        score: 0.0,
        vector_rank: None,
        vector_score: None,
        keyword_rank: None,
        keyword_score: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[&str]) -> Vec<ScoredKey> {
        ids.iter()
            .enumerate()
            .map(|(i, id)| ScoredKey { key: ChunkKey::new("ns", *id), score: 10.0 - i as f32 })
            .collect()
    }

    const EQUAL: FusionParams = FusionParams { vector_weight: 1.0, keyword_weight: 1.0, k: 60.0 };

    #[test]
    fn first_in_both_scores_one() {
        let out = fuse(Some(&hits(&["a", "b"])), Some(&hits(&["a", "c"])), EQUAL);
        assert_eq!(out[0].key.id, "a");
        assert!((out[0].score - 1.0).abs() < 1e-6);
        assert_eq!(out[0].vector_rank, Some(1));
        assert_eq!(out[0].keyword_rank, Some(1));
        // b and c tie (rank 2 in one list): broken by key.
        assert_eq!(out[1].key.id, "b");
        assert_eq!(out[2].key.id, "c");
        assert!((out[1].score - out[2].score).abs() < 1e-7);
    }

    #[test]
    fn weights_decide_between_retrievers() {
        let params = FusionParams { vector_weight: 0.3, keyword_weight: 0.7, k: 60.0 };
        let out = fuse(Some(&hits(&["v"])), Some(&hits(&["k"])), params);
        assert_eq!(out[0].key.id, "k");
        assert!((out[0].score - 0.7).abs() < 1e-6);
        assert!((out[1].score - 0.3).abs() < 1e-6);
    }

    #[test]
    fn a_missing_retriever_does_not_count() {
        let out = fuse(None, Some(&hits(&["k", "j"])), EQUAL);
        assert!((out[0].score - 1.0).abs() < 1e-6);
        let out = fuse(Some(&[]), Some(&hits(&["k"])), EQUAL);
        assert!((out[0].score - 0.5).abs() < 1e-6);
        assert!(fuse(None, None, EQUAL).is_empty());
        assert_eq!(
            fuse_with_named(None, Some(&hits(&["k"])), None, EQUAL),
            fuse(None, Some(&hits(&["k"])), EQUAL)
        );
    }

    #[test]
    fn duplicates_in_one_list_count_once() {
        let mut v = hits(&["a", "a"]);
        v[1].score = 1.0;
        let out = fuse(Some(&v), None, EQUAL);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].vector_score, Some(10.0));
    }

    #[test]
    fn a_named_files_ranking_counts_like_a_third_retriever() {
        // First everywhere is still 1.0; a chunk only the named files hold ranks like a chunk
        // only one retriever holds.
        let v = hits(&["a", "b"]);
        let k = hits(&["a", "c"]);
        let n = hits(&["a", "n"]);
        let out = fuse_with_named(Some(&v), Some(&k), Some(&n), EQUAL);
        assert_eq!(out[0].key.id, "a");
        assert!((out[0].score - 1.0).abs() < 1e-6);
        let score = |id: &str| out.iter().find(|f| f.key.id == id).unwrap().score;
        assert!((score("n") - score("c")).abs() < 1e-6 && (score("n") - score("b")).abs() < 1e-6);
        assert_eq!(out.iter().find(|f| f.key.id == "n").unwrap().keyword_rank, None);
    }
}
