//! The code graph on hand-written fixture projects (`tests/fixtures/graph/<lang>/`), each with
//! the edges a reader finds by hand in its `expected.json`: resolved CALLS are scored (precision
//! and recall per language), CONTAINS / IMPORTS / EXTENDS / endpoints / docs must be present, and
//! the whole graph is snapshotted.
#![allow(clippy::unwrap_used)]
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::path::Path;

use edgerag_core::graph::{chunk_with_graph, resolve, EdgeKind, FileGraph};
use edgerag_core::{chunk_text, ChunkConfig};
use serde::Deserialize;

#[derive(Deserialize)]
struct Expected {
    calls: Vec<(String, String)>,
    contains: Vec<(String, String)>,
    imports: Vec<(String, String)>,
    extends: Vec<(String, String)>,
    /// Type uses (`REFERENCES`) that point at a symbol of the project.
    references: Vec<(String, String)>,
    endpoints: Vec<(String, String, String)>,
    docs: Vec<(String, String)>,
}

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.file_name().unwrap() != "expected.json" {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The project's files (paths relative to its root) and their resolved graph.
pub fn project(lang: &str) -> (Vec<(String, String)>, Vec<FileGraph>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/graph").join(lang);
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let config = ChunkConfig::default();
    let mut graphs = Vec::new();
    for (path, text) in &files {
        let (chunks, graph) = chunk_with_graph(path, text, &config);
        // Chunking with the graph changes nothing about the chunks but their node.
        let mut plain = chunk_text(path, text, &config);
        let Some(g) = graph.as_ref() else {
            assert_eq!(chunks, plain, "{path}");
            assert!(chunks.iter().all(|c| c.metadata.symbol_id.is_none()), "{path}: a node without a graph");
            continue;
        };
        for (c, p) in chunks.iter().zip(&mut plain) {
            let id = c
                .metadata
                .symbol_id
                .as_deref()
                .unwrap_or_else(|| panic!("{path}: chunk {} has no node", c.chunk_index));
            let node =
                g.nodes.iter().find(|n| *n.id == *id).unwrap_or_else(|| panic!("{path}: unknown node {id}"));
            // The innermost node holding the chunk: none of its children holds it too.
            let holds =
                |n: &edgerag_core::graph::Node| n.start_line <= c.start_line && n.end_line >= c.end_line;
            if node.parent.is_some() && holds(node) {
                let inner =
                    g.nodes.iter().filter(|n| n.parent.as_deref() == Some(id) && n.kind.as_str() != "FIELD");
                assert!(
                    inner.filter(|n| holds(n)).count() == 0,
                    "{path}: {} is not the innermost node of chunk {}",
                    node.fqn,
                    c.chunk_index
                );
            }
            p.metadata.symbol_id = c.metadata.symbol_id.clone();
        }
        assert_eq!(chunks, plain, "{path}");
        graphs.extend(graph);
    }
    resolve(&mut graphs);
    (files, graphs)
}

fn expected(lang: &str) -> Expected {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/graph")
        .join(lang)
        .join("expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn pairs(graphs: &[FileGraph], kinds: &[EdgeKind]) -> BTreeSet<(String, String)> {
    let fqn: HashMap<&str, &str> =
        graphs.iter().flat_map(|g| g.nodes.iter()).map(|n| (&*n.id, n.fqn.as_str())).collect();
    graphs
        .iter()
        .flat_map(|g| g.edges.iter())
        .filter(|e| kinds.contains(&e.kind))
        .filter_map(|e| Some((fqn[&*e.src].to_string(), fqn[e.dst.as_deref()?].to_string())))
        .collect()
}

fn missing(expected: &[(String, String)], actual: &BTreeSet<(String, String)>) -> Vec<(String, String)> {
    expected.iter().filter(|p| !actual.contains(*p)).cloned().collect()
}

/// One compact line per node and edge.
fn view(graphs: &[FileGraph]) -> String {
    let fqn: HashMap<&str, &str> =
        graphs.iter().flat_map(|g| g.nodes.iter()).map(|n| (&*n.id, n.fqn.as_str())).collect();
    let mut out = String::new();
    for g in graphs {
        writeln!(out, "== {}", g.path).unwrap();
        for n in &g.nodes {
            write!(out, "{} {} L{}-{}", n.kind.as_str(), n.fqn, n.start_line, n.end_line).unwrap();
            if let (Some(m), Some(r)) = (&n.http_method, &n.route) {
                write!(out, " [{m} {r}]").unwrap();
            }
            if let Some(s) = &n.signature {
                write!(out, " sig={s:?}").unwrap();
            }
            if let Some(d) = &n.doc {
                write!(out, " doc={d:?}").unwrap();
            }
            out.push('\n');
        }
        for e in &g.edges {
            if e.kind == EdgeKind::Contains {
                continue;
            }
            let dst = e.dst.as_deref().map(|d| fqn[d]).unwrap_or("∅");
            let resolution = serde_json::to_value(e.resolution).unwrap();
            writeln!(
                out,
                "  {} {} -> {} ({}, {}) L{} {:?}",
                e.kind.as_str(),
                fqn[&*e.src],
                dst,
                resolution.as_str().unwrap(),
                e.confidence,
                e.line,
                e.dst_name
            )
            .unwrap();
        }
    }
    out
}

/// Precision and recall of the resolved edges of `kind` against the expected pairs (targets:
/// precision ≥ 0.9, recall ≥ 0.8).
fn score(lang: &str, graphs: &[FileGraph], kind: EdgeKind, expected: &[(String, String)]) {
    let found = pairs(graphs, &[kind]);
    let expected: BTreeSet<(String, String)> = expected.iter().cloned().collect();
    assert!(!expected.is_empty(), "{lang}: no expected {} edges", kind.as_str());
    let hits = found.intersection(&expected).count();
    let precision = hits as f64 / found.len().max(1) as f64;
    let recall = hits as f64 / expected.len() as f64;
    let name = kind.as_str();
    eprintln!(
        "{lang}: resolved {name} precision {precision:.2} ({hits}/{}), recall {recall:.2} ({hits}/{})",
        found.len(),
        expected.len()
    );
    let wrong: Vec<_> = found.difference(&expected).collect();
    let lost: Vec<_> = expected.difference(&found).collect();
    assert!(precision >= 0.9, "{lang}: {name} precision {precision:.2}; not expected: {wrong:#?}");
    assert!(recall >= 0.8, "{lang}: {name} recall {recall:.2}; missing: {lost:#?}");
}

fn check(lang: &str) {
    let (_, graphs) = project(lang);
    let want = expected(lang);
    score(lang, &graphs, EdgeKind::Calls, &want.calls);
    score(lang, &graphs, EdgeKind::References, &want.references);

    let contains = pairs(&graphs, &[EdgeKind::Contains]);
    assert_eq!(missing(&want.contains, &contains), vec![], "{lang}: CONTAINS");
    let imports = pairs(&graphs, &[EdgeKind::Imports]);
    assert_eq!(missing(&want.imports, &imports), vec![], "{lang}: IMPORTS");
    let extends = pairs(&graphs, &[EdgeKind::Extends, EdgeKind::Implements]);
    assert_eq!(missing(&want.extends, &extends), vec![], "{lang}: EXTENDS / IMPLEMENTS");

    let nodes: Vec<_> = graphs.iter().flat_map(|g| g.nodes.iter()).collect();
    for (fqn, method, route) in &want.endpoints {
        let node = nodes.iter().find(|n| &n.fqn == fqn).unwrap_or_else(|| panic!("{lang}: no node {fqn}"));
        assert_eq!(node.kind.as_str(), "ENDPOINT", "{lang}: {fqn}");
        assert_eq!(
            (node.http_method.as_deref(), node.route.as_deref()),
            (Some(method.as_str()), Some(route.as_str()))
        );
    }
    for (fqn, doc) in &want.docs {
        let node = nodes.iter().find(|n| &n.fqn == fqn).unwrap_or_else(|| panic!("{lang}: no node {fqn}"));
        assert_eq!(node.doc.as_deref(), Some(doc.as_str()), "{lang}: doc of {fqn}");
    }
    insta::assert_snapshot!(format!("graph_{lang}"), view(&graphs));
}

#[test]
fn python_project_calls_references_imports_and_routes_are_found() {
    check("python");
}

#[test]
fn typescript_project_calls_references_imports_and_routes_are_found() {
    check("typescript");
}

#[test]
fn go_project_calls_references_imports_and_routes_are_found() {
    check("go");
}

#[test]
fn rust_project_calls_references_imports_and_routes_are_found() {
    check("rust");
}

#[test]
fn java_project_calls_references_imports_and_routes_are_found() {
    check("java");
}

#[test]
fn resolving_twice_changes_nothing() {
    let (_, mut graphs) = project("python");
    let once = graphs.clone();
    resolve(&mut graphs);
    assert_eq!(graphs, once);
}
