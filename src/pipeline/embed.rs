//! Embed stage: vectors for the staged chunks of the chunked files of a range, through the
//! configured embedder behind the D1 embedding cache (the same text is never embedded twice, so
//! a retried message only pays for what failed). Files move chunked → embedded in one
//! transaction, then the index message.
use edgerag_core::embed::Embedder;
use edgerag_core::Chunk;

use super::messages::{SeqRange, Stage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::store::jobs;
use crate::store::staging;

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "embed").await?;
    let rows = staging::chunks_to_embed(&ctx.db, &job.id, msg.from_seq, msg.to_seq).await?;
    let mut vectors = Vec::with_capacity(rows.len());
    if !rows.is_empty() {
        let mut texts = Vec::with_capacity(rows.len());
        for row in &rows {
            let chunk: Chunk = serde_json::from_str(&row.chunk)
                .map_err(|e| StageError::permanent("CORRUPT_STAGING", format!("staged chunk: {e}")))?;
            texts.push(edgerag_core::text::embedding_text(&chunk));
        }
        let embedder = crate::embed::cached_embedder_from_env(&ctx.env)?;
        let embedded = embedder.embed(&texts).await?;
        if embedded.len() != rows.len() {
            return Err(StageError::retryable(
                "EMBED_WRONG_COUNT",
                format!("{} vectors for {} texts", embedded.len(), rows.len()),
            ));
        }
        for (row, vector) in rows.iter().zip(embedded) {
            vectors.push((row.seq, row.chunk_index, serde_json::to_string(&vector).unwrap_or_default()));
        }
    }
    // Also run with no vectors: moves files with zero chunks (empty files) to `embedded`.
    let statements = staging::embedded_statements(&ctx.db, &job.id, msg.from_seq, msg.to_seq, &vectors)?;
    ctx.db.batch(statements).await?;
    let next = StageMessage::range(Stage::Index, &job.id, msg.from_seq, msg.to_seq);
    producer::send(&ctx.env, &[next], ctx.cfg.deliver_twice).await?;
    Ok(())
}
