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
//! The repository map (`repo.map`) ranks files by the sum of their symbols' ranks. A map asked
//! about something (a question, paths, symbols) is ranked by [`personalized`] PageRank instead,
//! computed per request over the files' graph with the teleport mass on the files it is about.
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::compact::Column;
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
    let mut votes = Votes::new(files.iter().flat_map(|f| f.nodes.iter().map(|n| &n.id)));
    for f in files {
        votes.add(f);
    }
    votes.ranks()
}

/// [`pagerank`] fed file by file: the symbols first (every node id), then each resolved file's
/// votes, so a namespace's graphs need not be held at once. The same ranks, bit for bit.
pub struct Votes {
    ids: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
    links: Links,
}

impl Votes {
    /// Over the symbols `ids` (repeats are one symbol).
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a Arc<str>>) -> Votes {
        let mut ids: Vec<Arc<str>> = ids.into_iter().cloned().collect();
        ids.sort_unstable();
        ids.dedup();
        let index = ids.iter().enumerate().map(|(i, id)| (id.clone(), i as u32)).collect();
        let links = Links::new(ids.len());
        Votes { ids, index, links }
    }

    /// The votes of one resolved file's edges.
    pub fn add(&mut self, file: &FileGraph) {
        let index = &self.index;
        for e in file.edges.iter().filter(|e| votes(e.kind)) {
            if let (Some(&s), Some(&d)) = (index.get(&*e.src), e.dst.as_deref().and_then(|d| index.get(d))) {
                self.links.push(s, d);
            }
        }
    }

    /// `(symbol id, rank)` of every symbol, in id order; the ranks sum to 1.
    pub fn ranks(self) -> Vec<(String, f64)> {
        let Votes { ids, index, links } = self;
        drop(index);
        let ranks = links.ranks();
        ids.into_iter().map(|id| id.to_string()).zip(ranks).collect()
    }
}

/// The votes between symbols numbered `0..n` in id order (8 bytes a vote, kept in blocks): what
/// [`Votes`] keeps once each id has its number.
pub struct Links {
    n: usize,
    /// (source, target).
    links: Column<(u32, u32)>,
}

impl Links {
    pub fn new(n: usize) -> Links {
        Links { n, links: Column::default() }
    }

    /// A vote of symbol `source` for symbol `target` (none for itself).
    pub fn push(&mut self, source: u32, target: u32) {
        if source != target {
            self.links.push((source, target));
        }
    }

    /// Votes so far.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Every symbol's rank, by number; the ranks sum to 1.
    pub fn ranks(self) -> Vec<f64> {
        self.ranks_in(Vec::new(), Vec::new())
    }

    /// [`Links::ranks`] computed in `rank` and `next` (emptied first; buffers of a caller's that
    /// it no longer needs, so that no new ones are allocated when they have room for every
    /// symbol). The votes are first laid out by source ([`BySource`]), their blocks freed as they
    /// go, and each round adds them up in (source, target) order, as sorted pairs would: the sums
    /// run in a fixed order.
    pub fn ranks_in(self, mut rank: Vec<f64>, mut next: Vec<f64>) -> Vec<f64> {
        let n = self.n;
        if n == 0 {
            return Vec::new();
        }
        let by_source = BySource::new(n, self.links);
        rank.clear();
        rank.resize(n, 1.0 / n as f64);
        for _ in 0..MAX_ROUNDS {
            let dangling: f64 = (0..n).filter(|&i| by_source.degree(i) == 0).map(|i| rank[i]).sum();
            let base = (1.0 - DAMPING) / n as f64 + DAMPING * dangling / n as f64;
            next.clear();
            next.resize(n, base);
            for (s, &r) in rank.iter().enumerate() {
                let targets = by_source.targets(s);
                if targets.is_empty() {
                    continue;
                }
                let share = DAMPING * r / f64::from(targets.len() as u32);
                for &d in targets {
                    next[d as usize] += share;
                }
            }
            let moved: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            std::mem::swap(&mut rank, &mut next);
            if moved < TOLERANCE {
                break;
            }
        }
        rank
    }
}

/// Votes by source: the targets of source `s` (ascending, repeats kept) at
/// `targets[starts[s]..starts[s + 1]]` — 4 bytes a vote and 4 a symbol, and no copy of the votes
/// as pairs.
struct BySource {
    starts: Vec<u32>,
    targets: Vec<u32>,
}

impl BySource {
    fn new(n: usize, links: Column<(u32, u32)>) -> BySource {
        // Counted, then placed (each source's start moving up to its end), then shifted back.
        let mut starts = vec![0u32; n + 1];
        for i in 0..links.len() {
            starts[links.get(i).0 as usize + 1] += 1;
        }
        for s in 0..n {
            starts[s + 1] += starts[s];
        }
        let mut targets = vec![0u32; links.len()];
        for (s, d) in links.into_items() {
            let at = &mut starts[s as usize];
            targets[*at as usize] = d;
            *at += 1;
        }
        starts.copy_within(0..n, 1);
        starts[0] = 0;
        for s in 0..n {
            targets[starts[s] as usize..starts[s + 1] as usize].sort_unstable();
        }
        BySource { starts, targets }
    }

    fn targets(&self, s: usize) -> &[u32] {
        &self.targets[self.starts[s] as usize..self.starts[s + 1] as usize]
    }

    fn degree(&self, s: usize) -> u32 {
        self.starts[s + 1] - self.starts[s]
    }
}

/// Ranks are kept to this many significant digits (a stored rank whose rounded value did not
/// change is not written again).
const DIGITS: i32 = 6;

/// `x` to [`DIGITS`] significant digits (0 for anything not positive and finite).
pub fn rounded(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 0.0;
    }
    let scale = 10f64.powi(DIGITS - 1 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

/// The ranks a repository keeps: every symbol's [`pagerank`] and every file's (the sum of its
/// symbols'), rounded; keyed by symbol id and by path.
pub fn stored_ranks(files: &[FileGraph]) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    let ids: Vec<Vec<Arc<str>>> =
        files.iter().map(|f| f.nodes.iter().map(|n| n.id.clone()).collect()).collect();
    stored_ranks_of(pagerank(files), files.iter().zip(&ids).map(|(f, ids)| (f.path.as_str(), ids.as_slice())))
}

/// [`stored_ranks`] from the symbols' ranks ([`Votes::ranks`]) and each file's path and node ids
/// (in the file's order).
pub fn stored_ranks_of<'a>(
    ranks: Vec<(String, f64)>,
    files: impl Iterator<Item = (&'a str, &'a [Arc<str>])>,
) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    let ranks: HashMap<String, f64> = ranks.into_iter().collect();
    let mut nodes = BTreeMap::new();
    let mut by_file = BTreeMap::new();
    for (path, ids) in files {
        let mut total = 0.0;
        for id in ids {
            let r = ranks.get(&**id).copied().unwrap_or(0.0);
            total += r;
            nodes.insert(id.to_string(), rounded(r));
        }
        by_file.insert(path.to_string(), rounded(total));
    }
    (nodes, by_file)
}

/// Personalized PageRank over nodes `0..n`: `links` are `(source, target, weight)` votes (weights
/// of the same pair add up; self-links and non-positive weights are ignored) and `teleport` the
/// `(node, weight)` the random surfer jumps back to, normalized to sum to 1 (uniform when empty or
/// all zero: plain PageRank). A node without outgoing votes sends its rank to the teleport
/// distribution. Damping 0.85, iterated until the ranks move by less than 1e-9 in total (at most
/// 100 rounds); the ranks sum to 1 and the same input in any order gives the same ranks bit for
/// bit.
pub fn personalized(n: usize, links: &[(usize, usize, f64)], teleport: &[(usize, f64)]) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    // Summed in a fixed order (a node given twice), so the ranks do not depend on the input order.
    let mut seeds: Vec<(usize, f64)> =
        teleport.iter().copied().filter(|&(i, w)| i < n && w > 0.0 && w.is_finite()).collect();
    seeds.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut jump = vec![0.0; n];
    for (i, w) in seeds {
        jump[i] += w;
    }
    let mass: f64 = jump.iter().sum();
    if mass > 0.0 {
        jump.iter_mut().for_each(|j| *j /= mass);
    } else {
        jump = vec![1.0 / n as f64; n];
    }
    // Merge parallel links, in a fixed order so the sums below do not depend on the input order.
    let mut merged: Vec<(usize, usize, f64)> = links
        .iter()
        .copied()
        .filter(|&(s, d, w)| s < n && d < n && s != d && w > 0.0 && w.is_finite())
        .collect();
    merged.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
    let mut votes: Vec<(usize, usize, f64)> = Vec::with_capacity(merged.len());
    for (s, d, w) in merged {
        match votes.last_mut() {
            Some(last) if last.0 == s && last.1 == d => last.2 += w,
            _ => votes.push((s, d, w)),
        }
    }
    let mut out_weight = vec![0.0f64; n];
    for &(s, _, w) in &votes {
        out_weight[s] += w;
    }
    let mut rank = jump.clone();
    for _ in 0..MAX_ROUNDS {
        let dangling: f64 = (0..n).filter(|&i| out_weight[i] == 0.0).map(|i| rank[i]).sum();
        let spread = 1.0 - DAMPING + DAMPING * dangling;
        let mut next: Vec<f64> = jump.iter().map(|j| spread * j).collect();
        for &(s, d, w) in &votes {
            next[d] += DAMPING * rank[s] * w / out_weight[s];
        }
        let total: f64 = next.iter().sum();
        if total > 0.0 {
            next.iter_mut().for_each(|r| *r /= total);
        }
        let moved: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if moved < TOLERANCE {
            break;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::graph::chunk_with_graph;
    use proptest::prelude::*;

    /// The ranks as they were computed before votes were laid out by source: every vote as a
    /// (source, target) pair, sorted, added up in that order.
    fn ranks_from_sorted_pairs(n: usize, mut links: Vec<(u32, u32)>) -> Vec<f64> {
        links.retain(|(s, d)| s != d);
        links.sort_unstable();
        let mut out_degree = vec![0u32; n];
        for &(s, _) in &links {
            out_degree[s as usize] += 1;
        }
        let mut rank = vec![1.0 / n as f64; n];
        for _ in 0..MAX_ROUNDS {
            let dangling: f64 = (0..n).filter(|&i| out_degree[i] == 0).map(|i| rank[i]).sum();
            let base = (1.0 - DAMPING) / n as f64 + DAMPING * dangling / n as f64;
            let mut next = vec![base; n];
            for &(s, d) in &links {
                let s = s as usize;
                next[d as usize] += DAMPING * rank[s] / f64::from(out_degree[s]);
            }
            let moved: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            rank = next;
            if moved < TOLERANCE {
                break;
            }
        }
        rank
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn ranks_laid_out_by_source_are_those_of_sorted_pairs_bit_for_bit(
            n in 1usize..300,
            pairs in proptest::collection::vec((0u32..300, 0u32..300), 0..3_000),
            room in 0usize..600,
        ) {
            let pairs: Vec<(u32, u32)> = pairs.into_iter().map(|(s, d)| (s % n as u32, d % n as u32)).collect();
            let mut links = Links::new(n);
            for &(s, d) in &pairs {
                links.push(s, d);
            }
            // Given buffers (of any room) or not, the same bits.
            let got = links.ranks_in(Vec::with_capacity(room), vec![7.0; room / 2]);
            let expected = ranks_from_sorted_pairs(n, pairs);
            prop_assert_eq!(got.iter().map(|r| r.to_bits()).collect::<Vec<_>>(), expected.iter().map(|r| r.to_bits()).collect::<Vec<_>>());
        }
    }
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

    #[test]
    fn teleport_mass_concentrates_on_the_personalized_nodes_and_their_neighbours() {
        // 0 → 1 → 2, 3 → 4, 5 alone.
        let links = [(0, 1, 1.0), (1, 2, 1.0), (3, 4, 1.0)];
        let plain = personalized(6, &links, &[]);
        let near = personalized(6, &links, &[(3, 1.0)]);
        assert!((near.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(near[3] > plain[3] && near[4] > plain[4], "{near:?} vs {plain:?}");
        // What 3 votes for gains, what is unreachable from 3 keeps only a dangling share.
        assert!(near[4] > near[0] && near[4] > near[5]);
        // Unknown nodes and useless weights are ignored; no teleport is plain PageRank.
        assert_eq!(personalized(6, &links, &[(9, 1.0), (2, 0.0)]), plain);
        assert!(personalized(0, &[], &[(0, 1.0)]).is_empty());
    }

    #[test]
    fn personalized_pagerank_without_teleport_is_pagerank() {
        let files = graph(&[
            ("util.py", "def helper():\n    return 1\n"),
            ("a.py", "from util import helper\n\ndef a():\n    return helper()\n"),
        ]);
        let ranks = pagerank(&files);
        let index: HashMap<&str, usize> =
            ranks.iter().enumerate().map(|(i, (id, _))| (id.as_str(), i)).collect();
        let links: Vec<(usize, usize, f64)> = files
            .iter()
            .flat_map(|f| &f.edges)
            .filter(|e| votes(e.kind))
            .filter_map(|e| Some((*index.get(&*e.src)?, *index.get(e.dst.as_deref()?)?, 1.0)))
            .collect();
        let p = personalized(ranks.len(), &links, &[]);
        for ((_, want), got) in ranks.iter().zip(&p) {
            assert!((want - got).abs() < 1e-7, "{want} vs {got}");
        }
    }

    mod props {
        use super::super::personalized;
        use proptest::prelude::*;

        /// Nodes, weighted links, teleport weights.
        type Input = (usize, Vec<(usize, usize, f64)>, Vec<(usize, f64)>);

        fn input() -> impl Strategy<Value = Input> {
            (1usize..40).prop_flat_map(|n| {
                (
                    Just(n),
                    prop::collection::vec((0..n, 0..n, 0.1f64..5.0), 0..120),
                    prop::collection::vec((0..n, 0.1f64..3.0), 0..5),
                )
            })
        }

        proptest! {
            #[test]
            fn ranks_sum_to_one_and_do_not_depend_on_the_input_order((n, links, teleport) in input()) {
                let ranks = personalized(n, &links, &teleport);
                prop_assert_eq!(ranks.len(), n);
                prop_assert!((ranks.iter().sum::<f64>() - 1.0).abs() < 1e-9);
                prop_assert!(ranks.iter().all(|r| *r >= 0.0));
                let mut l = links.clone();
                l.reverse();
                let mut t = teleport.clone();
                t.reverse();
                prop_assert_eq!(personalized(n, &l, &t), ranks);
            }

            #[test]
            fn the_teleport_nodes_hold_at_least_their_teleport_share((n, links, teleport) in input()) {
                let mut teleport = teleport;
                if teleport.is_empty() {
                    teleport.push((n - 1, 1.0));
                }
                let ranks = personalized(n, &links, &teleport);
                let mut seeds: Vec<usize> = teleport.iter().map(|t| t.0).collect();
                seeds.sort_unstable();
                seeds.dedup();
                let held: f64 = seeds.iter().map(|&i| ranks[i]).sum();
                // Every jump lands on a seed: at least (1 - damping) of the mass stays there. (That
                // the seeds hold more than without personalization is not true of every graph: a
                // seed may pass its mass on to nodes the uniform jump would not favour.)
                prop_assert!(held >= 0.15 - 1e-9, "{held}");
            }
        }
    }
}
