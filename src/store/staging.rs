//! `job_files` / `job_chunks`: what a job still has to process. See `migrations/0002_pipeline.sql`
//! for the row life cycle; every write here is conditional on the row's current status, which is
//! what makes each pipeline stage safe to run twice.
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{Arg, Db, StoreResult, MAX_PARAMS};
use crate::args;

/// A file as staged by a request or the fetch stage.
#[derive(Debug, Clone)]
pub struct StageRow {
    pub path: String,
    /// `added` | `changed` | `unchanged` | `deleted` | `skipped`.
    pub change: &'static str,
    pub reason: Option<String>,
    /// `pending` | `embedded` | `done` (see the migration).
    pub status: &'static str,
    pub content: Option<String>,
    pub content_hash: Option<String>,
    pub size: u64,
    pub language: Option<String>,
    /// The file's tags, stored form (`edgerag_core::tags::to_column`).
    pub tags: String,
}

/// A staged row as returned by `RETURNING`.
#[derive(Debug, Clone, Deserialize)]
pub struct StagedRef {
    pub seq: i64,
    pub status: String,
    pub size: i64,
}

const ROW_PARAMS: usize = 9;
const FIXED_PARAMS: usize = 3;
/// Rows per INSERT statement under the 100-parameter limit.
pub const ROWS_PER_INSERT: usize = (MAX_PARAMS - FIXED_PARAMS) / ROW_PARAMS;

/// Statements inserting `rows` for `job_id` — only while the job is still QUEUED/RUNNING, so a
/// request can never add work to a job that has already finished. A path staged again in the same
/// job keeps its `seq` and is only rewritten when its content changed.
pub fn insert_statements(
    db: &Db,
    job_id: &str,
    namespace: &str,
    rows: &[StageRow],
    now: &str,
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for group in rows.chunks(ROWS_PER_INSERT) {
        let mut values = Vec::with_capacity(group.len());
        let mut params: Vec<Arg> = args![job_id, namespace, now].into();
        for row in group {
            let base = params.len();
            let slots: Vec<String> = (1..=ROW_PARAMS).map(|i| format!("?{}", base + i)).collect();
            values.push(format!("({})", slots.join(", ")));
            params.extend(args![
                &row.path,
                row.change,
                &row.reason,
                row.status,
                &row.content,
                &row.content_hash,
                row.size,
                &row.language,
                &row.tags
            ]);
        }
        let sql = format!(
            "INSERT INTO job_files (job_id, namespace, path, change, reason, status, content, content_hash, \
               size, language, tags, updated_at) \
             SELECT ?1, ?2, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, \
               v.column8, v.column9, ?3 \
             FROM (VALUES {}) AS v \
             WHERE EXISTS (SELECT 1 FROM repo_rag_index_job WHERE id = ?1 AND status IN ('QUEUED', 'RUNNING')) \
             ON CONFLICT(job_id, path) DO UPDATE SET change = excluded.change, reason = excluded.reason, \
               status = excluded.status, content = excluded.content, content_hash = excluded.content_hash, \
               size = excluded.size, language = excluded.language, tags = excluded.tags, chunk_count = 0, \
               updated_at = excluded.updated_at \
             WHERE job_files.content_hash IS NOT excluded.content_hash OR job_files.tags IS NOT excluded.tags \
                OR (excluded.content_hash IS NULL \
                    AND (job_files.change IS NOT excluded.change OR job_files.reason IS NOT excluded.reason)) \
             RETURNING seq, status, size",
            values.join(", ")
        );
        out.push(db.stmt(&sql, &params)?);
    }
    Ok(out)
}

/// Rows of a job with a given status (message ranges for the pipeline).
pub async fn refs_with_status(db: &Db, job_id: &str, statuses: &[&str]) -> StoreResult<Vec<StagedRef>> {
    let mut params: Vec<Arg> = args![job_id].into();
    params.extend(statuses.iter().map(|s| Arg::Text(s)));
    db.all(
        &format!(
            "SELECT seq, status, size FROM job_files WHERE job_id = ? AND status IN ({}) ORDER BY seq",
            super::placeholders(statuses.len())
        ),
        &params,
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct PendingFile {
    pub seq: i64,
    pub path: String,
    pub content: Option<String>,
}

/// Files of `[from, to]` waiting for the chunk stage.
pub async fn pending_files(db: &Db, job_id: &str, from: i64, to: i64) -> StoreResult<Vec<PendingFile>> {
    db.all(
        "SELECT seq, path, content FROM job_files \
         WHERE job_id = ? AND seq BETWEEN ? AND ? AND status = 'pending' ORDER BY seq",
        &args![job_id, from, to],
    )
    .await
}

/// A chunk staged for a file.
pub struct StagedChunk<'a> {
    pub chunk_index: u32,
    pub chunk_json: &'a str,
    pub text_hash: &'a str,
}

/// Replace the staged chunks of file `seq` and move it pending → chunked (one transaction with
/// the other files of the message, via the caller's batch).
pub fn chunked_statements(
    db: &Db,
    job_id: &str,
    seq: i64,
    chunks: &[StagedChunk<'_>],
) -> StoreResult<Vec<D1PreparedStatement>> {
    // Every statement re-checks that the file is still pending: a duplicate delivery that read the
    // file before another copy of the message finished must not clobber later stages' work.
    const STILL_PENDING: &str =
        "EXISTS (SELECT 1 FROM job_files WHERE job_id = ?1 AND seq = ?2 AND status = 'pending')";
    let mut out = vec![db.stmt(
        &format!("DELETE FROM job_chunks WHERE job_id = ?1 AND seq = ?2 AND {STILL_PENDING}"),
        &args![job_id, seq],
    )?];
    for group in chunks.chunks((MAX_PARAMS - 2) / 3) {
        let mut params: Vec<Arg> = args![job_id, seq].into();
        let mut values = Vec::new();
        for c in group {
            let b = params.len();
            values.push(format!("(?1, ?2, ?{}, ?{}, ?{})", b + 1, b + 2, b + 3));
            params.extend(args![c.chunk_index, c.chunk_json, c.text_hash]);
        }
        out.push(db.stmt(
            &format!(
                "INSERT INTO job_chunks (job_id, seq, chunk_index, chunk, text_hash) \
                 SELECT v.column1, v.column2, v.column3, v.column4, v.column5 FROM (VALUES {}) AS v \
                 WHERE {STILL_PENDING} \
                 ON CONFLICT(job_id, seq, chunk_index) DO UPDATE SET chunk = excluded.chunk, \
                 text_hash = excluded.text_hash, vector = NULL",
                values.join(", ")
            ),
            &params,
        )?);
    }
    out.push(db.stmt(
        "UPDATE job_files SET status = 'chunked', chunk_count = ?, content = NULL \
         WHERE job_id = ? AND seq = ? AND status = 'pending'",
        &args![chunks.len(), job_id, seq],
    )?);
    Ok(out)
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChunkToEmbed {
    pub seq: i64,
    pub chunk_index: i64,
    pub chunk: String,
}

/// Staged chunks of `[from, to]` whose file is chunked and that have no vector yet.
pub async fn chunks_to_embed(db: &Db, job_id: &str, from: i64, to: i64) -> StoreResult<Vec<ChunkToEmbed>> {
    db.all(
        "SELECT c.seq, c.chunk_index, c.chunk FROM job_chunks c \
         JOIN job_files f ON f.job_id = c.job_id AND f.seq = c.seq \
         WHERE c.job_id = ? AND c.seq BETWEEN ? AND ? AND f.status = 'chunked' AND c.vector IS NULL \
         ORDER BY c.seq, c.chunk_index",
        &args![job_id, from, to],
    )
    .await
}

/// Store vectors `(seq, chunk_index, json)` and move every chunked file of `[from, to]` whose
/// chunks all have vectors to `embedded`.
pub fn embedded_statements(
    db: &Db,
    job_id: &str,
    from: i64,
    to: i64,
    vectors: &[(i64, i64, String)],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for group in vectors.chunks((MAX_PARAMS - 1) / 3) {
        let mut params: Vec<Arg> = args![job_id].into();
        let mut values = Vec::new();
        for (seq, idx, json) in group {
            let b = params.len();
            values.push(format!("(?{}, ?{}, ?{})", b + 1, b + 2, b + 3));
            params.extend(args![*seq, *idx, json]);
        }
        out.push(db.stmt(
            &format!(
                "UPDATE job_chunks SET vector = v.column3 FROM (VALUES {}) AS v \
                 WHERE job_chunks.job_id = ?1 AND job_chunks.seq = v.column1 \
                   AND job_chunks.chunk_index = v.column2 \
                   AND EXISTS (SELECT 1 FROM job_files f \
                               WHERE f.job_id = ?1 AND f.seq = v.column1 AND f.status = 'chunked')",
                values.join(", ")
            ),
            &params,
        )?);
    }
    out.push(db.stmt(
        "UPDATE job_files SET status = 'embedded' \
         WHERE job_id = ?1 AND seq BETWEEN ?2 AND ?3 AND status = 'chunked' \
           AND NOT EXISTS (SELECT 1 FROM job_chunks c \
                           WHERE c.job_id = ?1 AND c.seq = job_files.seq AND c.vector IS NULL)",
        &args![job_id, from, to],
    )?);
    Ok(out)
}

#[derive(Debug, Clone, Deserialize)]
pub struct FileToIndex {
    pub seq: i64,
    pub path: String,
    pub change: String,
    pub content_hash: Option<String>,
    pub size: i64,
    pub language: Option<String>,
    pub chunk_count: i64,
    pub tags: String,
}

/// Files of `[from, to]` waiting for the index stage.
pub async fn files_to_index(db: &Db, job_id: &str, from: i64, to: i64) -> StoreResult<Vec<FileToIndex>> {
    db.all(
        "SELECT seq, path, change, content_hash, size, language, chunk_count, tags FROM job_files \
         WHERE job_id = ? AND seq BETWEEN ? AND ? AND status = 'embedded' ORDER BY seq",
        &args![job_id, from, to],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChunkWithVector {
    pub seq: i64,
    pub chunk_index: i64,
    pub chunk: String,
    pub vector: Option<String>,
}

pub async fn chunks_with_vectors(
    db: &Db,
    job_id: &str,
    from: i64,
    to: i64,
) -> StoreResult<Vec<ChunkWithVector>> {
    db.all(
        "SELECT c.seq, c.chunk_index, c.chunk, c.vector FROM job_chunks c \
         JOIN job_files f ON f.job_id = c.job_id AND f.seq = c.seq \
         WHERE c.job_id = ? AND c.seq BETWEEN ? AND ? AND f.status = 'embedded' \
         ORDER BY c.seq, c.chunk_index",
        &args![job_id, from, to],
    )
    .await
}

pub fn mark_done_statement(db: &Db, job_id: &str, seq: i64) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "UPDATE job_files SET status = 'done' WHERE job_id = ? AND seq = ? AND status = 'embedded'",
        &args![job_id, seq],
    )
}

/// Staging rows that will never be needed again once a job is finished: chunk copies and file
/// bodies of this job, and all rows of the namespace's jobs older than the 5 most recent. Every
/// statement applies only if job `job_id` carries `finish_token` (see `pipeline::finish`).
pub fn cleanup_statements(
    db: &Db,
    job_id: &str,
    namespace: &str,
    finish_token: &str,
) -> StoreResult<Vec<D1PreparedStatement>> {
    const GUARD: &str = "EXISTS (SELECT 1 FROM repo_rag_index_job WHERE id = ?1 AND finish_token = ?2)";
    Ok(vec![
        db.stmt(
            &format!("DELETE FROM job_chunks WHERE job_id = ?1 AND {GUARD}"),
            &args![job_id, finish_token],
        )?,
        db.stmt(
            &format!(
                "UPDATE job_files SET content = NULL WHERE job_id = ?1 AND content IS NOT NULL AND {GUARD}"
            ),
            &args![job_id, finish_token],
        )?,
        db.stmt(
            &format!(
                "DELETE FROM job_files WHERE namespace = ?3 AND {GUARD} AND job_id NOT IN \
                 (SELECT id FROM repo_rag_index_job WHERE namespace = ?3 ORDER BY queued_at DESC LIMIT 5)"
            ),
            &args![job_id, finish_token, namespace],
        )?,
    ])
}
