//! Properties of the code graph, on every code fixture of every grammar language and on mutated
//! copies of them (lines dropped, duplicated, swapped — broken code included): every node's span
//! lies in its file, CONTAINS forms a forest that matches the `parent` fields, every edge starts at
//! a node of its file and ends at a node or nowhere (external), ids are unique, the same input
//! gives the same graph, and each chunk carries the innermost symbol holding its lines. Each
//! grammar language also yields definitions and calls.
#![allow(clippy::unwrap_used)]
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use edgerag_core::graph::{chunk_with_graph, extract_graph, resolve, EdgeKind, FileGraph, NodeKind};
use edgerag_core::{ChunkConfig, Language};
use proptest::prelude::*;

/// One fixture per grammar language.
const SOURCES: &[(&str, Language)] = &[
    ("typescript/inventory_service.ts", Language::Typescript),
    ("tsx/ProductCard.tsx", Language::Tsx),
    ("javascript/router.js", Language::Javascript),
    ("python/scheduler.py", Language::Python),
    ("rust/order_book.rs", Language::Rust),
    ("go/cache.go", Language::Go),
    ("java/LibraryCatalog.java", Language::Java),
    ("c/ring_buffer.c", Language::C),
    ("cpp/matrix.cpp", Language::Cpp),
    ("csharp/OrderProcessor.cs", Language::Csharp),
    ("ruby/subscriptions.rb", Language::Ruby),
    ("php/UserRepository.php", Language::Php),
    ("kotlin/Playlist.kt", Language::Kotlin),
];

fn sources() -> &'static [(String, String)] {
    static CACHE: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CACHE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        SOURCES
            .iter()
            .map(|(rel, _)| (rel.to_string(), std::fs::read_to_string(root.join(rel)).unwrap()))
            .collect()
    })
}

/// Checks the structural properties of one file's graph; panics with the reason.
fn check_file(graph: &FileGraph, text: &str) {
    let lines = text.lines().count().max(1) as u32;
    let ids: HashMap<&str, usize> = graph.nodes.iter().enumerate().map(|(i, n)| (&*n.id, i)).collect();
    assert_eq!(ids.len(), graph.nodes.len(), "{}: node ids are unique", graph.path);
    let first = &graph.nodes[0];
    assert_eq!((first.kind, first.parent.as_deref()), (NodeKind::Module, None), "{}", graph.path);
    for (i, n) in graph.nodes.iter().enumerate() {
        assert!(
            1 <= n.start_line && n.start_line <= n.end_line && n.end_line <= lines,
            "{}: {} spans L{}-{} of {lines}",
            graph.path,
            n.fqn,
            n.start_line,
            n.end_line
        );
        assert_eq!(*n.path, *graph.path);
        if i > 0 {
            // A parent comes earlier, so following parents always ends at the module: a forest.
            let parent =
                n.parent.as_deref().unwrap_or_else(|| panic!("{}: {} has no parent", graph.path, n.fqn));
            let p = ids[parent];
            assert!(p < i, "{}: {} is parented by a later node", graph.path, n.fqn);
        }
    }
    let mut contains: HashSet<(&str, &str)> = HashSet::new();
    for e in &graph.edges {
        assert!(ids.contains_key(&*e.src), "{}: edge from an unknown node", graph.path);
        assert!(e.line >= 1 && e.line <= lines, "{}: edge line {} of {lines}", graph.path, e.line);
        assert!((0.0..=1.0).contains(&e.confidence));
        match (&e.dst, e.kind) {
            (Some(dst), EdgeKind::Contains) => {
                assert!(ids.contains_key(&**dst));
                contains.insert((&*e.src, &**dst));
            }
            (None, EdgeKind::Contains) => panic!("{}: CONTAINS without a target", graph.path),
            (None, _) => assert_eq!(e.confidence, 0.0, "an external edge has no confidence"),
            (Some(_), _) => assert!(e.confidence > 0.0),
        }
    }
    let parents: HashSet<(&str, &str)> =
        graph.nodes.iter().filter_map(|n| Some((n.parent.as_deref()?, &*n.id))).collect();
    assert_eq!(contains, parents, "{}: CONTAINS edges are exactly the parent links", graph.path);
}

fn check_resolved(graphs: &[FileGraph]) {
    let all: HashSet<&str> = graphs.iter().flat_map(|g| g.nodes.iter()).map(|n| &*n.id).collect();
    for g in graphs {
        for e in &g.edges {
            if let Some(dst) = &e.dst {
                assert!(all.contains(&**dst), "{}: edge to an unknown node", g.path);
            }
        }
    }
}

#[test]
fn every_grammar_language_yields_definitions_and_calls() {
    for ((path, text), (_, language)) in sources().iter().zip(SOURCES) {
        let graph = extract_graph(path, text, *language).unwrap_or_else(|| panic!("{path}: no graph"));
        check_file(&graph, text);
        let defs = graph.nodes.iter().filter(|n| n.kind != NodeKind::Module).count();
        let calls = graph.edges.iter().filter(|e| e.kind == EdgeKind::Calls).count();
        let callables = graph.nodes.iter().filter(|n| n.kind.is_body()).count();
        assert!(defs >= 3 && callables >= 1, "{path}: {defs} definitions, {callables} functions");
        assert!(calls >= 1, "{path}: no calls found");
    }
}

#[test]
fn the_graph_of_one_parse_equals_the_graph_of_a_fresh_parse() {
    for (path, text) in sources() {
        let language = Language::detect(path);
        let (_, shared) = chunk_with_graph(path, text, &ChunkConfig::default());
        assert_eq!(shared, extract_graph(path, text, language), "{path}");
    }
}

/// A fixture with some of its lines dropped, duplicated or swapped.
fn mutated() -> impl Strategy<Value = (String, String)> {
    (0..SOURCES.len(), proptest::collection::vec((0u8..3, any::<prop::sample::Index>()), 0..12)).prop_map(
        |(which, edits)| {
            let (path, text) = &sources()[which];
            let mut lines: Vec<&str> = text.lines().collect();
            for (op, at) in edits {
                if lines.is_empty() {
                    break;
                }
                let i = at.index(lines.len());
                match op {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(i, lines[i]),
                    _ => {
                        let j = lines.len() - 1 - i;
                        lines.swap(i, j);
                    }
                }
            }
            (path.clone(), lines.join("\n"))
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn graphs_of_mutated_code_keep_their_invariants((path, text) in mutated()) {
        let language = Language::detect(&path);
        let graph = extract_graph(&path, &text, language).unwrap();
        check_file(&graph, &text);
        let again = extract_graph(&path, &text, language);
        prop_assert_eq!(Some(&graph), again.as_ref());
        let mut graphs = vec![graph];
        resolve(&mut graphs);
        check_file(&graphs[0], &text);
        check_resolved(&graphs);
    }

    #[test]
    fn every_chunk_names_the_innermost_symbol_holding_it((path, text) in mutated(), max_lines in 3usize..40) {
        let config = ChunkConfig { max_lines, overlap_lines: max_lines % 3, ..ChunkConfig::default() };
        let (chunks, graph) = chunk_with_graph(&path, &text, &config);
        let graph = graph.unwrap();
        prop_assert!(!chunks.is_empty() || text.trim().is_empty());
        for chunk in &chunks {
            let expected = graph.node_for_span(chunk.start_line, chunk.end_line).map(|n| &*n.id);
            prop_assert_eq!(chunk.metadata.symbol_id.as_deref(), expected, "chunk at {}–{}", chunk.start_line, chunk.end_line);
        }
    }
}

#[test]
fn resolution_over_all_fixtures_keeps_edges_on_known_nodes() {
    let mut graphs: Vec<FileGraph> =
        sources().iter().filter_map(|(p, t)| extract_graph(p, t, Language::detect(p))).collect();
    resolve(&mut graphs);
    check_resolved(&graphs);
    for (g, (_, text)) in graphs.iter().zip(sources()) {
        check_file(g, text);
    }
}
