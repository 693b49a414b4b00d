//! Graph candidates: the callees and callers of the strongest matches join the candidates, each
//! scored from the match that leads to it and its own code-aware weight — candidates to rank, not
//! neighbours appended after the answer. A test that exercises the asked behaviour leads to the
//! code it calls; a helper the question describes is reached from the function calling it.
use std::collections::HashSet;

use crate::candidate::{sort_by_score, Candidate};
use crate::neighbors::{chunk_holding, graph_ask, GraphAsk};
use crate::ports::{ChunkKey, ChunkRecord, GraphLinks, LinkDirection};
use crate::profile::GraphCandidatesSettings;

/// The code-graph question for the first `settings.seeds` candidates that have a graph node.
pub fn ask(candidates: &[Candidate], settings: &GraphCandidatesSettings) -> GraphAsk {
    let seeds: Vec<Candidate> = candidates
        .iter()
        .filter(|c| c.record.chunk.metadata.symbol_id.is_some())
        .take(settings.seeds as usize)
        .cloned()
        .collect();
    graph_ask(&seeds)
}

/// What the store answered for an [`ask`]: the links, and the chunks at their [`points`].
pub struct Found<'a> {
    pub ask: &'a GraphAsk,
    pub links: &'a GraphLinks,
    pub fetched: &'a [ChunkRecord],
}

/// Adds the chunks the links lead to (`found.fetched`) as candidates: a callee at
/// `seed score × calleeWeight × weight(chunk)`, a caller at `× callerWeight`, where `weight` is
/// the chunk's own code-aware multiplier; a chunk reached twice keeps its best score, and `admit`
/// drops what the request's filters exclude. A chunk already a candidate, or touching one (its
/// lines overlap or border a candidate's of the same file), is not added: the spans would merge
/// into one larger match and crowd other files out of the budget. Returns how many were added;
/// the list is sorted again.
pub fn add(
    candidates: &mut Vec<Candidate>,
    found: Found<'_>,
    settings: &GraphCandidatesSettings,
    top_k: usize,
    weight: impl Fn(&Candidate) -> f32,
    admit: impl Fn(&ChunkRecord) -> bool,
) -> usize {
    // With `afterMatches`, at most just below the last of the first `top_k` candidates.
    let cap = match candidates.get(top_k.saturating_sub(1)) {
        Some(c) if settings.after_matches => c.score * 0.999,
        _ => f32::INFINITY,
    };
    let Found { ask, links, fetched } = found;
    let present: HashSet<ChunkKey> = candidates.iter().map(Candidate::key).collect();
    // The score of each query's seed: the first candidate asking it (candidates are best first).
    let mut seed_score: Vec<Option<f32>> = vec![None; ask.queries.len()];
    for c in candidates.iter() {
        let chunk = &c.record.chunk;
        let Some(id) = chunk.metadata.symbol_id.as_deref() else { continue };
        if let Some(i) = ask.queries.iter().position(|q| {
            q.namespace == c.record.namespace
                && q.path == chunk.path
                && q.start_line == chunk.start_line
                && q.symbol_id.as_deref() == Some(id)
        }) {
            seed_score[i].get_or_insert(c.score);
        }
    }
    let mut added: Vec<Candidate> = Vec::new();
    for l in &links.links {
        let Some(seed) = seed_score.get(l.query).copied().flatten() else { continue };
        let q = &ask.queries[l.query];
        if settings.same_file && l.path != q.path {
            continue;
        }
        let Some(record) = chunk_holding(fetched, &q.namespace, &l.path, l.line) else { continue };
        let key = ChunkKey::new(&record.namespace, &record.chunk.id);
        if present.contains(&key) || touches_a_candidate(candidates, record) || !admit(record) {
            continue;
        }
        let factor = match l.direction {
            LinkDirection::Uses => settings.callee_weight,
            LinkDirection::UsedBy => settings.caller_weight,
        };
        let mut c = Candidate::new(record.clone(), 0.0);
        c.score = (seed * factor * weight(&c)).min(cap);
        match added.iter_mut().find(|a| a.key() == key) {
            Some(a) if a.score < c.score => a.score = c.score,
            Some(_) => {}
            None => added.push(c),
        }
    }
    let n = added.len();
    if n > 0 {
        candidates.extend(added);
        sort_by_score(candidates);
    }
    n
}

/// Whether `record`'s lines overlap or border those of a candidate of the same file.
fn touches_a_candidate(candidates: &[Candidate], record: &ChunkRecord) -> bool {
    let (start, end) = (record.chunk.start_line, record.chunk.end_line);
    candidates.iter().any(|c| {
        let (s, e) = c.lines();
        c.record.namespace == record.namespace
            && c.record.chunk.path == record.chunk.path
            && start <= e.saturating_add(1)
            && s <= end.saturating_add(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::SymbolLink;
    use crate::testutil::{chunk_at, record};
    use edgerag_core::ChunkType;

    /// A code chunk of `path` over lines `start..=end`.
    fn record_at(path: &str, start: u32, end: u32) -> ChunkRecord {
        let text: String = (start..=end).map(|i| format!("line {i}\n")).collect();
        record("repo:t/t", chunk_at(path, ChunkType::CodeFunction, &text, start, start))
    }

    fn settings() -> GraphCandidatesSettings {
        GraphCandidatesSettings {
            seeds: 2,
            per_seed: 3,
            callee_weight: 0.5,
            caller_weight: 0.25,
            after_matches: false,
            same_file: false,
        }
    }

    fn seed(path: &str, start: u32, end: u32, id: &str, score: f32) -> Candidate {
        let mut r = record_at(path, start, end);
        r.chunk.metadata.symbol_id = Some(id.into());
        Candidate::new(r, score)
    }

    fn link(query: usize, direction: LinkDirection, path: &str, line: u32) -> SymbolLink {
        SymbolLink {
            query,
            direction,
            name: format!("{path}:{line}"),
            path: path.into(),
            line,
            confidence: 1.0,
        }
    }

    #[test]
    fn callees_and_callers_of_the_seeds_join_scored_from_their_seed() {
        let mut cands = vec![
            seed("tests/t.rs", 1, 9, "t", 1.0),
            seed("src/a.rs", 1, 9, "a", 0.8),
            seed("src/z.rs", 1, 9, "z", 0.7),
        ];
        let s = settings();
        let ask = ask(&cands, &s);
        assert_eq!(ask.queries.len(), 2, "only the first two seeds ask");
        let links = GraphLinks {
            with_graph: vec![cands[0].record.namespace.clone()],
            links: vec![
                link(0, LinkDirection::Uses, "src/lib.rs", 20),
                link(1, LinkDirection::UsedBy, "src/main.rs", 5),
                // Already a candidate: left as it is.
                link(1, LinkDirection::Uses, "src/z.rs", 3),
            ],
        };
        let fetched = vec![
            record_at("src/lib.rs", 18, 30),
            record_at("src/main.rs", 1, 12),
            record_at("src/z.rs", 1, 9),
        ];
        assert_eq!(ask.points(&links).len(), 3);
        let n =
            add(&mut cands, Found { ask: &ask, links: &links, fetched: &fetched }, &s, 8, |_| 1.0, |_| true);
        assert_eq!(n, 2);
        let got: Vec<(&str, f32)> = cands.iter().map(|c| (c.record.chunk.path.as_str(), c.score)).collect();
        assert_eq!(
            got,
            vec![
                ("tests/t.rs", 1.0),
                ("src/a.rs", 0.8),
                ("src/z.rs", 0.7),
                ("src/lib.rs", 0.5),
                ("src/main.rs", 0.2)
            ]
        );
    }

    #[test]
    fn the_chunks_own_weight_and_the_filters_apply() {
        let mut cands = vec![seed("src/a.rs", 1, 9, "a", 1.0)];
        let s = settings();
        let ask = ask(&cands, &s);
        let links = GraphLinks {
            with_graph: vec![cands[0].record.namespace.clone()],
            links: vec![
                link(0, LinkDirection::Uses, "src/b.rs", 2),
                link(0, LinkDirection::Uses, "vendor/c.rs", 2),
            ],
        };
        let fetched = vec![record_at("src/b.rs", 1, 5), record_at("vendor/c.rs", 1, 5)];
        let n = add(
            &mut cands,
            Found { ask: &ask, links: &links, fetched: &fetched },
            &s,
            8,
            |_| 3.0,
            |r| !r.chunk.path.starts_with("vendor/"),
        );
        assert_eq!(n, 1);
        assert_eq!(cands[0].record.chunk.path, "src/b.rs");
        assert!((cands[0].score - 1.5).abs() < 1e-6);
    }

    #[test]
    fn after_matches_they_rank_below_the_first_top_k() {
        let mut cands = vec![seed("src/a.rs", 1, 9, "a", 1.0), seed("src/b.rs", 1, 9, "b", 0.6)];
        let s = GraphCandidatesSettings { after_matches: true, ..settings() };
        let ask = ask(&cands, &s);
        let links = GraphLinks {
            with_graph: vec![cands[0].record.namespace.clone()],
            links: vec![link(0, LinkDirection::Uses, "src/c.rs", 2)],
        };
        let fetched = vec![record_at("src/c.rs", 1, 5)];
        assert_eq!(
            add(&mut cands, Found { ask: &ask, links: &links, fetched: &fetched }, &s, 2, |_| 3.0, |_| true),
            1
        );
        let paths: Vec<&str> = cands.iter().map(|c| c.record.chunk.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "src/b.rs", "src/c.rs"]);
        assert!(cands[2].score < 0.6);
    }

    #[test]
    fn no_seed_with_a_graph_node_asks_nothing() {
        let cands = vec![Candidate::new(record_at("README.md", 1, 5), 1.0)];
        assert!(ask(&cands, &settings()).queries.is_empty());
    }
}
