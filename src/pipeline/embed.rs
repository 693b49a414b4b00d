//! Embed stage: vectors for the staged chunks of the chunked files of a range, through the
//! configured embedder behind the D1 embedding cache (the same text is never embedded twice, so
//! a retried message only pays for what failed). The cache is read in one round trip and the
//! message's new vectors written to it in one batch; the vectors are staged as f32
//! little-endian BLOBs and the files move chunked → embedded in one transaction, then the index
//! message.
use std::collections::HashMap;

use edgerag_core::embed::{CachedEmbedder, EmbedError, Embedder, EmbeddingCache};
use edgerag_core::Chunk;

use super::messages::{SeqRange, Stage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::embed::D1EmbeddingCache;
use crate::store::jobs;
use crate::store::staging::{self, StagedVector};

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "embed").await?;
    ctx.lap("job");
    let rows = staging::chunks_to_embed(&ctx.db, &job.id, msg.from_seq, msg.to_seq).await?;
    ctx.lap("read");
    let mut vectors: Vec<StagedVector> = Vec::with_capacity(rows.len());
    if !rows.is_empty() {
        let mut texts = Vec::with_capacity(rows.len());
        for row in &rows {
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
        for (row, vector) in rows.iter().zip(embedded) {
            vectors.push((row.seq, row.chunk_index, vector));
        }
    }
    // Also run with no vectors: moves files with zero chunks (empty files) to `embedded`.
    let statements = staging::embedded_statements(&ctx.db, &job.id, msg.from_seq, msg.to_seq, &vectors)?;
    ctx.db.batch(statements).await?;
    ctx.lap("write");
    let next = StageMessage::range(Stage::Index, &job.id, msg.from_seq, msg.to_seq);
    producer::send(&ctx.env, &[next], ctx.cfg.deliver_twice).await?;
    ctx.lap("send");
    Ok(())
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
