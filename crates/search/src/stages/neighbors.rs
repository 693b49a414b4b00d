//! Neighbour expansion: add the chunks around a match so the reader sees the function head or the
//! rest of the class. `LINEAR` takes `radius` chunks on each side in the same file;
//! `PARENT_SYMBOL` takes the other pieces of the enclosing definition (`parent_symbol`), falling
//! back to `LINEAR` for matches without one; `CALL_GRAPH` takes the callees and callers of the
//! match's code (depth 1, resolved `CALLS` edges, by confidence then proximity: the callee's
//! definition, the caller's call site), falling back to `LINEAR` for matches without a graph node
//! (text, Markdown) and, with a warning, for matches of a namespace without a code graph. Added
//! chunks come after the direct matches, grouped by the match they surround, tagged
//! `neighborOfSpanHash`, scored just below it; at most `2 × radius` per match and `limit` in total.
use std::collections::HashSet;

use crate::candidate::Candidate;
use crate::ports::{
    link_order, ChunkRecord, GraphLinks, LinePoint, LinkDirection, NeighborRange, SymbolFamily, SymbolLink,
    SymbolQuery,
};
use crate::profile::NeighborStrategy;

/// Names of callees / callers a match carries in `metadata.uses` / `metadata.usedBy`.
pub const LINK_NAMES: usize = 5;

/// What to read from the store for the given matches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NeighborLookups {
    pub ranges: Vec<NeighborRange>,
    pub families: Vec<SymbolFamily>,
}

/// A document parent returned for its matched child (two-stage retrieval) is already the context
/// around the child: its siblings must not come back as neighbours.
fn is_prose_parent(c: &Candidate) -> bool {
    c.snippet.as_ref().is_some_and(|s| s.parent_id.is_some())
}

/// Lookups for the matches.
pub fn lookups(matches: &[Candidate], strategy: NeighborStrategy, radius: u32) -> NeighborLookups {
    let mut out = NeighborLookups::default();
    if strategy == NeighborStrategy::Off {
        return out;
    }
    for c in matches.iter().filter(|c| !is_prose_parent(c)) {
        let chunk = &c.record.chunk;
        let family_symbol = chunk.metadata.parent_symbol.clone();
        match (strategy, family_symbol) {
            (NeighborStrategy::ParentSymbol, Some(symbol)) => {
                let f =
                    SymbolFamily { namespace: c.record.namespace.clone(), path: chunk.path.clone(), symbol };
                if !out.families.contains(&f) {
                    out.families.push(f);
                }
            }
            _ if radius > 0 => out.ranges.push(NeighborRange {
                namespace: c.record.namespace.clone(),
                path: chunk.path.clone(),
                from_index: chunk.chunk_index.saturating_sub(radius),
                to_index: chunk.chunk_index.saturating_add(radius),
            }),
            _ => {}
        }
    }
    out
}

/// The code-graph question about the matches: their namespaces, and one query per match that
/// has a graph node (`of[i]` is match `i`'s query).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphAsk {
    pub namespaces: Vec<String>,
    pub queries: Vec<SymbolQuery>,
    pub of: Vec<Option<usize>>,
}

impl GraphAsk {
    /// The lines whose chunks to read: where each of `links` (the answer to these queries) leads
    /// — a callee's definition, a caller's call site — each line once, in the links' order.
    pub fn points(&self, links: &GraphLinks) -> Vec<LinePoint> {
        let mut out: Vec<LinePoint> = Vec::new();
        for l in &links.links {
            let q = &self.queries[l.query];
            let p = LinePoint { namespace: q.namespace.clone(), path: l.path.clone(), line: l.line };
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }
}

pub fn graph_ask(matches: &[Candidate]) -> GraphAsk {
    let mut ask = GraphAsk::default();
    for c in matches {
        let (ns, chunk) = (&c.record.namespace, &c.record.chunk);
        if !ask.namespaces.contains(ns) {
            ask.namespaces.push(ns.clone());
        }
        let q = chunk.metadata.symbol_id.as_ref().map(|id| SymbolQuery {
            namespace: ns.clone(),
            path: chunk.path.clone(),
            start_line: chunk.start_line,
            end_line: chunk.end_line,
            symbol_id: Some(id.clone()),
        });
        ask.of.push(q.map(|q| match ask.queries.iter().position(|x| *x == q) {
            Some(i) => i,
            None => {
                ask.queries.push(q);
                ask.queries.len() - 1
            }
        }));
    }
    ask
}

/// The links of query `q` in one direction, best first.
fn links_for<'a>(
    ask: &'a GraphAsk,
    links: &'a GraphLinks,
    q: usize,
    direction: LinkDirection,
) -> Vec<&'a SymbolLink> {
    let mut mine: Vec<&SymbolLink> =
        links.links.iter().filter(|l| l.query == q && l.direction == direction).collect();
    mine.sort_by(|a, b| link_order(&ask.queries[q], a, b));
    mine
}

/// Sets `uses` / `used_by` of every match that has a graph node.
pub fn annotate(matches: &mut [Candidate], ask: &GraphAsk, links: &GraphLinks) {
    for (m, q) in matches.iter_mut().zip(&ask.of) {
        let Some(q) = *q else { continue };
        let names = |direction| {
            let mut out: Vec<String> = Vec::new();
            for l in links_for(ask, links, q, direction) {
                if out.len() < LINK_NAMES && !out.contains(&l.name) {
                    out.push(l.name.clone());
                }
            }
            out
        };
        m.uses = names(LinkDirection::Uses);
        m.used_by = names(LinkDirection::UsedBy);
    }
}

/// `CALL_GRAPH` for the matches: which follow the graph, the lines whose chunks to read for
/// them, and the namespaces that have no graph (their matches use `LINEAR`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallGraphPlan {
    pub follow: Vec<bool>,
    pub points: Vec<LinePoint>,
    pub without_graph: Vec<String>,
}

pub fn call_graph_plan(matches: &[Candidate], ask: &GraphAsk, links: &GraphLinks) -> CallGraphPlan {
    let mut plan = CallGraphPlan::default();
    for (m, q) in matches.iter().zip(&ask.of) {
        let ns = &m.record.namespace;
        let graphed = links.with_graph.contains(ns);
        if !graphed && !plan.without_graph.contains(ns) {
            plan.without_graph.push(ns.clone());
        }
        plan.follow.push(graphed && q.is_some());
    }
    plan.points = ask.points(links);
    plan
}

/// The chunk that holds `line` of `path`: the one whose own lines (past its overlap) hold it,
/// else the first one holding it.
pub(crate) fn chunk_holding<'a>(
    fetched: &'a [ChunkRecord],
    ns: &str,
    path: &str,
    line: u32,
) -> Option<&'a ChunkRecord> {
    let holding = fetched.iter().filter(|r| {
        r.namespace == ns && r.chunk.path == path && r.chunk.start_line <= line && r.chunk.end_line >= line
    });
    holding.min_by_key(|r| {
        let own = line >= r.chunk.start_line + r.chunk.metadata.overlap_lines;
        (!own, r.chunk.chunk_index)
    })
}

/// Append fetched neighbours after the matches. A neighbour belongs to the first match (in list
/// order) whose range or family contains it; chunks already in the list are never added twice;
/// nearer neighbours (by chunk index) come first; at most `limit` in total.
pub fn insert(
    matches: Vec<Candidate>,
    fetched: &[ChunkRecord],
    strategy: NeighborStrategy,
    radius: u32,
    limit: usize,
) -> (Vec<Candidate>, usize) {
    expand(matches, radius, limit, |_, m| linear_or_family(m, fetched, strategy, radius))
}

/// [`insert`] for `CALL_GRAPH`: matches that follow the graph (`plan.follow`) get the chunks of
/// their callees and callers in link order (`fetched.1` holds the chunks of `plan.points`), the
/// others their `LINEAR` neighbours from `fetched.0`.
pub fn insert_call_graph(
    matches: Vec<Candidate>,
    (linear, at): (&[ChunkRecord], &[ChunkRecord]),
    ask: &GraphAsk,
    links: &GraphLinks,
    plan: &CallGraphPlan,
    radius: u32,
    limit: usize,
) -> (Vec<Candidate>, usize) {
    expand(matches, radius, limit, |i, m| match (plan.follow.get(i), ask.of.get(i)) {
        (Some(true), Some(Some(q))) => {
            let mut mine: Vec<&SymbolLink> = links.links.iter().filter(|l| l.query == *q).collect();
            mine.sort_by(|a, b| link_order(&ask.queries[*q], a, b));
            let picked = mine
                .into_iter()
                .filter_map(|l| chunk_holding(at, &m.record.namespace, &l.path, l.line))
                .enumerate()
                .map(|(rank, r)| (r, rank as u32 + 1))
                .collect();
            (picked, false)
        }
        _ => linear_or_family(m, linear, NeighborStrategy::Linear, radius),
    })
}

/// The `LINEAR` / `PARENT_SYMBOL` neighbours of one match, nearest first, with their distance.
fn linear_or_family<'a>(
    origin: &Candidate,
    fetched: &'a [ChunkRecord],
    strategy: NeighborStrategy,
    radius: u32,
) -> (Vec<(&'a ChunkRecord, u32)>, bool) {
    let (ns, origin) = (&origin.record.namespace, &origin.record.chunk);
    let mut mine: Vec<&ChunkRecord> = fetched
        .iter()
        .filter(|r| r.namespace == *ns && r.chunk.path == origin.path && r.chunk.id != origin.id)
        .filter(|r| match (strategy, &origin.metadata.parent_symbol) {
            (NeighborStrategy::ParentSymbol, Some(parent)) => {
                r.chunk.metadata.parent_symbol.as_deref() == Some(parent)
                    || r.chunk.metadata.symbol_name.as_deref() == Some(parent)
            }
            _ => r.chunk.chunk_index.abs_diff(origin.chunk_index) <= radius,
        })
        .collect();
    mine.sort_by_key(|r| (r.chunk.chunk_index.abs_diff(origin.chunk_index), r.chunk.chunk_index));
    let picked =
        mine.into_iter().map(|r| (r, r.chunk.chunk_index.abs_diff(origin.chunk_index).max(1))).collect();
    (picked, true)
}

/// Adds to each match the neighbours `pick` gives (best first, with a distance that lowers the
/// score), skipping chunks already present; `file_order` sorts a match's group by position.
fn expand<'a>(
    matches: Vec<Candidate>,
    radius: u32,
    limit: usize,
    mut pick: impl FnMut(usize, &Candidate) -> (Vec<(&'a ChunkRecord, u32)>, bool),
) -> (Vec<Candidate>, usize) {
    let mut present: HashSet<(String, String)> =
        matches.iter().map(|c| (c.record.namespace.clone(), c.record.chunk.id.clone())).collect();
    let mut added = 0;
    let mut out = Vec::with_capacity(matches.len() + limit);
    let mut groups: Vec<Candidate> = Vec::new();
    for (i, m) in matches.into_iter().enumerate() {
        if added >= limit || is_prose_parent(&m) {
            out.push(m);
            continue;
        }
        let (picked, file_order) = pick(i, &m);
        let origin_score = m.score;
        let origin_span = m.record.chunk.metadata.span_hash.clone();
        out.push(m);
        // At most `radius` on each side of every match, for every strategy: a big family must
        // not push the next matches far down the list.
        let per_match = 2 * radius as usize;
        let mut group: Vec<Candidate> = Vec::new();
        for (r, distance) in picked {
            if added >= limit || group.len() >= per_match {
                break;
            }
            if !present.insert((r.namespace.clone(), r.chunk.id.clone())) {
                continue;
            }
            let mut c = Candidate::new(r.clone(), origin_score * 0.9f32.powi(distance as i32));
            c.neighbor_of = Some(origin_span.clone());
            group.push(c);
            added += 1;
        }
        if file_order {
            // File order within the group reads naturally.
            group.sort_by_key(|c| c.record.chunk.chunk_index);
        }
        groups.extend(group);
    }
    // Neighbours follow every direct match (grouped by origin, in the origins' order): they add
    // context without pushing the next direct match down, and the context budget trims them
    // first. (Interleaving them cost ~0.03 MRR@10 in the retrieval benchmark.)
    out.extend(groups);
    (out, added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{chunk_at, record};
    use edgerag_core::ChunkType;

    fn file(path: &str, n: u32) -> Vec<ChunkRecord> {
        (0..n)
            .map(|i| {
                let mut c = chunk_at(path, ChunkType::CodeMethod, &format!("chunk {i}"), i * 10 + 1, i);
                c.metadata.parent_symbol = Some(if i < 3 { "A".into() } else { "B".into() });
                record("ns", c)
            })
            .collect()
    }

    #[test]
    fn linear_adds_radius_around_each_match_once() {
        let chunks = file("a.rs", 6);
        let matches = vec![Candidate::new(chunks[2].clone(), 1.0), Candidate::new(chunks[3].clone(), 0.9)];
        let l = lookups(&matches, NeighborStrategy::Linear, 1);
        assert_eq!(l.ranges.len(), 2);
        assert_eq!((l.ranges[0].from_index, l.ranges[0].to_index), (1, 3));
        let (out, added) = insert(matches, &chunks, NeighborStrategy::Linear, 1, 10);
        let idx: Vec<u32> = out.iter().map(|c| c.record.chunk.chunk_index).collect();
        assert_eq!(idx, [2, 3, 1, 4]);
        assert_eq!(added, 2);
        assert!(out[2].score < 1.0 && out[2].score > 0.8);
        assert_eq!(out[2].neighbor_of.as_deref(), Some(chunks[2].chunk.metadata.span_hash.as_str()));
        assert_eq!(out[3].neighbor_of.as_deref(), Some(chunks[3].chunk.metadata.span_hash.as_str()));
    }

    #[test]
    fn limit_caps_the_total() {
        let chunks = file("a.rs", 6);
        let matches = vec![Candidate::new(chunks[2].clone(), 1.0)];
        let (out, added) = insert(matches, &chunks, NeighborStrategy::Linear, 3, 2);
        assert_eq!(added, 2);
        assert_eq!(out.iter().map(|c| c.record.chunk.chunk_index).collect::<Vec<_>>(), [2, 1, 3]);
    }

    #[test]
    fn parent_symbol_takes_the_family() {
        let chunks = file("a.rs", 6);
        let matches = vec![Candidate::new(chunks[4].clone(), 1.0)];
        let l = lookups(&matches, NeighborStrategy::ParentSymbol, 1);
        assert_eq!(l.families.len(), 1);
        assert_eq!(l.families[0].symbol, "B");
        let (out, _) = insert(matches, &chunks, NeighborStrategy::ParentSymbol, 1, 10);
        assert_eq!(out.iter().map(|c| c.record.chunk.chunk_index).collect::<Vec<_>>(), [4, 3, 5]);
    }

    #[test]
    fn off_does_nothing() {
        let chunks = file("a.rs", 3);
        assert_eq!(
            lookups(&[Candidate::new(chunks[1].clone(), 1.0)], NeighborStrategy::Off, 2),
            NeighborLookups::default()
        );
    }

    fn link(
        query: usize,
        direction: LinkDirection,
        name: &str,
        path: &str,
        line: u32,
        confidence: f32,
    ) -> SymbolLink {
        SymbolLink { query, direction, name: name.into(), path: path.into(), line, confidence }
    }

    #[test]
    fn call_graph_brings_callees_and_callers_by_confidence_and_the_rest_linear() {
        let mut a = file("a.rs", 6);
        a[1].chunk.metadata.symbol_id = Some("node-1".into());
        let c = file("c.rs", 2);
        let doc = file("d.md", 3);
        let mut matches = vec![Candidate::new(a[1].clone(), 1.0), Candidate::new(doc[1].clone(), 0.8)];
        let ask = graph_ask(&matches);
        assert_eq!(ask.of, [Some(0), None]);
        assert_eq!(ask.queries[0].symbol_id.as_deref(), Some("node-1"));
        assert_eq!(ask.namespaces, ["ns"]);
        let links = GraphLinks {
            with_graph: vec!["ns".into()],
            links: vec![
                link(0, LinkDirection::UsedBy, "caller", "c.rs", 1, 0.85),
                link(0, LinkDirection::Uses, "helper", "a.rs", 41, 0.9),
                link(0, LinkDirection::Uses, "far", "a.rs", 51, 0.5),
                link(0, LinkDirection::Uses, "helper", "a.rs", 42, 0.9),
            ],
        };
        annotate(&mut matches, &ask, &links);
        assert_eq!(matches[0].uses, ["helper", "far"]);
        assert_eq!(matches[0].used_by, ["caller"]);
        assert!(matches[1].uses.is_empty() && matches[1].used_by.is_empty());

        let plan = call_graph_plan(&matches, &ask, &links);
        assert_eq!(plan.follow, [true, false]);
        assert!(plan.without_graph.is_empty());
        assert_eq!(plan.points.len(), 4);
        // The document match has no node: its neighbours are LINEAR ones.
        let linear = lookups(&matches[1..], NeighborStrategy::Linear, 1);
        assert_eq!(linear.ranges.len(), 1);
        let at: Vec<ChunkRecord> = vec![a[4].clone(), a[5].clone(), c[0].clone()];
        let (out, added) = insert_call_graph(matches, (&doc, &at), &ask, &links, &plan, 1, 10);
        let got: Vec<(&str, u32)> =
            out.iter().map(|c| (c.record.chunk.path.as_str(), c.record.chunk.chunk_index)).collect();
        // Two per match (radius 1): the 0.9 callee, then the 0.85 caller; `far` is cut.
        assert_eq!(got, [("a.rs", 1), ("d.md", 1), ("a.rs", 4), ("c.rs", 0), ("d.md", 0), ("d.md", 2)]);
        assert_eq!(added, 4);
        assert_eq!(out[2].neighbor_of.as_deref(), Some(a[1].chunk.metadata.span_hash.as_str()));
        assert!(out[2].score > out[3].score && out[3].score < 1.0);
    }

    #[test]
    fn call_graph_uses_linear_for_a_namespace_without_a_graph() {
        let mut a = file("a.rs", 4);
        a[1].chunk.metadata.symbol_id = Some("node-1".into());
        let matches = vec![Candidate::new(a[1].clone(), 1.0)];
        let ask = graph_ask(&matches);
        let links = GraphLinks::default();
        let plan = call_graph_plan(&matches, &ask, &links);
        assert_eq!(plan.follow, [false]);
        assert_eq!(plan.without_graph, ["ns"]);
        let (out, added) = insert_call_graph(matches, (&a, &[]), &ask, &links, &plan, 1, 10);
        assert_eq!(added, 2);
        assert_eq!(out.iter().map(|c| c.record.chunk.chunk_index).collect::<Vec<_>>(), [1, 0, 2]);
    }

    #[test]
    fn the_chunk_at_a_line_is_the_one_that_owns_it_past_its_overlap() {
        let mut a = file("a.rs", 3);
        // Chunk 2 at line 11 (chunk 1's last line) as its overlap, so line 11 is chunk 1's.
        a[2].chunk.start_line = 11;
        a[2].chunk.metadata.overlap_lines = 1;
        assert_eq!(chunk_holding(&a, "ns", "a.rs", 11).map(|r| r.chunk.chunk_index), Some(1));
        assert_eq!(chunk_holding(&a, "ns", "a.rs", 21).map(|r| r.chunk.chunk_index), Some(2));
        // A line held only as overlap still finds its chunk.
        a[1].chunk.end_line = 10;
        assert_eq!(chunk_holding(&a, "ns", "a.rs", 11).map(|r| r.chunk.chunk_index), Some(2));
        assert!(chunk_holding(&a, "ns", "a.rs", 99).is_none());
        assert!(chunk_holding(&a, "other", "a.rs", 11).is_none());
    }
}
