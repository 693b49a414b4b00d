//! Chunk stage: the core's chunker over the pending files of a range; chunks staged in
//! `job_chunks`, files moved pending → chunked, then the embed message.
//!
//! The files are written in groups of about [`WRITE_GROUP_BYTES`] of chunk and graph JSON, each
//! group in one transaction (its files' chunks, code graphs, warnings and status together), so a
//! message holds at most one group's chunks, graphs and statements in memory: a message of 50
//! files of constants (`libc`'s modules) made 29 MB of chunk and graph JSON and took the
//! isolate's wasm memory past its budget when it was written at once. A file is pending until its
//! group is written: a message that fails part way is delivered again and chunks what is left.
use edgerag_core::chunk::parent_child::{chunk_document, ParentChildConfig, ParentChunk};
use edgerag_core::chunk::ChunkFallback;
use edgerag_core::graph::FileGraph;
use edgerag_core::json::json_len;
use edgerag_core::{ChunkConfig, Language};

use super::messages::{SeqRange, Stage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::api::ChunkingMode;
use crate::store::staging::{self, PendingFile, StagedChunk};
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

/// Chunk and graph JSON of the files a message keeps before writing them (one transaction). The
/// wasm memory this takes is about three times as much (the graphs, their JSON, its row batches):
/// a message within it stays within the memory budget beside the module's own 23 MB.
pub const WRITE_GROUP_BYTES: usize = 4 * 1024 * 1024;

/// A file chunked, waiting for its group to be written.
struct Chunked<'f> {
    file: &'f PendingFile,
    chunks: Vec<edgerag_core::Chunk>,
    /// Each chunk's staged JSON.
    json: Vec<String>,
    graph: Option<FileGraph>,
    /// A Markdown / text file's new parents (empty when chunked flat): `None` for code.
    parents: Option<Vec<ParentChunk>>,
    /// Cut without its syntax tree (and so without a code graph): why.
    fallback: Option<ChunkFallback>,
}

/// The chunked files kept until they are written, and the JSON they make.
#[derive(Default)]
struct WriteGroup<'f> {
    files: Vec<Chunked<'f>>,
    bytes: usize,
}

impl<'f> WriteGroup<'f> {
    fn push(&mut self, file: Chunked<'f>) {
        self.bytes +=
            file.json.iter().map(String::len).sum::<usize>() + file.graph.as_ref().map_or(0, json_len);
        self.files.push(file);
    }

    fn is_full(&self) -> bool {
        self.bytes >= WRITE_GROUP_BYTES
    }
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
    let mode = settings::chunking(&ctx.db, &job.namespace).await?;
    let mut prose: Option<ProseChunker> = None;
    let mut group = WriteGroup::default();
    for file in &files {
        group.push(chunk_file(ctx, file, &config, mode, &mut prose).await?);
        ctx.lap("chunk");
        if group.is_full() {
            write(ctx, &job, std::mem::take(&mut group)).await?;
            ctx.lap("write");
        }
    }
    write(ctx, &job, group).await?;
    ctx.lap("write");
    // Always forward: a replay must still reach the next stage if the first send was lost.
    let next = StageMessage::range(Stage::Embed, &job.id, msg.from_seq, msg.to_seq);
    producer::send(&ctx.env, &[next], ctx.cfg.deliver_twice).await?;
    ctx.lap("send");
    Ok(())
}

/// One file's chunks, their staged JSON and its graph, from one parse.
async fn chunk_file<'f>(
    ctx: &Ctx,
    file: &'f PendingFile,
    config: &ChunkConfig,
    mode: ChunkingMode,
    prose: &mut Option<ProseChunker>,
) -> Result<Chunked<'f>, StageError> {
    let text = file.content.as_deref().unwrap_or("");
    let (mut chunks, graph) = edgerag_core::graph::chunk_with_graph(&file.path, text, config);
    let fallback = chunks.first().and_then(|c| c.metadata.fallback);
    let language = Language::detect(&file.path);
    let mut metadata: Vec<Option<String>> = vec![None; chunks.len()];
    let mut parents = None;
    if matches!(language, Language::Markdown | Language::Text) {
        // Parents of an earlier parent/child run of this path go; new ones (if any) replace them.
        parents = Some(Vec::new());
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
            parents = Some(pc.parents);
        }
    }
    // A chunk that cannot be serialized fails the message: staging it empty would lose it.
    let json = chunks
        .iter()
        .zip(&metadata)
        .map(|(c, meta)| staged_json(c, meta.as_deref()))
        .collect::<Result<Vec<String>, _>>()
        .map_err(|e| StageError::permanent("CHUNK_SERIALIZATION", format!("{}: {e}", file.path)))?;
    Ok(Chunked { file, chunks, json, graph, parents, fallback })
}

/// A group's chunks, graphs, parents and warnings staged and its files moved pending → chunked,
/// in one transaction.
async fn write(ctx: &Ctx, job: &jobs::JobRow, group: WriteGroup<'_>) -> Result<(), StageError> {
    if group.files.is_empty() {
        return Ok(());
    }
    let statements = statements(ctx, job, &group.files)?;
    // The group's chunks and graphs go before the transaction runs; their statements are in JS.
    drop(group);
    ctx.db.batch(statements).await?;
    Ok(())
}

fn statements(
    ctx: &Ctx,
    job: &jobs::JobRow,
    files: &[Chunked<'_>],
) -> Result<Vec<worker::D1PreparedStatement>, StageError> {
    let mut statements = Vec::new();
    let parents: Vec<(&str, &[ParentChunk])> =
        files.iter().filter_map(|f| f.parents.as_deref().map(|p| (f.file.path.as_str(), p))).collect();
    statements.extend(documents::replace_parents_statements(&ctx.db, &job.namespace, &parents)?);
    let staged: Vec<(i64, Vec<StagedChunk>)> = files
        .iter()
        .map(|f| {
            let rows = f
                .chunks
                .iter()
                .zip(&f.json)
                .map(|(c, j)| StagedChunk {
                    chunk_index: c.chunk_index,
                    chunk_json: j,
                    text_hash: &c.text_hash,
                })
                .collect();
            (f.file.seq, rows)
        })
        .collect();
    statements.extend(staging::chunked_statements(&ctx.db, &job.id, &staged)?);
    drop(staged);
    let file_graphs: Vec<(&str, Option<&FileGraph>)> =
        files.iter().map(|f| (f.file.path.as_str(), f.graph.as_ref())).collect();
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
    for (path, fallback) in files.iter().filter_map(|f| f.fallback.map(|fb| (f.file.path.as_str(), fb))) {
        // Its chunks are indexed, cut by the grammar-free heuristics; it has no code graph.
        statements.push(staging::warning_statement(&ctx.db, &job.id, path, fallback.as_str())?);
        crate::log::warn(
            "file_chunked_without_syntax",
            &[("job", &job.id), ("path", path), ("code", fallback.as_str())],
        );
    }
    Ok(statements)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(file: &PendingFile) -> Chunked<'_> {
        let text = file.content.as_deref().unwrap_or("");
        let (chunks, graph) =
            edgerag_core::graph::chunk_with_graph(&file.path, text, &ChunkConfig::default());
        let json = chunks.iter().map(|c| staged_json(c, None).expect("a chunk serializes")).collect();
        Chunked { file, chunks, json, graph, parents: None, fallback: None }
    }

    #[test]
    fn a_group_counts_its_chunk_and_graph_json_and_is_full_at_the_budget() {
        let small = PendingFile { seq: 1, path: "src/a.rs".into(), content: Some("fn a() {}\n".into()) };
        let mut group = WriteGroup::default();
        let one = chunked(&small);
        let expected =
            one.json.iter().map(String::len).sum::<usize>() + one.graph.as_ref().map_or(0, json_len);
        group.push(one);
        assert_eq!(group.bytes, expected);
        assert!(!group.is_full());
        // A file of many small functions: its graph is most of its JSON.
        let text: String =
            (0..4_000).map(|i| format!("pub fn f{i}(x: u32) -> u32 {{ g{i}(x) }}\n")).collect();
        let large = PendingFile { seq: 2, path: "src/b.rs".into(), content: Some(text) };
        let large = chunked(&large);
        let mut filled = 0;
        while !group.is_full() {
            let (chunks, json, graph) = (large.chunks.clone(), large.json.clone(), large.graph.clone());
            group.push(Chunked { file: large.file, chunks, json, graph, parents: None, fallback: None });
            filled += 1;
        }
        assert!(filled > 1, "one file of 4,000 functions is under the group budget");
        assert!(group.bytes >= WRITE_GROUP_BYTES);
    }
}
