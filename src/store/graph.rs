//! `graph_nodes` / `graph_edges` / `graph_files`: the code graph of a namespace (see
//! `migrations/0020_code_graph.sql`). A file's rows are replaced with the file; the namespace's
//! edges are rewritten from the stored per-file graphs when a job completes.
use edgerag_core::graph::{Edge, FileGraph, Node};
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{Arg, Db, StoreError, StoreResult, MAX_PARAMS};
use crate::args;

const NODE_PARAMS: usize = 12;
const EDGE_PARAMS: usize = 8;
/// Rows per INSERT under the 100-parameter limit (the namespace is bound once).
const NODES_PER_INSERT: usize = (MAX_PARAMS - 1) / NODE_PARAMS;
const EDGES_PER_INSERT: usize = (MAX_PARAMS - 1) / EDGE_PARAMS;

/// `(?2, ?3, …)` groups for `rows` rows of `width` parameters after the fixed `?1`.
fn values(rows: usize, width: usize) -> String {
    (0..rows)
        .map(|r| {
            let cols: Vec<String> = (0..width).map(|c| format!("?{}", 2 + r * width + c)).collect();
            format!("({})", cols.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn node_statements(db: &Db, namespace: &str, nodes: &[Node]) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for group in nodes.chunks(NODES_PER_INSERT) {
        let mut params: Vec<Arg> = args![namespace].into();
        for n in group {
            params.extend(args![
                &n.id,
                &n.path,
                n.kind.as_str(),
                &n.name,
                &n.fqn,
                &n.package,
                &n.signature,
                &n.doc,
                n.language.as_str(),
                n.start_line,
                n.end_line,
                &n.parent
            ]);
        }
        let sql = format!(
            "INSERT OR REPLACE INTO graph_nodes (namespace, id, path, kind, name, fqn, package, signature, doc, \
               language, start_line, end_line, parent) \
             SELECT ?1, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, \
               v.column9, v.column10, v.column11, v.column12 FROM (VALUES {}) AS v",
            values(group.len(), NODE_PARAMS)
        );
        out.push(db.stmt(&sql, &params)?);
    }
    Ok(out)
}

fn resolution_str(edge: &Edge) -> String {
    serde_json::to_value(edge.resolution).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn edge_statements(db: &Db, namespace: &str, edges: &[&Edge]) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for group in edges.chunks(EDGES_PER_INSERT) {
        let resolutions: Vec<String> = group.iter().map(|e| resolution_str(e)).collect();
        let mut params: Vec<Arg> = args![namespace].into();
        for (e, r) in group.iter().zip(&resolutions) {
            params.extend(args![
                &e.src,
                &e.dst,
                &e.dst_name,
                e.kind.as_str(),
                Arg::Real(f64::from(e.confidence)),
                &e.path,
                e.line,
                r.as_str()
            ]);
        }
        let sql = format!(
            "INSERT INTO graph_edges (namespace, src, dst, dst_name, kind, confidence, path, line, resolution) \
             SELECT ?1, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8 \
             FROM (VALUES {}) AS v",
            values(group.len(), EDGE_PARAMS)
        );
        out.push(db.stmt(&sql, &params)?);
    }
    Ok(out)
}

/// Statements removing every graph row of one file (changed, deleted, or no longer code).
pub fn delete_file_statements(db: &Db, namespace: &str, path: &str) -> StoreResult<Vec<D1PreparedStatement>> {
    ["graph_nodes", "graph_edges", "graph_files"]
        .iter()
        .map(|t| {
            db.stmt(&format!("DELETE FROM {t} WHERE namespace = ? AND path = ?"), &args![namespace, path])
        })
        .collect()
}

/// Statements replacing one file's graph: its nodes, the edges its own file resolved (or left
/// external without a hint), and the unresolved graph kept for cross-file resolution. A file
/// without a graph (not code, or no grammar) only loses its old rows.
pub fn replace_file_statements(
    db: &Db,
    namespace: &str,
    path: &str,
    graph: Option<&FileGraph>,
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = delete_file_statements(db, namespace, path)?;
    let Some(graph) = graph else { return Ok(out) };
    let json = serde_json::to_string(graph).map_err(|e| StoreError(format!("{path}: {e}")))?;
    out.push(db.stmt(
        "INSERT INTO graph_files (namespace, path, graph) VALUES (?, ?, ?)",
        &args![namespace, path, json.as_str()],
    )?);
    out.extend(node_statements(db, namespace, &graph.nodes)?);
    let local: Vec<&Edge> = graph.edges.iter().filter(|e| e.hint.is_none()).collect();
    out.extend(edge_statements(db, namespace, &local)?);
    Ok(out)
}

#[derive(Deserialize)]
struct StoredGraph {
    graph: String,
}

/// Cross-file resolution of a namespace: drops the graphs of files no longer indexed, resolves
/// every stored file graph together and rewrites all the namespace's edges in one transaction.
/// Deterministic and idempotent (a rerun writes the same rows), so it is safe to repeat.
pub async fn resolve_namespace(db: &Db, namespace: &str) -> StoreResult<usize> {
    let orphans = "namespace = ?1 AND path NOT IN (SELECT path FROM files WHERE namespace = ?1)";
    db.batch(
        ["graph_files", "graph_nodes"]
            .iter()
            .map(|t| db.stmt(&format!("DELETE FROM {t} WHERE {orphans}"), &args![namespace]))
            .collect::<StoreResult<Vec<_>>>()?,
    )
    .await?;
    let stored: Vec<StoredGraph> =
        db.all("SELECT graph FROM graph_files WHERE namespace = ? ORDER BY path", &args![namespace]).await?;
    let mut files = stored
        .iter()
        .map(|s| serde_json::from_str::<FileGraph>(&s.graph))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StoreError(format!("stored file graph: {e}")))?;
    edgerag_core::graph::resolve(&mut files);
    let edges: Vec<&Edge> = files.iter().flat_map(|f| &f.edges).collect();
    let mut statements = vec![db.stmt("DELETE FROM graph_edges WHERE namespace = ?", &args![namespace])?];
    statements.extend(edge_statements(db, namespace, &edges)?);
    db.batch(statements).await?;
    Ok(edges.len())
}
