//! Index stage: for each embedded (or deleted) file of a range, in groups of consecutive files of
//! at most [`INDEX_GROUP_BYTES`] of staged chunks and vectors (a larger file alone), in this
//! order —
//! 1. upsert the group's new vectors (ids are chunk ids, so a replay overwrites the same vectors);
//! 2. one D1 transaction per group: delete the stale chunks (stored in D1 but not produced any
//!    more; FTS follows by trigger) and stage their vector ids in `pending_vector_deletes`, upsert
//!    the new chunks and the `files` rows (or delete them), mark the staging rows done;
//! 3. once every group is written, delete the staged vectors, then their staging rows.
//!
//! Until a group's D1 batch commits, the old version keeps every vector, so a failing batch leaves
//! it found by vector search as well as by keyword. A crash before the commit leaves D1 describing
//! the old files and the retry (which reads only the files not marked done: the groups not
//! written yet) recomputes the same stale set; a crash after it leaves the ids staged, and any
//! later index message of the namespace (the redelivery included) deletes them. Then,
//! once nothing else is left, the job is completed or its end starts (`super::end`).
use std::collections::{HashMap, HashSet};

use edgerag_core::vector::VectorRecord;
use edgerag_core::Chunk;

use super::messages::{SeqRange, Stage, StageMessage};
use super::{Ctx, StageError};
use crate::ledger::{Budget, Statements};
use crate::store::chunks::{self, ChunkRow, FileRecord};
use crate::store::{jobs, rows, staging, JSON_BATCH_BYTES};

/// A staged chunk, its vector and — for a parent/child child — its `chunks.metadata` JSON.
type StagedRow = (Chunk, Vec<f32>, Option<String>);

/// Vectors per upsert call (Vectorize accepts up to 1000).
const UPSERT_BATCH: usize = 500;

/// Staged chunk and vector bytes (the vectors as hex, as they are read) an index message reads,
/// parses and writes at a time. A message wrote its whole range at once: every staged chunk's
/// JSON and vector's hex, the parsed chunks and vectors, the vector records and the chunk rows
/// were in wasm memory together (a range of 50 files of 120 small functions, 6,000 chunks, took
/// the wasm memory from 37.1 to 58.5 MB).
pub const INDEX_GROUP_BYTES: usize = 4 << 20;

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "index").await?;
    ctx.lap("job");
    let ns = job.namespace.as_str();
    // The files still to index, with the bytes of their staged chunks and vectors.
    let reads = ctx
        .db
        .batch_results(vec![staging::files_to_index_statement(&ctx.db, &job.id, msg.from_seq, msg.to_seq)?])
        .await?;
    let files: Vec<staging::FileToIndex> = rows(reads.first())?;
    drop(reads);
    ctx.lap("read");
    if !files.is_empty() {
        let sizes: Vec<usize> = files.iter().map(staging::FileToIndex::bytes).collect();
        let groups = edgerag_core::pages::pages_of(&sizes, INDEX_GROUP_BYTES);
        // A range whose writes would pass the statement budget goes on as two halves.
        let bytes: usize = sizes.iter().sum();
        let statements = statements_for_groups(
            groups.iter().map(|&(first, count)| sizes[first..first + count].iter().sum()),
        );
        if files.len() > 1 && !Budget::fits(&Statements::new(ctx.cfg.batch_d1_statements), statements) {
            let halves =
                split_range(&files.iter().map(|f| f.seq).collect::<Vec<_>>(), msg.from_seq, msg.to_seq);
            let next: Vec<StageMessage> = halves
                .iter()
                .map(|&(from, to)| StageMessage::range(Stage::Index, &job.id, from, to))
                .collect();
            crate::log::info(
                "index_range_split",
                &[("job", &job.id), ("files", &files.len().to_string()), ("bytes", &bytes.to_string())],
            );
            super::producer::send(&ctx.env, &next, false).await?;
            return Ok(());
        }
        let index = crate::vector::vector_index_from_env(&ctx.env)?;
        let key = job.index_key.clone().unwrap_or_else(|| super::index_key(&ctx.env));
        // Group by group, each in its own transaction (a file's rows always in one): a message
        // that fails part way is delivered again and finds only the files not written yet.
        for (i, &(first, count)) in groups.iter().enumerate() {
            let group = Group { files: &files[first..first + count], first: i == 0, key: &key };
            write_group(ctx, &job.id, ns, index.as_ref(), group).await?;
        }
    }
    // 3: also when the range was already indexed (a redelivery after the batch committed).
    delete_staged_vectors(ctx, ns).await?;
    // Refreshes the job's counters in the same batch that may complete it or start its end.
    let completed = super::end::settle(ctx, &job.id, ns).await?;
    ctx.lap("finish");
    if completed {
        super::sync::after_job(ctx, ns).await;
    }
    Ok(())
}

/// Consecutive files of a range written together.
struct Group<'a> {
    files: &'a [staging::FileToIndex],
    /// The message's first group: it makes sure the namespace's keyword index exists.
    first: bool,
    key: &'a str,
}

/// Steps 1 and 2 for a group of files: their staged chunks and vectors read in one round trip
/// with the ids stored for their paths now, the new vectors upserted, then one D1 transaction.
async fn write_group(
    ctx: &Ctx,
    job_id: &str,
    ns: &str,
    index: &dyn edgerag_core::vector::VectorIndex,
    group: Group<'_>,
) -> Result<(), StageError> {
    let files = group.files;
    let (Some(from), Some(to)) = (files.first().map(|f| f.seq), files.last().map(|f| f.seq)) else {
        return Ok(());
    };
    let reads = ctx
        .db
        .batch_results(vec![
            staging::chunks_with_vectors_statement(&ctx.db, job_id, from, to)?,
            staging::stored_chunk_ids_statement(&ctx.db, job_id, ns, from, to)?,
        ])
        .await?;
    ctx.lap("read");
    let mut by_seq: HashMap<i64, Vec<StagedRow>> = HashMap::new();
    for row in rows::<staging::ChunkWithVector>(reads.first())? {
        let raw: serde_json::Value = serde_json::from_str(&row.chunk)
            .map_err(|e| StageError::permanent("CORRUPT_STAGING", format!("staged chunk: {e}")))?;
        // A parent/child child's metadata carries its parent link: written as staged.
        let link_metadata =
            raw.get("metadata").filter(|m| m.get("parentId").is_some()).map(|m| m.to_string());
        let chunk: Chunk = serde_json::from_value(raw)
            .map_err(|e| StageError::permanent("CORRUPT_STAGING", format!("staged chunk: {e}")))?;
        let vector: Vec<f32> = row.vector().ok_or_else(|| {
            StageError::retryable("MISSING_VECTOR", format!("chunk {} has no vector yet", chunk.id))
        })?;
        by_seq.entry(row.seq).or_default().push((chunk, vector, link_metadata));
    }
    let mut existing: HashMap<String, Vec<String>> = HashMap::new();
    for pid in rows::<chunks::PathId>(reads.get(1))? {
        existing.entry(pid.path).or_default().push(pid.id);
    }
    drop(reads);
    ctx.lap("parse");

    // 1: the new vectors.
    let tags: HashMap<i64, Vec<String>> =
        files.iter().map(|f| (f.seq, edgerag_core::tags::from_column(&f.tags))).collect();
    {
        let records: Vec<VectorRecord> = by_seq
            .iter()
            .flat_map(|(seq, cs)| {
                let tags = tags.get(seq).map(Vec::as_slice).unwrap_or(&[]);
                cs.iter().map(move |(c, v, _)| VectorRecord::of_chunk(c, v.clone(), tags))
            })
            .collect();
        for batch in records.chunks(UPSERT_BATCH) {
            index.upsert(ns, batch).await?;
        }
    }
    ctx.lap("vectors");
    let mut stale: Vec<String> = Vec::new();
    for file in files {
        let keep: HashSet<&str> = by_seq
            .get(&file.seq)
            .map(|cs| cs.iter().map(|(c, _, _)| c.id.as_str()).collect())
            .unwrap_or_default();
        if let Some(ids) = existing.get(&file.path) {
            stale.extend(ids.iter().filter(|id| !keep.contains(id.as_str())).cloned());
        }
    }
    drop(existing);

    // 2: D1, one transaction for the group (each file's rows change together).
    let now = crate::time::now_iso();
    // The namespace's keyword index first: the chunk writes below fire its triggers.
    let mut statements =
        if group.first { crate::store::keyword::ensure_statements(&ctx.db, ns)? } else { Vec::new() };
    statements.extend(chunks::delete_chunks_statements(&ctx.db, ns, &stale)?);
    statements.extend(chunks::stage_vector_deletes_statements(&ctx.db, ns, job_id, &stale)?);
    let mut records = Vec::with_capacity(files.len());
    let mut rows_out: Vec<ChunkRow> = Vec::new();
    // Deleted files: their rows in a few statements for all of them.
    let deleted: Vec<&str> =
        files.iter().filter(|f| f.change == "deleted").map(|f| f.path.as_str()).collect();
    statements.extend(chunks::delete_files_statements(&ctx.db, ns, &deleted)?);
    statements.extend(crate::store::graph::delete_files_statements(&ctx.db, ns, &deleted)?);
    statements.extend(crate::store::documents::delete_parents_of_statements(&ctx.db, ns, &deleted)?);
    for file in files {
        if file.change != "deleted" {
            let file_chunks = by_seq.get(&file.seq).map(Vec::as_slice).unwrap_or(&[]);
            rows_out.extend(file_chunks.iter().map(|(c, _, link)| {
                let mut row = ChunkRow::new(c).with_tags(&file.tags);
                if let Some(meta) = link {
                    row.metadata = meta.clone();
                }
                row
            }));
            records.push(FileRecord {
                path: &file.path,
                content_hash: file.content_hash.as_deref().unwrap_or(""),
                size: file.size,
                language: file.language.as_deref().unwrap_or("text"),
                chunk_count: file_chunks.len() as i64,
                index_key: group.key,
                tags: &file.tags,
            });
        }
    }
    statements.extend(chunks::upsert_chunks_statements(&ctx.db, ns, &now, &rows_out)?);
    drop(rows_out);
    drop(by_seq);
    statements.extend(chunks::upsert_files_statements(&ctx.db, ns, job_id, &now, &records)?);
    let seqs: Vec<i64> = files.iter().map(|f| f.seq).collect();
    statements.push(staging::mark_done_statement(&ctx.db, job_id, &seqs)?);
    #[cfg(feature = "test-hooks")]
    super::faults::index_batch(&ctx.db, ns, &mut statements)?;
    ctx.db.batch(statements).await?;
    ctx.lap("write");
    Ok(())
}

/// Statements of an index message whatever its size (the job, the reads, the vector index's
/// bookkeeping, the files' and staging rows, the staged deletes, the completion's check).
const FIXED_STATEMENTS: usize = 24;

/// Statements each group after a message's first takes whatever its size (its reads, the vector
/// index's bookkeeping, the files' and staging rows, the staged deletes).
const GROUP_STATEMENTS: usize = 12;

/// About how many statements an index message writing `bytes` of staged chunks and vectors takes:
/// the fixed ones, and for every [`JSON_BATCH_BYTES`] of them the chunk rows, the vector rows
/// and their 8-bit copies (each row grows as it is written: search text, metadata, hex).
pub fn statements_for(bytes: usize) -> usize {
    FIXED_STATEMENTS + 3 * bytes.div_ceil(JSON_BATCH_BYTES)
}

/// [`statements_for`] a message written in groups of these bytes ([`INDEX_GROUP_BYTES`]): each
/// group's rows in batches of their own, each group after the first its own fixed statements.
pub fn statements_for_groups(groups: impl IntoIterator<Item = usize>) -> usize {
    groups
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| {
            statements_for(bytes) - if i == 0 { 0 } else { FIXED_STATEMENTS - GROUP_STATEMENTS }
        })
        .sum::<usize>()
        .max(FIXED_STATEMENTS)
}

/// A range of files (their `seqs`, in any order, at least two) as two ranges of about half the
/// files each, covering `from..=to` together.
pub fn split_range(seqs: &[i64], from: i64, to: i64) -> [(i64, i64); 2] {
    let mut seqs = seqs.to_vec();
    seqs.sort_unstable();
    let mid = seqs[seqs.len() / 2];
    [(from, mid - 1), (mid, to)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_splits_into_two_halves_covering_it() {
        assert_eq!(split_range(&[7, 3, 5, 9], 1, 12), [(1, 6), (7, 12)]);
        assert_eq!(split_range(&[4, 8], 4, 8), [(4, 7), (8, 8)]);
        // Each half holds at least one of the files.
        let seqs = [10, 11, 12];
        let [(a, b), (c, d)] = split_range(&seqs, 10, 12);
        assert!(seqs.iter().any(|s| (a..=b).contains(s)) && seqs.iter().any(|s| (c..=d).contains(s)));
        assert_eq!((b + 1, d), (c, 12));
    }

    #[test]
    fn statements_grow_with_the_bytes_written() {
        assert_eq!(statements_for(0), FIXED_STATEMENTS);
        assert_eq!(statements_for(1), FIXED_STATEMENTS + 3);
        assert_eq!(statements_for(JSON_BATCH_BYTES + 1), FIXED_STATEMENTS + 6);
    }

    #[test]
    fn each_group_after_the_first_adds_its_own_fixed_statements() {
        assert_eq!(statements_for_groups([]), FIXED_STATEMENTS);
        assert_eq!(statements_for_groups([1]), statements_for(1));
        assert_eq!(
            statements_for_groups([JSON_BATCH_BYTES, 1, JSON_BATCH_BYTES + 1]),
            FIXED_STATEMENTS + 3 + GROUP_STATEMENTS + 3 + GROUP_STATEMENTS + 6
        );
    }
}
