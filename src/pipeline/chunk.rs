//! Chunk stage: the core's chunker over the pending files of a range; chunks staged in
//! `job_chunks`, files moved pending → chunked in one transaction, then the embed message.
use edgerag_core::chunk::parent_child::{chunk_document, ParentChildConfig, ParentChunk};
use edgerag_core::chunk::ChunkFallback;
use edgerag_core::{ChunkConfig, Language};

use super::messages::{SeqRange, Stage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::api::ChunkingMode;
use crate::store::staging::{self, StagedChunk};
use crate::store::{documents, graph, jobs, settings};

/// The chunking configuration of the pipeline: the core's defaults, the worker's file
/// size limit.
pub fn pipeline_config(ctx: &Ctx) -> ChunkConfig {
    ChunkConfig { max_file_bytes: ctx.cfg.max_file_bytes, ..ChunkConfig::default() }
}

/// The sentence embedder of parent/child chunking, built once per message when needed.
struct ProseChunker {
    embedder: Box<dyn edgerag_core::embed::Embedder>,
    cache: crate::embed::D1EmbeddingCache,
}

impl ProseChunker {
    fn from_env(ctx: &Ctx) -> Result<Self, StageError> {
        Ok(ProseChunker {
            embedder: crate::embed::embedder_from_env(&ctx.env)?,
            cache: crate::embed::embedding_cache_from_env(&ctx.env)?,
        })
    }
}

/// The staged JSON of a chunk. A parent/child child carries its `chunks.metadata` (the chunk's
/// metadata plus its parent link), which the index stage writes as is.
fn staged_json(chunk: &edgerag_core::Chunk, metadata: Option<&str>) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(chunk)?;
    if let (Some(meta), Some(obj)) = (metadata, value.as_object_mut()) {
        obj.insert("metadata".into(), serde_json::from_str(meta)?);
    }
    serde_json::to_string(&value)
}

pub async fn run(ctx: &Ctx, msg: &SeqRange) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "chunk").await?;
    ctx.lap("job");
    let config = pipeline_config(ctx);
    let files = staging::pending_files(&ctx.db, &job.id, msg.from_seq, msg.to_seq).await?;
    ctx.lap("read");
    let mut statements = Vec::new();
    let mode = settings::chunking(&ctx.db, &job.namespace).await?;
    let mut prose: Option<ProseChunker> = None;
    // Per file: its staged chunk JSON and its graph; written together after the loop.
    let mut per_file: Vec<(i64, Vec<edgerag_core::Chunk>, Vec<String>)> = Vec::with_capacity(files.len());
    let mut graphs = Vec::with_capacity(files.len());
    // Markdown / text paths with their new parents (none when chunked flat).
    let mut parents: Vec<(&str, Vec<ParentChunk>)> = Vec::new();
    // Files cut without their syntax tree (and so without a code graph), with the reason.
    let mut fallbacks: Vec<(&str, ChunkFallback)> = Vec::new();
    for file in &files {
        let text = file.content.as_deref().unwrap_or("");
        // One parse gives the chunks and the file's graph.
        let (mut chunks, file_graph) = edgerag_core::graph::chunk_with_graph(&file.path, text, &config);
        if let Some(fallback) = chunks.first().and_then(|c| c.metadata.fallback) {
            fallbacks.push((file.path.as_str(), fallback));
        }
        let language = Language::detect(&file.path);
        let mut metadata: Vec<Option<String>> = vec![None; chunks.len()];
        if matches!(language, Language::Markdown | Language::Text) {
            // Parents of an earlier parent/child run of this path go; new ones (if any) replace them.
            let parents_of_file = parents.len();
            parents.push((file.path.as_str(), Vec::new()));
            if mode == ChunkingMode::ParentChild && !chunks.is_empty() {
                let chunker = match prose.as_mut() {
                    Some(p) => p,
                    None => prose.insert(ProseChunker::from_env(ctx)?),
                };
                let (pc, _) = chunk_document(
                    &file.path,
                    text,
                    language,
                    &ParentChildConfig::default(),
                    &*chunker.embedder,
                    &chunker.cache,
                )
                .await?;
                (chunks, metadata) = super::document::children_as_chunks(&file.path, text, language, &pc)
                    .into_iter()
                    .map(|(c, m)| (c, Some(m)))
                    .unzip();
                parents[parents_of_file].1 = pc.parents;
            }
        }
        // A chunk that cannot be serialized fails the message: staging it empty would lose it.
        let json = chunks
            .iter()
            .zip(&metadata)
            .map(|(c, meta)| staged_json(c, meta.as_deref()))
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| StageError::permanent("CHUNK_SERIALIZATION", format!("{}: {e}", file.path)))?;
        per_file.push((file.seq, chunks, json));
        graphs.push(file_graph);
    }
    ctx.lap("chunk");
    let staged: Vec<(i64, Vec<StagedChunk>)> = per_file
        .iter()
        .map(|(seq, chunks, json)| {
            let rows = chunks
                .iter()
                .zip(json)
                .map(|(c, j)| StagedChunk {
                    chunk_index: c.chunk_index,
                    chunk_json: j,
                    text_hash: &c.text_hash,
                })
                .collect();
            (*seq, rows)
        })
        .collect();
    let parents: Vec<(&str, &[ParentChunk])> = parents.iter().map(|(p, ps)| (*p, ps.as_slice())).collect();
    statements.extend(documents::replace_parents_statements(&ctx.db, &job.namespace, &parents)?);
    statements.extend(staging::chunked_statements(&ctx.db, &job.id, &staged)?);
    let file_graphs: Vec<(&str, Option<&edgerag_core::graph::FileGraph>)> =
        files.iter().zip(&graphs).map(|(f, g)| (f.path.as_str(), g.as_ref())).collect();
    let (graph_statements, refused) = graph::replace_files_statements(&ctx.db, &job.namespace, &file_graphs)?;
    statements.extend(graph_statements);
    for (path, bytes) in &refused {
        // Its chunks are indexed; its definitions and calls are not in the code graph. The job's
        // status lists the file with the warning.
        statements.push(staging::warning_statement(&ctx.db, &job.id, path, "GRAPH_TOO_LARGE")?);
        crate::log::warn(
            "file_graph_refused",
            &[
                ("job", &job.id),
                ("path", path),
                ("bytes", &bytes.to_string()),
                ("limit", &graph::MAX_FILE_GRAPH_BYTES.to_string()),
                ("code", "GRAPH_TOO_LARGE"),
            ],
        );
    }
    for (path, fallback) in &fallbacks {
        // Its chunks are indexed, cut by the grammar-free heuristics; it has no code graph.
        statements.push(staging::warning_statement(&ctx.db, &job.id, path, fallback.as_str())?);
        crate::log::warn(
            "file_chunked_without_syntax",
            &[("job", &job.id), ("path", path), ("code", fallback.as_str())],
        );
    }
    ctx.db.batch(statements).await?;
    ctx.lap("write");
    // Always forward: a replay must still reach the next stage if the first send was lost.
    let next = StageMessage::range(Stage::Embed, &job.id, msg.from_seq, msg.to_seq);
    producer::send(&ctx.env, &[next], ctx.cfg.deliver_twice).await?;
    ctx.lap("send");
    Ok(())
}
