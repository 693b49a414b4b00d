//! Index stage: for each embedded (or deleted) file of a range, in this order —
//! 1. upsert the new vectors (ids are chunk ids, so a replay overwrites the same vectors);
//! 2. one D1 transaction: delete the stale chunks (stored in D1 but not produced any more; FTS
//!    follows by trigger) and stage their vector ids in `pending_vector_deletes`, upsert the new
//!    chunks and the `files` row (or delete it), mark the staging row done;
//! 3. delete the staged vectors, then their staging rows.
//!
//! Until the D1 batch commits, the old version keeps every vector, so a failing batch leaves it
//! found by vector search as well as by keyword. A crash before the commit leaves D1 describing the
//! old file and the retry recomputes the same stale set; a crash after it leaves the ids staged,
//! and any later index message of the namespace (the redelivery included) deletes them. Then the
//! job is completed if nothing else is left.
use std::collections::{HashMap, HashSet};

use edgerag_core::vector::VectorRecord;
use edgerag_core::Chunk;

use super::messages::SeqRange;
use super::{Ctx, StageError};
use crate::store::chunks::{self, ChunkRow, FileRecord};
use crate::store::{jobs, staging};

/// A staged chunk, its vector and — for a parent/child child — its `chunks.metadata` JSON.
type StagedRow = (Chunk, Vec<f32>, Option<String>);

/// Vectors per upsert call (Vectorize accepts up to 1000).
const UPSERT_BATCH: usize = 500;

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "index").await?;
    let ns = job.namespace.as_str();
    let files = staging::files_to_index(&ctx.db, &job.id, msg.from_seq, msg.to_seq).await?;
    if !files.is_empty() {
        let staged = staging::chunks_with_vectors(&ctx.db, &job.id, msg.from_seq, msg.to_seq).await?;
        let mut by_seq: HashMap<i64, Vec<StagedRow>> = HashMap::new();
        for row in staged {
            let raw: serde_json::Value = serde_json::from_str(&row.chunk)
                .map_err(|e| StageError::permanent("CORRUPT_STAGING", format!("staged chunk: {e}")))?;
            // A parent/child child's metadata carries its parent link: written as staged.
            let link_metadata =
                raw.get("metadata").filter(|m| m.get("parentId").is_some()).map(|m| m.to_string());
            let chunk: Chunk = serde_json::from_value(raw)
                .map_err(|e| StageError::permanent("CORRUPT_STAGING", format!("staged chunk: {e}")))?;
            let vector: Vec<f32> =
                row.vector.as_deref().and_then(|v| serde_json::from_str(v).ok()).ok_or_else(|| {
                    StageError::retryable("MISSING_VECTOR", format!("chunk {} has no vector yet", chunk.id))
                })?;
            by_seq.entry(row.seq).or_default().push((chunk, vector, link_metadata));
        }
        let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        let mut existing: HashMap<String, Vec<String>> = HashMap::new();
        for pid in chunks::chunk_ids_for_paths(&ctx.db, ns, &paths).await? {
            existing.entry(pid.path).or_default().push(pid.id);
        }

        // 1: the new vectors.
        let index = crate::vector::vector_index_from_env(&ctx.env)?;
        let tags: HashMap<i64, Vec<String>> =
            files.iter().map(|f| (f.seq, edgerag_core::tags::from_column(&f.tags))).collect();
        let records: Vec<VectorRecord> = by_seq
            .iter()
            .flat_map(|(seq, cs)| {
                let tags = tags.get(seq).map(Vec::as_slice).unwrap_or(&[]);
                cs.iter().map(move |(c, v, _)| VectorRecord::of_chunk(c, v.clone(), tags))
            })
            .collect();
        for group in records.chunks(UPSERT_BATCH) {
            index.upsert(ns, group).await?;
        }
        let mut stale: Vec<String> = Vec::new();
        for file in &files {
            let keep: HashSet<&str> = by_seq
                .get(&file.seq)
                .map(|cs| cs.iter().map(|(c, _, _)| c.id.as_str()).collect())
                .unwrap_or_default();
            if let Some(ids) = existing.get(&file.path) {
                stale.extend(ids.iter().filter(|id| !keep.contains(id.as_str())).cloned());
            }
        }

        // 2: D1, one transaction for the whole range (each file's rows change together).
        let now = crate::time::now_iso();
        let key = job.index_key.clone().unwrap_or_else(|| super::index_key(&ctx.env));
        // The namespace's keyword index first: the chunk writes below fire its triggers.
        let mut statements = crate::store::keyword::ensure_statements(&ctx.db, ns)?;
        statements.extend(chunks::delete_chunks_statements(&ctx.db, ns, &stale)?);
        statements.extend(chunks::stage_vector_deletes_statements(&ctx.db, ns, &job.id, &stale)?);
        for file in &files {
            if file.change == "deleted" {
                statements.push(chunks::delete_file_statement(&ctx.db, ns, &file.path)?);
                statements.extend(crate::store::graph::delete_file_statements(&ctx.db, ns, &file.path)?);
                statements.push(crate::store::documents::delete_parents_statement(&ctx.db, ns, &file.path)?);
            } else {
                let file_chunks = by_seq.get(&file.seq).map(Vec::as_slice).unwrap_or(&[]);
                let rows: Vec<ChunkRow> = file_chunks
                    .iter()
                    .map(|(c, _, link)| {
                        let mut row = ChunkRow::new(c).with_tags(&file.tags);
                        if let Some(meta) = link {
                            row.metadata = meta.clone();
                        }
                        row
                    })
                    .collect();
                statements.extend(chunks::upsert_chunks_statements(&ctx.db, ns, &now, &rows)?);
                statements.push(chunks::upsert_file_statement(
                    &ctx.db,
                    ns,
                    &job.id,
                    &now,
                    &FileRecord {
                        path: &file.path,
                        content_hash: file.content_hash.as_deref().unwrap_or(""),
                        size: file.size,
                        language: file.language.as_deref().unwrap_or("text"),
                        chunk_count: file_chunks.len() as i64,
                        index_key: &key,
                        tags: &file.tags,
                    },
                )?);
            }
            statements.push(staging::mark_done_statement(&ctx.db, &job.id, file.seq)?);
        }
        #[cfg(feature = "test-hooks")]
        super::faults::index_batch(&ctx.db, ns, &mut statements)?;
        ctx.db.batch(statements).await?;
    }
    // 3: also when the range was already indexed (a redelivery after the batch committed).
    delete_staged_vectors(ctx, ns).await?;
    jobs::refresh_counters(&ctx.db, &job.id).await?;
    if super::finish::try_complete(&ctx.db, &job.id, ns, crate::embed::embedder_view(&ctx.env).as_ref())
        .await?
    {
        super::sync::after_job(ctx, ns).await;
    }
    Ok(())
}

/// Delete the vectors staged by committed index batches of `ns` (a page per round), skipping any
/// whose chunk exists again, then forget them. Idempotent: deleting a missing vector is a no-op.
async fn delete_staged_vectors(ctx: &Ctx, ns: &str) -> Result<(), StageError> {
    let mut index = None;
    loop {
        let (live, dead) = chunks::pending_vector_deletes(&ctx.db, ns).await?;
        if live.is_empty() && dead.is_empty() {
            return Ok(());
        }
        if !dead.is_empty() {
            let index = match &mut index {
                Some(index) => index,
                None => index.insert(crate::vector::vector_index_from_env(&ctx.env)?),
            };
            for group in dead.chunks(UPSERT_BATCH) {
                index.delete_by_ids(ns, group).await?;
            }
        }
        chunks::clear_vector_deletes(&ctx.db, ns, &[live, dead].concat()).await?;
    }
}
