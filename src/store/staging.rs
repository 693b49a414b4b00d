//! `job_files` / `job_chunks`: what a job still has to process. See `migrations/0002_pipeline.sql`
//! for the row life cycle; every write here is conditional on the row's current status, which is
//! what makes each pipeline stage safe to run twice.
use serde::Deserialize;
use worker::D1PreparedStatement;

use edgerag_core::vector::codec::encode_f32_hex;

use super::{Arg, Db, StoreResult, MAX_PARAMS};
use crate::store::args;

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

/// The largest value a staged file's content is bound as: the D1 value budget of
/// `src/limits.json` (`d1ValueBytes`). Longer content goes in two values ([`split_content`]).
pub const CONTENT_PART_BYTES: usize = 1_000_000;

/// `content` as the two values it is stored in (`job_files.content`, `content_tail`): all of it
/// and no tail when it fits [`CONTENT_PART_BYTES`], else its first part (cut at the last
/// character boundary within the budget) and the rest.
pub fn split_content(content: &str, max: usize) -> (&str, Option<&str>) {
    if content.len() <= max {
        return (content, None);
    }
    let mut cut = max;
    while cut > 0 && !content.is_char_boundary(cut) {
        cut -= 1;
    }
    (&content[..cut], Some(&content[cut..]))
}

const ROW_PARAMS: usize = 10;
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
            let (head, tail) = match row.content.as_deref() {
                Some(c) => {
                    let (head, tail) = split_content(c, CONTENT_PART_BYTES);
                    (Some(head), tail)
                }
                None => (None, None),
            };
            let base = params.len();
            let slots: Vec<String> = (1..=ROW_PARAMS).map(|i| format!("?{}", base + i)).collect();
            values.push(format!("({})", slots.join(", ")));
            params.extend(args![
                &row.path,
                row.change,
                &row.reason,
                row.status,
                head,
                tail,
                &row.content_hash,
                row.size,
                &row.language,
                &row.tags
            ]);
        }
        let sql = format!(
            "INSERT INTO job_files (job_id, namespace, path, change, reason, status, content, content_tail, \
               content_hash, size, language, tags, updated_at) \
             SELECT ?1, ?2, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, \
               v.column8, v.column9, v.column10, ?3 \
             FROM (VALUES {}) AS v \
             WHERE EXISTS (SELECT 1 FROM repo_rag_index_job WHERE id = ?1 AND status IN ('QUEUED', 'RUNNING')) \
             ON CONFLICT(job_id, path) DO UPDATE SET change = excluded.change, reason = excluded.reason, \
               status = excluded.status, content = excluded.content, content_tail = excluded.content_tail, \
               content_hash = excluded.content_hash, \
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
        "SELECT seq, path, content || COALESCE(content_tail, '') AS content FROM job_files \
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

/// `json_each` over `?2` as `seq` values, limited to the job's files still `pending`.
const STILL_PENDING_SEQS: &str = "SELECT seq FROM job_files WHERE job_id = ?1 AND status = 'pending' \
     AND seq IN (SELECT value FROM json_each(?2))";

/// Replace the staged chunks of the files `(seq, chunks)` and move them pending → chunked: a
/// handful of statements for the whole message (the rows travel as JSON arrays), one transaction
/// with the rest of the message via the caller's batch.
pub fn chunked_statements(
    db: &Db,
    job_id: &str,
    files: &[(i64, Vec<StagedChunk<'_>>)],
) -> StoreResult<Vec<D1PreparedStatement>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    // Every statement re-checks that the file is still pending: a duplicate delivery that read the
    // file before another copy of the message finished must not clobber later stages' work.
    let seqs = super::json_array(&files.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())?;
    let mut out = vec![db.stmt(
        &format!("DELETE FROM job_chunks WHERE job_id = ?1 AND seq IN ({STILL_PENDING_SEQS})"),
        &args![job_id, seqs.as_str()],
    )?];
    let rows = files.iter().flat_map(|(seq, chunks)| {
        chunks.iter().map(move |c| serde_json::json!([seq, c.chunk_index, c.chunk_json, c.text_hash]))
    });
    for rows in super::json_batches(rows, super::JSON_BATCH_BYTES) {
        out.push(db.stmt(
            "INSERT INTO job_chunks (job_id, seq, chunk_index, chunk, text_hash) \
             SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
               json_extract(value, '$[3]') FROM json_each(?2) AS j \
             WHERE EXISTS (SELECT 1 FROM job_files f WHERE f.job_id = ?1 \
                           AND f.seq = json_extract(j.value, '$[0]') AND f.status = 'pending') \
             ON CONFLICT(job_id, seq, chunk_index) DO UPDATE SET chunk = excluded.chunk, \
               text_hash = excluded.text_hash, vector = NULL",
            &args![job_id, rows.as_str()],
        )?);
    }
    let counts = super::json_array(
        &files.iter().map(|(seq, chunks)| [*seq, chunks.len() as i64]).collect::<Vec<_>>(),
    )?;
    out.push(db.stmt(
        "UPDATE job_files SET status = 'chunked', chunk_count = v.n, content = NULL, content_tail = NULL \
         FROM (SELECT json_extract(value, '$[0]') AS seq, json_extract(value, '$[1]') AS n FROM json_each(?2)) AS v \
         WHERE job_files.job_id = ?1 AND job_files.seq = v.seq AND job_files.status = 'pending'",
        &args![job_id, counts.as_str()],
    )?);
    Ok(out)
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChunkToEmbed {
    pub seq: i64,
    pub chunk_index: i64,
    pub chunk: String,
}

/// At most `limit` staged chunks of `[from, to]` after `after` (`(seq, chunk_index)`, exclusive;
/// `None` from the first) whose file is chunked and that have no vector yet, in that order.
pub async fn chunks_to_embed(
    db: &Db,
    job_id: &str,
    from: i64,
    to: i64,
    after: Option<(i64, i64)>,
    limit: usize,
) -> StoreResult<Vec<ChunkToEmbed>> {
    let (seq, index) = after.unwrap_or((-1, -1));
    db.all(
        "SELECT c.seq, c.chunk_index, c.chunk FROM job_chunks c \
         JOIN job_files f ON f.job_id = c.job_id AND f.seq = c.seq \
         WHERE c.job_id = ? AND c.seq BETWEEN ? AND ? AND f.status = 'chunked' AND c.vector IS NULL \
           AND (c.seq, c.chunk_index) > (?, ?) \
         ORDER BY c.seq, c.chunk_index LIMIT ?",
        &args![job_id, from, to, seq, index, limit as i64],
    )
    .await
}

/// A staged vector: `(seq, chunk_index, values)`.
pub type StagedVector = (i64, i64, Vec<f32>);

/// Store vectors as f32 little-endian BLOBs (read back by [`chunks_with_vectors_statement`]) on
/// their staged chunks whose file is still chunked. The vectors travel as hex text in JSON arrays
/// and become BLOBs through `unhex` in SQL (a BLOB parameter crosses the D1 binding as a JSON
/// array of byte numbers). Idempotent.
pub fn vector_statements(
    db: &Db,
    job_id: &str,
    vectors: &[StagedVector],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    let rows = vectors.iter().map(|(seq, idx, v)| serde_json::json!([seq, idx, encode_f32_hex(v)]));
    for rows in super::json_batches(rows, super::JSON_BATCH_BYTES) {
        out.push(db.stmt(
            "UPDATE job_chunks SET vector = unhex(v.hex) \
             FROM (SELECT json_extract(value, '$[0]') AS seq, json_extract(value, '$[1]') AS idx, \
                     json_extract(value, '$[2]') AS hex FROM json_each(?2)) AS v \
             WHERE job_chunks.job_id = ?1 AND job_chunks.seq = v.seq AND job_chunks.chunk_index = v.idx \
               AND EXISTS (SELECT 1 FROM job_files f \
                           WHERE f.job_id = ?1 AND f.seq = v.seq AND f.status = 'chunked')",
            &args![job_id, rows.as_str()],
        )?);
    }
    Ok(out)
}

/// Move every chunked file of `[from, to]` whose chunks all have vectors to `embedded`.
pub fn embedded_statement(db: &Db, job_id: &str, from: i64, to: i64) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "UPDATE job_files SET status = 'embedded' \
         WHERE job_id = ?1 AND seq BETWEEN ?2 AND ?3 AND status = 'chunked' \
           AND NOT EXISTS (SELECT 1 FROM job_chunks c \
                           WHERE c.job_id = ?1 AND c.seq = job_files.seq AND c.vector IS NULL)",
        &args![job_id, from, to],
    )
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
    /// The bytes of its staged chunks' JSON and of their vectors as the stage reads them (hex):
    /// what reading and writing the file holds in memory.
    #[serde(default)]
    pub staged_bytes: f64,
}

impl FileToIndex {
    /// [`FileToIndex::staged_bytes`] as a size.
    pub fn bytes(&self) -> usize {
        self.staged_bytes.max(0.0) as usize
    }
}

/// Files of `[from, to]` waiting for the index stage (rows: [`FileToIndex`]).
pub fn files_to_index_statement(
    db: &Db,
    job_id: &str,
    from: i64,
    to: i64,
) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "SELECT seq, path, change, content_hash, size, language, chunk_count, tags, \
           (SELECT coalesce(sum(length(CAST(c.chunk AS BLOB)) \
                + CASE WHEN typeof(c.vector) = 'blob' THEN 2 ELSE 1 END * coalesce(length(c.vector), 0)), 0) \
            FROM job_chunks c WHERE c.job_id = f.job_id AND c.seq = f.seq) AS staged_bytes \
         FROM job_files f WHERE job_id = ? AND seq BETWEEN ? AND ? AND status = 'embedded' ORDER BY seq",
        &args![job_id, from, to],
    )
}

/// A staged chunk of an embedded file with its vector: `vector_hex` for a BLOB, `vector_json`
/// for a row staged as JSON text by an earlier version (still read while such jobs drain).
#[derive(Debug, Clone, Deserialize)]
pub struct ChunkWithVector {
    pub seq: i64,
    pub chunk_index: i64,
    pub chunk: String,
    pub vector_hex: Option<String>,
    pub vector_json: Option<String>,
}

impl ChunkWithVector {
    /// The staged vector, `None` when there is none (or it cannot be read).
    pub fn vector(&self) -> Option<Vec<f32>> {
        match (&self.vector_hex, &self.vector_json) {
            (Some(hex), _) => edgerag_core::vector::codec::decode_f32_hex(hex).ok(),
            (None, Some(json)) => serde_json::from_str(json).ok(),
            (None, None) => None,
        }
    }
}

/// The staged chunks of the embedded files of `[from, to]` (rows: [`ChunkWithVector`]).
pub fn chunks_with_vectors_statement(
    db: &Db,
    job_id: &str,
    from: i64,
    to: i64,
) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "SELECT c.seq, c.chunk_index, c.chunk, \
           CASE WHEN typeof(c.vector) = 'blob' THEN hex(c.vector) END AS vector_hex, \
           CASE WHEN typeof(c.vector) = 'text' THEN c.vector END AS vector_json \
         FROM job_chunks c \
         JOIN job_files f ON f.job_id = c.job_id AND f.seq = c.seq \
         WHERE c.job_id = ? AND c.seq BETWEEN ? AND ? AND f.status = 'embedded' \
         ORDER BY c.seq, c.chunk_index",
        &args![job_id, from, to],
    )
}

/// The ids of the chunks stored now for the paths of the embedded files of `[from, to]` (rows:
/// [`super::chunks::PathId`]): what the index stage compares the new chunks with.
pub fn stored_chunk_ids_statement(
    db: &Db,
    job_id: &str,
    namespace: &str,
    from: i64,
    to: i64,
) -> StoreResult<D1PreparedStatement> {
    db.stmt(
        "SELECT path, id FROM chunks WHERE namespace = ?2 AND path IN \
           (SELECT path FROM job_files WHERE job_id = ?1 AND seq BETWEEN ?3 AND ?4 AND status = 'embedded')",
        &args![job_id, namespace, from, to],
    )
}

/// Move the files `seqs` embedded → done (one statement for a message's files).
pub fn mark_done_statement(db: &Db, job_id: &str, seqs: &[i64]) -> StoreResult<D1PreparedStatement> {
    let list = super::json_array(seqs)?;
    db.stmt(
        "UPDATE job_files SET status = 'done' \
         WHERE job_id = ?1 AND status = 'embedded' AND seq IN (SELECT value FROM json_each(?2))",
        &args![job_id, list.as_str()],
    )
}

/// Marks a staged file as indexed with a warning (`code`, e.g. `GRAPH_TOO_LARGE`): the job's
/// counters list it (`repo_rag_index_job.warnings`, refreshed with them).
pub fn warning_statement(db: &Db, job_id: &str, path: &str, code: &str) -> StoreResult<D1PreparedStatement> {
    db.stmt("UPDATE job_files SET warning = ?3 WHERE job_id = ?1 AND path = ?2", &args![job_id, path, code])
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
                "UPDATE job_files SET content = NULL, content_tail = NULL WHERE job_id = ?1 AND content IS NOT NULL AND {GUARD}"
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    #[test]
    fn content_over_the_value_budget_is_stored_in_two_values_cut_at_a_character_boundary() {
        assert_eq!(split_content("short", 10), ("short", None));
        assert_eq!(split_content("exactly10!", 10), ("exactly10!", None));
        // 'é' is two bytes: a cut at byte 5 would split it.
        let (head, tail) = split_content("abcdéfgh", 5);
        assert_eq!((head, tail), ("abcd", Some("éfgh")));
        let big = "ü".repeat(520_000); // 1,040,000 bytes, as a file just under 1 MiB.
        let (head, tail) = split_content(&big, CONTENT_PART_BYTES);
        assert!(head.len() <= CONTENT_PART_BYTES && tail.is_some_and(|t| t.len() <= CONTENT_PART_BYTES));
        assert_eq!(format!("{head}{}", tail.unwrap_or_default()), big);
        let budget = crate::ledger::budget("d1MaxValueBytes").expect("d1MaxValueBytes");
        assert_eq!(CONTENT_PART_BYTES as f64, budget);
    }

    fn row(hex: Option<&str>, json: Option<&str>) -> ChunkWithVector {
        ChunkWithVector {
            seq: 1,
            chunk_index: 0,
            chunk: "{}".into(),
            vector_hex: hex.map(String::from),
            vector_json: json.map(String::from),
        }
    }

    #[test]
    fn a_staged_blob_reads_back_as_the_vector_that_was_staged() {
        let v = vec![1.0f32, -0.5, 0.0, 3.25e-7];
        let hex = encode_f32_hex(&v);
        assert_eq!(row(Some(&hex), None).vector(), Some(v.clone()));
        // SQLite's hex() is upper case; lower case reads the same.
        assert_eq!(row(Some(&hex.to_lowercase()), None).vector(), Some(v));
    }

    #[test]
    fn a_vector_staged_as_json_text_by_an_earlier_version_is_still_read() {
        assert_eq!(row(None, Some("[1.0,-0.5,0.25]")).vector(), Some(vec![1.0, -0.5, 0.25]));
    }

    #[test]
    fn a_missing_or_unreadable_vector_is_none() {
        assert_eq!(row(None, None).vector(), None);
        assert_eq!(row(Some("0000803"), None).vector(), None);
        assert_eq!(row(None, Some("not json")).vector(), None);
    }
}
