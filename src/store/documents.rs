//! `documents` (editor-written single documents, chunked after a debounce) and
//! `document_parents` (their parents; the children are `chunks` rows).
use edgerag_core::chunk::parent_child::ParentChunk;
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{json_batches, Db, StoreError, StoreResult, JSON_BATCH_BYTES};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
pub struct DocumentRow {
    pub version: i64,
    pub content: String,
    pub content_hash: String,
    pub dirty: i64,
    pub chunked_hash: Option<String>,
    pub chunk_runs: i64,
    pub last_chunked_at: Option<String>,
    pub last_error: Option<String>,
    pub updated_at: String,
}

pub async fn get(db: &Db, namespace: &str, path: &str) -> StoreResult<Option<DocumentRow>> {
    db.first(
        "SELECT version, content, content_hash, dirty, chunked_hash, chunk_runs, last_chunked_at, last_error, \
         updated_at FROM documents WHERE namespace = ? AND path = ?",
        &args![namespace, path],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
struct Version {
    version: i64,
}

/// Store a new version (previous + 1, or 1) as dirty; returns the version.
pub async fn put(
    db: &Db,
    namespace: &str,
    path: &str,
    content: &str,
    hash: &str,
    now: &str,
) -> StoreResult<i64> {
    let row: Option<Version> = db
        .first(
            "INSERT INTO documents (namespace, path, version, content, content_hash, dirty, updated_at) \
             VALUES (?1, ?2, 1, ?3, ?4, 1, ?5) \
             ON CONFLICT(namespace, path) DO UPDATE SET version = documents.version + 1, \
               content = excluded.content, content_hash = excluded.content_hash, dirty = 1, \
               updated_at = excluded.updated_at \
             RETURNING version",
            &args![namespace, path, content, hash, now],
        )
        .await?;
    Ok(row.map_or(1, |r| r.version))
}

/// The document is indexed as of `version` (only if no newer version arrived meanwhile).
pub fn mark_clean_statement(
    db: &Db,
    namespace: &str,
    path: &str,
    version: i64,
    hash: &str,
    now: &str,
    rechunked: bool,
) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "UPDATE documents SET dirty = 0, chunked_hash = ?4, last_error = NULL, \
           last_chunked_at = CASE WHEN ?6 THEN ?5 ELSE last_chunked_at END, \
           chunk_runs = chunk_runs + CASE WHEN ?6 THEN 1 ELSE 0 END \
         WHERE namespace = ?1 AND path = ?2 AND version = ?3",
        &args![namespace, path, version, hash, now, rechunked],
    )
}

pub async fn record_error(db: &Db, namespace: &str, path: &str, error: &str) -> StoreResult<()> {
    db.run(
        "UPDATE documents SET last_error = ? WHERE namespace = ? AND path = ?",
        &args![error, namespace, path],
    )
    .await?;
    Ok(())
}

/// A document whose latest version is still waiting to be chunked.
#[derive(Debug, Clone, Deserialize)]
pub struct DirtyDocument {
    pub namespace: String,
    pub path: String,
    pub version: i64,
}

/// Dirty documents last written before `before` (ISO-8601): their chunking message is long gone
/// (failed past the queue's attempt limit, or lost), so nothing else will make them clean.
pub async fn dirty_before(db: &Db, before: &str, limit: u32) -> StoreResult<Vec<DirtyDocument>> {
    db.all(
        "SELECT namespace, path, version FROM documents WHERE dirty = 1 AND updated_at < ? \
         ORDER BY updated_at LIMIT ?",
        &args![before, limit],
    )
    .await
}

pub fn delete_statements(db: &Db, namespace: &str, path: &str) -> StoreResult<Vec<D1PreparedStatement>> {
    Ok(vec![
        db.stmt("DELETE FROM documents WHERE namespace = ? AND path = ?", &args![namespace, path])?,
        delete_parents_statement(db, namespace, path)?,
    ])
}

/// Replaces the stored parents of each `(path, parents)` in a few statements however many files and
/// parents there are (one delete per batch of paths, the parents as JSON rows): a chunk message of
/// many Markdown files stays far under D1's 1,000 statements per invocation.
pub fn replace_parents_statements(
    db: &Db,
    namespace: &str,
    files: &[(&str, &[ParentChunk])],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for paths in json_batches(files.iter().map(|(path, _)| serde_json::json!(path)), JSON_BATCH_BYTES) {
        out.push(db.stmt(
            "DELETE FROM document_parents WHERE namespace = ?1 AND path IN (SELECT value FROM json_each(?2))",
            &args![namespace, paths.as_str()],
        )?);
    }
    let mut rows = Vec::new();
    for (path, parents) in files {
        for p in parents.iter() {
            let headings =
                serde_json::to_string(&p.heading_path).map_err(|e| StoreError(format!("{path}: {e}")))?;
            rows.push(serde_json::json!([
                path,
                p.id,
                p.order,
                p.chapter,
                headings,
                p.text,
                p.start_char,
                p.end_char,
                p.start_line,
                p.end_line,
                p.child_count
            ]));
        }
    }
    for batch in json_batches(rows, JSON_BATCH_BYTES) {
        out.push(db.stmt(
            &format!(
                "INSERT INTO document_parents (namespace, path, id, ord, chapter, heading_path, text, start_char, \
                 end_char, start_line, end_line, child_count) {} WHERE true \
                 ON CONFLICT(namespace, path, id) DO UPDATE SET ord = excluded.ord, chapter = excluded.chapter, \
                   heading_path = excluded.heading_path, text = excluded.text, start_char = excluded.start_char, \
                   end_char = excluded.end_char, start_line = excluded.start_line, end_line = excluded.end_line, \
                   child_count = excluded.child_count",
                super::from_json(11)
            ),
            &args![namespace, batch.as_str()],
        )?);
    }
    Ok(out)
}

/// The parents of deleted files' parent/child chunks, a few statements for all of them.
pub fn delete_parents_of_statements(
    db: &Db,
    namespace: &str,
    paths: &[&str],
) -> StoreResult<Vec<D1PreparedStatement>> {
    super::delete_paths_statements(db, "document_parents", namespace, paths)
}

pub fn delete_parents_statement(db: &Db, namespace: &str, path: &str) -> StoreResult<D1PreparedStatement> {
    db.stmt("DELETE FROM document_parents WHERE namespace = ? AND path = ?", &args![namespace, path])
}

#[derive(Debug, Clone, Deserialize)]
pub struct ParentRow {
    pub id: String,
    pub ord: i64,
    pub heading_path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub child_count: i64,
    pub chars: i64,
}

pub async fn parents(db: &Db, namespace: &str, path: &str) -> StoreResult<Vec<ParentRow>> {
    db.all(
        "SELECT id, ord, heading_path, start_line, end_line, child_count, length(text) AS chars \
         FROM document_parents WHERE namespace = ? AND path = ? ORDER BY ord",
        &args![namespace, path],
    )
    .await
}
