//! Chunk stage: the core's chunker over the pending files of a range; chunks staged in
//! `job_chunks`, files moved pending → chunked in one transaction, then the embed message.
use edgerag_core::ChunkConfig;

use super::messages::{SeqRange, Stage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::store::staging::{self, StagedChunk};
use crate::store::{graph, jobs};

/// The chunking configuration of the pipeline: the core's defaults, the worker's file
/// size limit.
pub fn pipeline_config(ctx: &Ctx) -> ChunkConfig {
    ChunkConfig { max_file_bytes: ctx.cfg.max_file_bytes, ..ChunkConfig::default() }
}

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "chunk").await?;
    let config = pipeline_config(ctx);
    let files = staging::pending_files(&ctx.db, &job.id, msg.from_seq, msg.to_seq).await?;
    let mut statements = Vec::new();
    for file in &files {
        let text = file.content.as_deref().unwrap_or("");
        // One parse gives the chunks and the file's graph.
        let (chunks, file_graph) = edgerag_core::graph::chunk_with_graph(&file.path, text, &config);
        // A chunk that cannot be serialized fails the message: staging it empty would lose it.
        let json = chunks
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| StageError::permanent("CHUNK_SERIALIZATION", format!("{}: {e}", file.path)))?;
        let staged: Vec<StagedChunk> = chunks
            .iter()
            .zip(&json)
            .map(|(c, j)| StagedChunk { chunk_index: c.chunk_index, chunk_json: j, text_hash: &c.text_hash })
            .collect();
        statements.extend(staging::chunked_statements(&ctx.db, &job.id, file.seq, &staged)?);
        statements.extend(graph::replace_file_statements(
            &ctx.db,
            &job.namespace,
            &file.path,
            file_graph.as_ref(),
        )?);
    }
    ctx.db.batch(statements).await?;
    // Always forward: a replay must still reach the next stage if the first send was lost.
    let next = StageMessage::range(Stage::Embed, &job.id, msg.from_seq, msg.to_seq);
    producer::send(&ctx.env, &[next], ctx.cfg.deliver_twice).await?;
    Ok(())
}
