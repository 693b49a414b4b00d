//! The indexed state of a namespace: `files` (one row per indexed file) and `chunks` (+ the FTS
//! index kept in sync by triggers; chunks are written with `ON CONFLICT DO UPDATE` so the update
//! trigger fires).
use std::collections::HashMap;

use edgerag_core::Chunk;
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{placeholders, Arg, Db, StoreResult, MAX_PARAMS};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
struct FileHash {
    path: String,
    content_hash: String,
    index_key: Option<String>,
    tags: String,
}

/// What a file was indexed from: its content hash, the job's index key and its tags (stored form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    pub content_hash: String,
    pub index_key: Option<String>,
    pub tags: String,
}

/// The indexed files of a namespace among `paths` (incremental re-indexing compares against
/// them), by path: one statement, whatever the namespace's size.
pub async fn indexed_files_among(
    db: &Db,
    namespace: &str,
    paths: &[&str],
) -> StoreResult<HashMap<String, IndexedFile>> {
    if paths.is_empty() {
        return Ok(HashMap::new());
    }
    let paths = super::json_array(paths)?;
    let rows: Vec<FileHash> = db
        .all(
            "SELECT path, content_hash, index_key, tags FROM files \
             WHERE namespace = ?1 AND path IN (SELECT value FROM json_each(?2))",
            &args![namespace, paths.as_str()],
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.path, IndexedFile { content_hash: r.content_hash, index_key: r.index_key, tags: r.tags }))
        .collect())
}

/// The indexed paths of a namespace after `after` (`""`: from the first), in path order, at most
/// `limit`.
pub async fn indexed_paths_after(
    db: &Db,
    namespace: &str,
    after: &str,
    limit: usize,
) -> StoreResult<Vec<String>> {
    #[derive(Deserialize)]
    struct PathRow {
        path: String,
    }
    let rows: Vec<PathRow> = db
        .all(
            "SELECT path FROM files WHERE namespace = ?1 AND path > ?2 ORDER BY path LIMIT ?3",
            &args![namespace, after, limit],
        )
        .await?;
    Ok(rows.into_iter().map(|r| r.path).collect())
}

#[derive(Debug, Clone, Deserialize)]
pub struct FileRow {
    pub path: String,
    pub content_hash: String,
    pub size: i64,
    pub language: String,
    pub chunk_count: i64,
    pub index_key: Option<String>,
    pub updated_at: String,
    pub tags: String,
}

pub async fn list_files(db: &Db, namespace: &str) -> StoreResult<Vec<FileRow>> {
    db.all(
        "SELECT path, content_hash, size, language, chunk_count, index_key, updated_at, tags FROM files \
         WHERE namespace = ? ORDER BY path",
        &args![namespace],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct PathId {
    pub path: String,
    pub id: String,
}

/// Ids of the chunks currently stored for `paths`.
pub async fn chunk_ids_for_paths(db: &Db, namespace: &str, paths: &[String]) -> StoreResult<Vec<PathId>> {
    let mut out = Vec::new();
    for group in paths.chunks(MAX_PARAMS - 1) {
        let mut params: Vec<Arg> = args![namespace].into();
        params.extend(group.iter().map(|p| Arg::Text(p)));
        let rows: Vec<PathId> = db
            .all(
                &format!(
                    "SELECT path, id FROM chunks WHERE namespace = ? AND path IN ({})",
                    placeholders(group.len())
                ),
                &params,
            )
            .await?;
        out.extend(rows);
    }
    Ok(out)
}

/// Every chunk id of a namespace, a page at a time (repository deletion).
pub async fn chunk_ids_page(db: &Db, namespace: &str, after: &str, limit: u32) -> StoreResult<Vec<String>> {
    #[derive(Deserialize)]
    struct Id {
        id: String,
    }
    let rows: Vec<Id> = db
        .all(
            "SELECT id FROM chunks WHERE namespace = ? AND id > ? ORDER BY id LIMIT ?",
            &args![namespace, after, limit],
        )
        .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

pub fn delete_chunks_statements(
    db: &Db,
    namespace: &str,
    ids: &[String],
) -> StoreResult<Vec<D1PreparedStatement>> {
    ids.chunks(MAX_PARAMS - 1)
        .map(|group| {
            let mut params: Vec<Arg> = args![namespace].into();
            params.extend(group.iter().map(|id| Arg::Text(id)));
            db.stmt(
                &format!("DELETE FROM chunks WHERE namespace = ? AND id IN ({})", placeholders(group.len())),
                &params,
            )
        })
        .collect()
}

/// Ids per statement staged or cleared at once (passed as one JSON array parameter).
const VECTOR_DELETE_GROUP: usize = 500;

/// Stage the vector ids of the chunks this batch deletes (`pending_vector_deletes`): part of the
/// same D1 batch, so the ids are recorded exactly when the chunks are gone.
pub fn stage_vector_deletes_statements(
    db: &Db,
    namespace: &str,
    job_id: &str,
    ids: &[String],
) -> StoreResult<Vec<D1PreparedStatement>> {
    ids.chunks(VECTOR_DELETE_GROUP)
        .map(|group| {
            let list = super::json_array(group)?;
            db.stmt(
                "INSERT OR IGNORE INTO pending_vector_deletes (namespace, id, job_id) \
                 SELECT ?1, value, ?2 FROM json_each(?3)",
                &args![namespace, job_id, list.as_str()],
            )
        })
        .collect()
}

/// The staged vector deletes of a namespace, split into the ids whose chunk exists again (a later
/// version re-created the same chunk: its vector is live and stays) and the ids to delete.
pub async fn pending_vector_deletes(db: &Db, namespace: &str) -> StoreResult<(Vec<String>, Vec<String>)> {
    #[derive(Deserialize)]
    struct Pending {
        id: String,
        live: i64,
    }
    let rows: Vec<Pending> = db
        .all(
            "SELECT p.id, EXISTS (SELECT 1 FROM chunks c WHERE c.namespace = p.namespace AND c.id = p.id) AS live \
             FROM pending_vector_deletes p WHERE p.namespace = ? ORDER BY p.id LIMIT ?",
            &args![namespace, VECTOR_DELETE_GROUP as u32],
        )
        .await?;
    let (live, dead): (Vec<Pending>, Vec<Pending>) = rows.into_iter().partition(|p| p.live != 0);
    Ok((live.into_iter().map(|p| p.id).collect(), dead.into_iter().map(|p| p.id).collect()))
}

/// Forget staged vector deletes once their vectors are gone (or live again).
pub async fn clear_vector_deletes(db: &Db, namespace: &str, ids: &[String]) -> StoreResult<()> {
    for group in ids.chunks(VECTOR_DELETE_GROUP) {
        let list = super::json_array(group)?;
        db.run(
            "DELETE FROM pending_vector_deletes WHERE namespace = ?1 AND id IN (SELECT value FROM json_each(?2))",
            &args![namespace, list.as_str()],
        )
        .await?;
    }
    Ok(())
}

/// A chunk ready to be written with everything the row needs.
pub struct ChunkRow<'a> {
    pub chunk: &'a Chunk,
    pub keywords: String,
    pub metadata: String,
    pub search_text: String,
    /// The file's tags, stored form (`edgerag_core::tags::to_column`).
    pub tags: String,
}

impl<'a> ChunkRow<'a> {
    pub fn new(chunk: &'a Chunk) -> ChunkRow<'a> {
        ChunkRow {
            chunk,
            keywords: serde_json::to_string(&chunk.keywords).unwrap_or_else(|_| "[]".into()),
            metadata: serde_json::to_string(&chunk.metadata).unwrap_or_else(|_| "{}".into()),
            search_text: edgerag_core::text::fts_document(chunk),
            tags: String::new(),
        }
    }

    /// The row with its file's tags (stored form).
    pub fn with_tags(self, tags: &str) -> ChunkRow<'a> {
        ChunkRow { tags: tags.to_string(), ..self }
    }
}

const CHUNK_COLUMNS: &[&str] = &[
    "id",
    "path",
    "chunk_index",
    "language",
    "type",
    "text",
    "text_hash",
    "start_line",
    "end_line",
    "start_byte",
    "end_byte",
    "token_count",
    "keywords",
    "metadata",
    "symbol_name",
    "symbol_terms",
    "path_terms",
    "parent_symbol",
    "span_hash",
    "search_text",
    "version",
    "tags",
];

/// Upsert chunks (namespace, updated_at and `embedded = 1` are shared parameters; the rows travel
/// as JSON arrays in column order, a few hundred rows per statement instead of 4).
pub fn upsert_chunks_statements(
    db: &Db,
    namespace: &str,
    now: &str,
    rows: &[ChunkRow<'_>],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let values = rows.iter().map(|row| {
        let c = row.chunk;
        serde_json::json!([
            c.id,
            c.path,
            c.chunk_index,
            c.language.as_str(),
            c.chunk_type.as_str(),
            c.text,
            c.text_hash,
            c.start_line,
            c.end_line,
            c.start_byte,
            c.end_byte,
            c.token_count,
            row.keywords,
            row.metadata,
            c.metadata.symbol_name,
            c.metadata.symbol_name.as_deref().and_then(edgerag_core::text::keyword_terms),
            edgerag_core::text::keyword_terms(&c.path),
            c.metadata.parent_symbol,
            c.metadata.span_hash,
            row.search_text,
            c.version,
            row.tags
        ])
    });
    let columns: Vec<String> =
        (0..CHUNK_COLUMNS.len()).map(|i| format!("json_extract(value, '$[{i}]')")).collect();
    let updates: Vec<String> = CHUNK_COLUMNS
        .iter()
        .filter(|c| **c != "id")
        .map(|c| format!("{c} = excluded.{c}"))
        .chain(["updated_at = excluded.updated_at".into(), "embedded = 1".into()])
        .collect();
    // `WHERE true`: SQLite needs it to parse `INSERT … SELECT … ON CONFLICT`.
    let sql = format!(
        "INSERT INTO chunks (namespace, {}, updated_at, embedded) \
         SELECT ?1, {}, ?2, 1 FROM json_each(?3) WHERE true \
         ON CONFLICT(namespace, id) DO UPDATE SET {}",
        CHUNK_COLUMNS.join(", "),
        columns.join(", "),
        updates.join(", ")
    );
    super::json_batches(values, super::JSON_BATCH_BYTES)
        .iter()
        .map(|batch| db.stmt(&sql, &args![namespace, now, batch.as_str()]))
        .collect()
}

pub struct FileRecord<'a> {
    pub path: &'a str,
    pub content_hash: &'a str,
    pub size: i64,
    pub language: &'a str,
    pub chunk_count: i64,
    pub index_key: &'a str,
    /// Stored form (`edgerag_core::tags::to_column`).
    pub tags: &'a str,
}

pub fn upsert_file_statement(
    db: &Db,
    namespace: &str,
    job_id: &str,
    now: &str,
    f: &FileRecord<'_>,
) -> StoreResult<D1PreparedStatement> {
    let mut statements = upsert_files_statements(db, namespace, job_id, now, std::slice::from_ref(f))?;
    statements.pop().ok_or_else(|| super::StoreError("no file to upsert".into()))
}

/// Upsert many `files` rows (JSON arrays in column order, as for chunks).
pub fn upsert_files_statements(
    db: &Db,
    namespace: &str,
    job_id: &str,
    now: &str,
    files: &[FileRecord<'_>],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let values = files.iter().map(|f| {
        serde_json::json!([f.path, f.content_hash, f.size, f.language, f.chunk_count, f.index_key, f.tags])
    });
    super::json_batches(values, super::JSON_BATCH_BYTES)
        .iter()
        .map(|batch| {
            db.stmt(
                "INSERT INTO files (namespace, path, content_hash, size, language, chunk_count, job_id, updated_at, \
                   index_key, tags) \
                 SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
                   json_extract(value, '$[3]'), json_extract(value, '$[4]'), ?2, ?3, json_extract(value, '$[5]'), \
                   json_extract(value, '$[6]') FROM json_each(?4) WHERE true \
                 ON CONFLICT(namespace, path) DO UPDATE SET content_hash = excluded.content_hash, size = excluded.size, \
                   language = excluded.language, chunk_count = excluded.chunk_count, job_id = excluded.job_id, \
                   updated_at = excluded.updated_at, index_key = excluded.index_key, tags = excluded.tags",
                &args![namespace, job_id, now, batch.as_str()],
            )
        })
        .collect()
}

pub fn delete_file_statement(db: &Db, namespace: &str, path: &str) -> StoreResult<D1PreparedStatement> {
    db.stmt("DELETE FROM files WHERE namespace = ? AND path = ?", &args![namespace, path])
}

/// [`delete_file_statement`] for many files, in a few statements.
pub fn delete_files_statements(
    db: &Db,
    namespace: &str,
    paths: &[&str],
) -> StoreResult<Vec<D1PreparedStatement>> {
    super::delete_paths_statements(db, "files", namespace, paths)
}
