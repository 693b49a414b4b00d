//! Embed stage: vectors for the staged chunks of the chunked files of a range, through the
//! configured embedder behind the D1 embedding cache (the same text is never embedded twice, so
//! a retried message only pays for what failed). The chunks are embedded in groups of
//! [`EMBED_GROUP_ROWS`]: per group the cache is read in one round trip, the new vectors written to
//! it in one batch, and the vectors staged as f32 little-endian BLOBs; then the files whose chunks
//! all have vectors move chunked → embedded, and the index message.
use std::collections::HashMap;

use edgerag_core::embed::{CachedEmbedder, EmbedError, Embedder, EmbeddingCache};
use edgerag_core::Chunk;

use super::messages::{SeqRange, Stage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::embed::D1EmbeddingCache;
use crate::store::jobs;
use crate::store::staging::{self, StagedVector};

/// Staged chunks embedded and written together: a message of many small chunks (50 files of
/// hundreds of functions, 16,500 chunks) held every chunk's JSON, its text, its vector and the
/// vectors' hex at once, and took a new isolate's wasm memory from 40 to 137 MB.
pub const EMBED_GROUP_ROWS: usize = 1_000;

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "embed").await?;
    ctx.lap("job");
    // Group by group: read, embed (behind the cache), write the vectors. A message that fails part
    // way is delivered again and reads only the chunks still without a vector.
    let mut after = None;
    loop {
        let rows =
            staging::chunks_to_embed(&ctx.db, &job.id, msg.from_seq, msg.to_seq, after, EMBED_GROUP_ROWS)
                .await?;
        ctx.lap("read");
        let Some(last) = rows.last() else { break };
        after = Some((last.seq, last.chunk_index));
        let more = rows.len() == EMBED_GROUP_ROWS;
        let vectors = embed_rows(ctx, &rows).await?;
        drop(rows);
        let statements = staging::vector_statements(&ctx.db, &job.id, &vectors)?;
        drop(vectors);
        ctx.db.batch(statements).await?;
        ctx.lap("write");
        if !more {
            break;
        }
    }
    // Also when there was nothing to embed: moves files with zero chunks (empty files) to `embedded`.
    ctx.db.batch(vec![staging::embedded_statement(&ctx.db, &job.id, msg.from_seq, msg.to_seq)?]).await?;
    ctx.lap("write");
    let next = StageMessage::range(Stage::Index, &job.id, msg.from_seq, msg.to_seq);
    producer::send(&ctx.env, &[next], ctx.cfg.deliver_twice).await?;
    ctx.lap("send");
    Ok(())
}

/// The vectors of `rows`, through the configured embedder behind the D1 embedding cache.
async fn embed_rows(ctx: &Ctx, rows: &[staging::ChunkToEmbed]) -> Result<Vec<StagedVector>, StageError> {
    let mut texts = Vec::with_capacity(rows.len());
    for row in rows {
        let chunk: Chunk = serde_json::from_str(&row.chunk)
            .map_err(|e| StageError::permanent("CORRUPT_STAGING", format!("staged chunk: {e}")))?;
        texts.push(edgerag_core::text::embedding_text(&chunk));
    }
    ctx.lap("parse");
    // The cache lives in the catalog database (keys are global).
    let cache = LappedCache { cache: D1EmbeddingCache::new(ctx.stores.catalog().clone()), ctx };
    let embedder = CachedEmbedder::new(crate::embed::embedder_from_env(&ctx.env)?, cache);
    let embedded = embedder.embed(&texts).await?;
    ctx.lap("embed");
    if embedded.len() != rows.len() {
        return Err(StageError::retryable(
            "EMBED_WRONG_COUNT",
            format!("{} vectors for {} texts", embedded.len(), rows.len()),
        ));
    }
    Ok(rows.iter().zip(embedded).map(|(row, vector)| (row.seq, row.chunk_index, vector)).collect())
}

/// The D1 cache, closing the stage's `cache_read` / `embedder` / `cache_write` laps around its
/// calls (the embedder's own requests fall between the read and the write).
struct LappedCache<'a> {
    cache: D1EmbeddingCache,
    ctx: &'a Ctx,
}

#[async_trait::async_trait(?Send)]
impl EmbeddingCache for LappedCache<'_> {
    async fn get_many(&self, model: &str, keys: &[String]) -> Result<HashMap<String, Vec<f32>>, EmbedError> {
        let found = self.cache.get_many(model, keys).await;
        self.ctx.lap("cache_read");
        found
    }

    async fn put_many(&self, model: &str, entries: &[(String, Vec<f32>)]) -> Result<(), EmbedError> {
        self.ctx.lap("embedder");
        let stored = self.cache.put_many(model, entries).await;
        self.ctx.lap("cache_write");
        stored
    }
}
