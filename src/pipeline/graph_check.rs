//! `POST /__test/graph/unsplit` `{namespace}` (test build only, served when
//! `EDGERAG_TEST_ROUTES=1`): the namespace's code graph as the job's paged resolution stored it,
//! against one resolution over every stored file graph at once (what the job's end did before it
//! was split). Returns the counts, the number of pages the configured `GRAPH_PAGE_BYTES` cuts the
//! stored graphs into, and whether the stored edges (every column) and ranks equal the unsplit
//! ones, with the first difference of each. It holds the whole graph: for tests only.
use std::collections::BTreeMap;

use edgerag_core::graph::{rank, FileGraph};
use serde::Deserialize;
use worker::{Env, Request, Response};

use crate::store::args;
use crate::store::{Db, StoreResult};

#[derive(Deserialize)]
struct Body {
    namespace: String,
}

#[derive(Deserialize)]
struct Stored {
    graph: String,
}

#[derive(Deserialize)]
struct EdgeRow {
    src: String,
    dst: Option<String>,
    dst_name: String,
    kind: String,
    confidence: f64,
    path: String,
    line: f64,
    resolution: String,
}

impl EdgeRow {
    fn key(&self) -> String {
        format!(
            "{}|{:?}|{}|{}|{}|{}|{}|{}",
            self.src,
            self.dst,
            self.dst_name,
            self.kind,
            self.confidence,
            self.path,
            self.line,
            self.resolution
        )
    }
}

#[derive(Deserialize)]
struct RankRow {
    id: String,
    rank: Option<f64>,
}

/// Handles the route; `None` when the path is not ours or test routes are off.
pub async fn handle(req: &mut Request, env: &Env) -> Option<worker::Result<Response>> {
    if req.path() != "/__test/graph/unsplit" || !crate::vector::test_routes::enabled(env) {
        return None;
    }
    let body: Body = match req.text().await.map(|t| serde_json::from_str(&t)) {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Some(error(&e.to_string())),
        Err(e) => return Some(error(&e.to_string())),
    };
    let ctx = match super::Ctx::for_namespace(env, &body.namespace, false).await {
        Ok(ctx) => ctx,
        Err(e) => return Some(error(&e.to_string())),
    };
    Some(match compare(&ctx.db, &body.namespace, ctx.cfg.graph_page_bytes).await {
        Ok(v) => Response::from_json(&v),
        Err(e) => error(&e.to_string()),
    })
}

async fn compare(db: &Db, ns: &str, page_bytes: usize) -> StoreResult<serde_json::Value> {
    let stored: Vec<Stored> =
        db.all("SELECT graph FROM graph_files WHERE namespace = ?1 ORDER BY path", &args![ns]).await?;
    let mut files: Vec<FileGraph> = stored
        .iter()
        .map(|s| serde_json::from_str(&s.graph))
        .collect::<Result<_, _>>()
        .map_err(|e| crate::store::StoreError(format!("stored file graph: {e}")))?;
    let sizes: Vec<usize> = stored.iter().map(|s| s.graph.len()).collect();
    drop(stored);
    let pages = edgerag_core::pages::pages_of(&sizes, page_bytes).len();
    edgerag_core::graph::resolve(&mut files);
    let mut unsplit: Vec<String> = files
        .iter()
        .flat_map(|f| &f.edges)
        .map(|e| {
            EdgeRow {
                src: e.src.to_string(),
                dst: e.dst.as_deref().map(str::to_string),
                dst_name: e.dst_name.clone(),
                kind: e.kind.as_str().to_string(),
                confidence: f64::from(e.confidence),
                path: e.path.to_string(),
                line: f64::from(e.line),
                resolution: serde_json::to_value(e.resolution)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            }
            .key()
        })
        .collect();
    let rows: Vec<EdgeRow> = db
        .all(
            "SELECT src, dst, dst_name, kind, confidence, path, line, resolution FROM graph_edges WHERE namespace = ?1",
            &args![ns],
        )
        .await?;
    let mut in_d1: Vec<String> = rows.iter().map(EdgeRow::key).collect();
    unsplit.sort();
    in_d1.sort();
    let edge_difference = first_difference(&unsplit, &in_d1);
    let cross_file =
        files.iter().flat_map(|f| &f.edges).filter(|e| e.hint.is_some() && e.dst.is_some()).count();
    let (nodes, by_file) = rank::stored_ranks(&files);
    let stored_nodes: Vec<RankRow> =
        db.all("SELECT id, rank FROM graph_nodes WHERE namespace = ?1", &args![ns]).await?;
    let stored_files: Vec<RankRow> =
        db.all("SELECT path AS id, rank FROM graph_files WHERE namespace = ?1", &args![ns]).await?;
    let as_map = |rows: Vec<RankRow>| -> BTreeMap<String, f64> {
        rows.into_iter().map(|r| (r.id, r.rank.unwrap_or(f64::NAN))).collect()
    };
    let rank_difference = rank_difference(&nodes, &as_map(stored_nodes))
        .or_else(|| rank_difference(&by_file, &as_map(stored_files)));
    Ok(serde_json::json!({
        "files": files.len(),
        "pages": pages,
        "edges": unsplit.len(),
        "storedEdges": in_d1.len(),
        "crossFileResolved": cross_file,
        "symbols": nodes.len(),
        "edgesEqual": edge_difference.is_none(),
        "edgeDifference": edge_difference,
        "ranksEqual": rank_difference.is_none(),
        "rankDifference": rank_difference,
    }))
}

fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    if a == b {
        return None;
    }
    let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    Some(format!("{} vs {} edges; unsplit {:?}, stored {:?}", a.len(), b.len(), a.get(at), b.get(at)))
}

fn rank_difference(fresh: &BTreeMap<String, f64>, stored: &BTreeMap<String, f64>) -> Option<String> {
    if fresh.len() != stored.len() {
        return Some(format!("{} ranks unsplit, {} stored", fresh.len(), stored.len()));
    }
    fresh
        .iter()
        .find(|(k, v)| stored.get(*k).is_none_or(|s| s != *v))
        .map(|(k, v)| format!("{k}: unsplit {v}, stored {:?}", stored.get(k)))
}

fn error(message: &str) -> worker::Result<Response> {
    Response::from_json(&serde_json::json!({"error": {"code": "INVALID_REQUEST", "message": message}}))
        .map(|r| r.with_status(400))
}
