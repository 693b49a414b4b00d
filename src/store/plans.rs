//! `plan_runs` (see `migrations/0021_plan_runs.sql`) and the reads a plan page needs: a page of
//! graph nodes in priority order, the page's edges in one query, and its files' indexed text.
//! Id lists travel as one JSON array parameter (`json_each`), so a page of any size is one query
//! under D1's 100-parameter limit.
use edgerag_core::graph::plan::priority_for;
use edgerag_core::graph::{Node, NodeKind};
use edgerag_core::Language;
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{Db, StoreResult};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
pub struct PlanRunRow {
    pub id: String,
    pub namespace: String,
    pub strategy: String,
    pub status: String,
    pub dry_run: i64,
    pub page_size: i64,
    pub limit_nodes: Option<i64>,
    pub include_kinds: Option<String>,
    pub with_edges: i64,
    pub processed_nodes: i64,
    pub written_chunks: i64,
    pub skipped_chunks: i64,
    pub summarized_chunks: i64,
    pub summarize_skipped: i64,
    pub pages: i64,
    pub cursor_priority: Option<i64>,
    pub cursor_id: Option<String>,
    pub warnings: String,
    pub last_error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub duration_ms: Option<i64>,
}

impl PlanRunRow {
    /// The kinds filter, `None` for every kind.
    pub fn kinds(&self) -> Option<Vec<String>> {
        self.include_kinds.as_deref().and_then(|k| serde_json::from_str(k).ok())
    }
}

/// What a new run is asked to do.
pub struct NewRun<'a> {
    pub id: &'a str,
    pub namespace: &'a str,
    pub strategy: &'a str,
    pub dry_run: bool,
    pub page_size: u32,
    pub limit_nodes: Option<u64>,
    pub include_kinds: Option<&'a [String]>,
    pub with_edges: bool,
    pub warnings: &'a [String],
    pub now: &'a str,
}

pub async fn insert_run(db: &Db, run: &NewRun<'_>) -> StoreResult<()> {
    let kinds = run.include_kinds.map(super::json_array).transpose()?;
    let warnings = super::json_array(run.warnings)?;
    db.run(
        "INSERT INTO plan_runs (id, namespace, strategy, status, dry_run, page_size, limit_nodes, include_kinds, \
           with_edges, warnings, created_at) VALUES (?, ?, ?, 'QUEUED', ?, ?, ?, ?, ?, ?, ?)",
        &args![
            run.id,
            run.namespace,
            run.strategy,
            run.dry_run,
            run.page_size,
            run.limit_nodes.map(|l| l as i64),
            &kinds,
            run.with_edges,
            warnings.as_str(),
            run.now
        ],
    )
    .await?;
    Ok(())
}

pub async fn get_run(db: &Db, namespace: &str, id: &str) -> StoreResult<Option<PlanRunRow>> {
    db.first("SELECT * FROM plan_runs WHERE namespace = ? AND id = ?", &args![namespace, id]).await
}

/// QUEUED → RUNNING (the first page to start sets `started_at`).
pub async fn mark_started(db: &Db, id: &str, now: &str) -> StoreResult<()> {
    db.run(
        "UPDATE plan_runs SET status = 'RUNNING', started_at = COALESCE(started_at, ?2) \
         WHERE id = ?1 AND status IN ('QUEUED', 'RUNNING')",
        &args![id, now],
    )
    .await?;
    Ok(())
}

/// What one page added to a run.
#[derive(Debug, Clone, Default)]
pub struct PageCounts {
    pub processed: u64,
    pub written: u64,
    pub skipped: u64,
    pub summarized: u64,
    pub summarize_skipped: u64,
}

/// Count page `page` into run `id` (only if it is the run's next page: a redelivered page adds
/// nothing), move the cursor, and finish the run when `done`.
pub fn advance_statement(
    db: &Db,
    id: &str,
    page: i64,
    counts: &PageCounts,
    cursor: Option<(i64, &str)>,
    done: bool,
    now: &str,
) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "UPDATE plan_runs SET pages = pages + 1, processed_nodes = processed_nodes + ?3, \
           written_chunks = written_chunks + ?4, skipped_chunks = skipped_chunks + ?5, \
           summarized_chunks = summarized_chunks + ?6, summarize_skipped = summarize_skipped + ?7, \
           cursor_priority = COALESCE(?8, cursor_priority), cursor_id = COALESCE(?9, cursor_id), \
           status = CASE WHEN ?10 THEN 'READY' ELSE 'RUNNING' END, last_error = NULL, \
           completed_at = CASE WHEN ?10 THEN ?11 ELSE NULL END, \
           duration_ms = CAST(MAX(0, (julianday(?11) - julianday(COALESCE(started_at, created_at))) * 86400000) \
             AS INTEGER) \
         WHERE id = ?1 AND pages = ?2 AND status IN ('QUEUED', 'RUNNING')",
        &args![
            id,
            page,
            counts.processed,
            counts.written,
            counts.skipped,
            counts.summarized,
            counts.summarize_skipped,
            cursor.map(|c| c.0),
            cursor.map(|c| c.1),
            done,
            now
        ],
    )
}

/// Keep the error on the run; `fail` ends it.
pub async fn record_error(db: &Db, id: &str, error: &str, fail: bool, now: &str) -> StoreResult<()> {
    db.run(
        "UPDATE plan_runs SET last_error = ?2, \
           status = CASE WHEN ?3 THEN 'FAILED' ELSE status END, \
           completed_at = CASE WHEN ?3 THEN ?4 ELSE completed_at END \
         WHERE id = ?1 AND status IN ('QUEUED', 'RUNNING')",
        &args![id, error, fail, now],
    )
    .await?;
    Ok(())
}

/// `CASE kind WHEN … END`: the core's node priority as SQL, so pages come out in processing order.
pub fn priority_sql() -> String {
    let whens: Vec<String> = NodeKind::ALL
        .iter()
        .filter(|k| priority_for(**k) != 0)
        .map(|k| format!("WHEN '{}' THEN {}", k.as_str(), priority_for(*k)))
        .collect();
    format!("CASE kind {} ELSE 0 END", whens.join(" "))
}

#[derive(Debug, Clone, Deserialize)]
struct NodeRow {
    id: String,
    path: String,
    kind: String,
    name: String,
    fqn: String,
    package: Option<String>,
    signature: Option<String>,
    doc: Option<String>,
    language: String,
    start_line: i64,
    end_line: i64,
    parent: Option<String>,
    route: Option<String>,
    http_method: Option<String>,
    priority: i64,
}

/// A node of a page and its priority.
pub struct PageNode {
    pub node: Node,
    pub priority: i64,
}

/// Up to `limit` nodes after the cursor (priority descending, then id), of `kinds` when given.
pub async fn node_page(
    db: &Db,
    namespace: &str,
    kinds: Option<&[String]>,
    cursor: Option<(i64, &str)>,
    limit: u32,
) -> StoreResult<Vec<PageNode>> {
    let kinds_json = kinds.map(super::json_array).transpose()?;
    let (cp, cid) = match cursor {
        Some((p, id)) => (Some(p), Some(id)),
        None => (None, None),
    };
    let rows: Vec<NodeRow> = db
        .all(
            &format!(
                "SELECT * FROM (SELECT id, path, kind, name, fqn, package, signature, doc, language, start_line, \
                   end_line, parent, route, http_method, {} AS priority FROM graph_nodes WHERE namespace = ?1 \
                   AND (?2 IS NULL OR kind IN (SELECT value FROM json_each(?2)))) \
                 WHERE ?3 IS NULL OR priority < ?3 OR (priority = ?3 AND id > ?4) \
                 ORDER BY priority DESC, id LIMIT ?5",
                priority_sql()
            ),
            &args![namespace, &kinds_json, cp, cid, limit],
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| PageNode {
            priority: r.priority,
            node: Node {
                kind: NodeKind::parse(&r.kind).unwrap_or(NodeKind::Module),
                language: serde_json::from_value(serde_json::Value::String(r.language))
                    .unwrap_or(Language::Text),
                id: r.id.into(),
                name: r.name,
                fqn: r.fqn,
                package: r.package.filter(|p| !p.is_empty()).map(std::sync::Arc::from),
                signature: r.signature,
                doc: r.doc,
                path: r.path.into(),
                start_line: r.start_line.max(1) as u32,
                end_line: r.end_line.max(1) as u32,
                parent: r.parent.map(Into::into),
                // render-doc shows an endpoint's `METHOD route`.
                route: r.route.filter(|s| !s.is_empty()),
                http_method: r.http_method.filter(|s| !s.is_empty()),
                declared_type: None,
            },
        })
        .collect())
}

/// A `CALLS` edge touching the page, with both ends' fqns when they are in the graph.
#[derive(Debug, Clone, Deserialize)]
pub struct PageEdge {
    pub src: String,
    pub dst: Option<String>,
    pub dst_name: String,
    pub confidence: f64,
    pub path: String,
    pub line: i64,
    pub resolution: String,
    pub src_fqn: Option<String>,
    pub dst_fqn: Option<String>,
}

/// Every `CALLS` edge from or to the page's nodes: one query for the whole page.
pub async fn page_edges(db: &Db, namespace: &str, ids: &[String]) -> StoreResult<Vec<PageEdge>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids_json = super::json_array(ids)?;
    db.all(
        // Two index lookups per page node (by src, by dst) instead of an `OR`, which would scan
        // every edge of the namespace for each page; CROSS JOIN keeps the page as the outer loop.
        "WITH page(id) AS (SELECT value FROM json_each(?2)), \
           hits(r) AS ( \
             SELECT e.rowid FROM page p CROSS JOIN graph_edges e \
               ON e.namespace = ?1 AND e.src = p.id AND e.kind = 'CALLS' \
             UNION SELECT e.rowid FROM page p CROSS JOIN graph_edges e \
               ON e.namespace = ?1 AND e.dst = p.id AND e.kind = 'CALLS') \
         SELECT e.src, e.dst, e.dst_name, e.confidence, e.path, e.line, e.resolution, \
           s.fqn AS src_fqn, d.fqn AS dst_fqn FROM hits h CROSS JOIN graph_edges e ON e.rowid = h.r \
           LEFT JOIN graph_nodes s ON s.namespace = e.namespace AND s.id = e.src \
           LEFT JOIN graph_nodes d ON d.namespace = e.namespace AND d.id = e.dst \
         ORDER BY e.src, e.line",
        &args![namespace, ids_json.as_str()],
    )
    .await
}

/// A piece of an indexed file as stored in its code chunks.
#[derive(Debug, Clone, Deserialize)]
pub struct FileChunk {
    pub path: String,
    pub start_line: i64,
    pub text: String,
}

/// The indexed chunks (not plan chunks) of `paths` overlapping lines `from..=to` of each: what
/// `extract-snippet` rebuilds snippets from. One query for the page.
pub async fn file_chunks(
    db: &Db,
    namespace: &str,
    spans: &[(String, u32, u32)],
) -> StoreResult<Vec<FileChunk>> {
    if spans.is_empty() {
        return Ok(Vec::new());
    }
    let spans_json = serde_json::to_string(
        &spans.iter().map(|(p, a, b)| serde_json::json!([p, a, b])).collect::<Vec<_>>(),
    )
    .unwrap_or_else(|_| "[]".into());
    db.all(
        "WITH want(path, a, b) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
           json_extract(value, '$[2]') FROM json_each(?2)) \
         SELECT DISTINCT c.path, c.start_line, c.text, c.chunk_index FROM want w CROSS JOIN chunks c \
           ON c.namespace = ?1 AND c.path = w.path \
         WHERE c.type <> 'symbol-plan' AND c.start_line <= w.b AND c.end_line >= w.a \
         ORDER BY c.path, c.start_line, c.chunk_index",
        &args![namespace, spans_json.as_str()],
    )
    .await
}
