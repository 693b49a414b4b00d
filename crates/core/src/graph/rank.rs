//! How important each symbol of a repository is: PageRank over the resolved code graph.
//!
//! 1. Every resolved `CALLS`, `REFERENCES`, `IMPORTS`, `EXTENDS` and `IMPLEMENTS` edge between two
//!    symbols is a vote of its source for its target (parallel edges add up; `CONTAINS` is
//!    structure, not use, and external targets have no node).
//! 2. PageRank with damping 0.85, iterated until the ranks move by less than 1e-9 in total
//!    (at most 100 rounds); a symbol without outgoing votes spreads its rank evenly, so the ranks
//!    always sum to 1.
//! 3. Ranks are returned in id order, so the same graph always gives the same ranks bit for bit.
//!
//! The repository map (`repo.map`) ranks files by the sum of their symbols' ranks.
use std::collections::HashMap;

use super::{EdgeKind, FileGraph};

const DAMPING: f64 = 0.85;
const TOLERANCE: f64 = 1e-9;
const MAX_ROUNDS: usize = 100;

/// Whether an edge of `kind` says its source uses its target.
pub fn votes(kind: EdgeKind) -> bool {
    matches!(
        kind,
        EdgeKind::Calls | EdgeKind::References | EdgeKind::Imports | EdgeKind::Extends | EdgeKind::Implements
    )
}

/// `(symbol id, rank)` of every node of `files`, in id order; the ranks sum to 1.
pub fn pagerank(files: &[FileGraph]) -> Vec<(String, f64)> {
    let mut ids: Vec<&str> = files.iter().flat_map(|f| f.nodes.iter().map(|n| &*n.id)).collect();
    ids.sort_unstable();
    ids.dedup();
    let n = ids.len();
    if n == 0 {
        return Vec::new();
    }
    let index: HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    // Votes as (source, target) pairs, sorted so the sums below run in a fixed order.
    let mut links: Vec<(usize, usize)> = files
        .iter()
        .flat_map(|f| f.edges.iter())
        .filter(|e| votes(e.kind))
        .filter_map(|e| Some((*index.get(&*e.src)?, *index.get(e.dst.as_deref()?)?)))
        .filter(|(s, d)| s != d)
        .collect();
    links.sort_unstable();
    let mut out_degree = vec![0u32; n];
    for &(s, _) in &links {
        out_degree[s] += 1;
    }
    let mut rank = vec![1.0 / n as f64; n];
    for _ in 0..MAX_ROUNDS {
        let dangling: f64 = (0..n).filter(|&i| out_degree[i] == 0).map(|i| rank[i]).sum();
        let base = (1.0 - DAMPING) / n as f64 + DAMPING * dangling / n as f64;
        let mut next = vec![base; n];
        for &(s, d) in &links {
            next[d] += DAMPING * rank[s] / f64::from(out_degree[s]);
        }
        let moved: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if moved < TOLERANCE {
            break;
        }
    }
    ids.into_iter().map(str::to_string).zip(rank).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::graph::chunk_with_graph;
    use crate::graph::resolve;
    use crate::ChunkConfig;

    fn graph(files: &[(&str, &str)]) -> Vec<FileGraph> {
        let mut out: Vec<FileGraph> =
            files.iter().filter_map(|(p, t)| chunk_with_graph(p, t, &ChunkConfig::default()).1).collect();
        resolve(&mut out);
        out
    }

    fn rank_of(files: &[FileGraph], ranks: &[(String, f64)], name: &str) -> f64 {
        let id = files.iter().flat_map(|f| &f.nodes).find(|n| n.name == name).unwrap().id.clone();
        ranks.iter().find(|(i, _)| **i == *id).unwrap().1
    }

    #[test]
    fn a_symbol_everyone_calls_outranks_the_callers_and_ranks_sum_to_one() {
        let files = graph(&[
            ("util.py", "def helper():\n    return 1\n"),
            ("a.py", "from util import helper\n\ndef a():\n    return helper()\n"),
            ("b.py", "from util import helper\n\ndef b():\n    return helper()\n"),
            ("c.py", "from util import helper\n\ndef c():\n    return helper() + helper()\n"),
        ]);
        let ranks = pagerank(&files);
        let total: f64 = ranks.iter().map(|(_, r)| r).sum();
        assert!((total - 1.0).abs() < 1e-6, "{total}");
        let helper = rank_of(&files, &ranks, "helper");
        for caller in ["a", "b", "c"] {
            assert!(helper > rank_of(&files, &ranks, caller), "helper must outrank {caller}");
        }
    }

    #[test]
    fn the_same_graph_gives_the_same_ranks_in_any_file_order() {
        let sources = [
            ("x.py", "def x():\n    return y()\n\ndef y():\n    return 2\n"),
            ("z.py", "from x import y\n\ndef z():\n    return y()\n"),
        ];
        let one = pagerank(&graph(&sources));
        let mut reversed = sources;
        reversed.reverse();
        assert_eq!(one, pagerank(&graph(&reversed)));
        assert!(pagerank(&[]).is_empty());
    }
}
