//! Document stage: chunk an editor-written document (`documents` row) with the parent/child
//! chunker, once its debounce delay has passed.
//!
//! A message names a version; a newer PUT has sent its own message, so a stale one does nothing.
//! A clean document, or one whose text hashes to what was last chunked, needs no embedding. Else:
//! sentences are embedded through the D1 embedding cache (unchanged sentences cost nothing). A
//! child's id is its parent/child id, which depends on its parent's content only, so only the
//! parents that changed (compared with `document_parents` by id, i.e. content hash) have new
//! children: only those are embedded and upserted to the vector index; the children of unchanged
//! parents keep their rows' ids and vectors (their lines and order are rewritten, which costs no
//! embedding). Then one D1 transaction deletes the children of changed or removed parents,
//! upserts the rest (FTS follows by trigger), replaces the parents and clears `dirty` — until
//! then the previous version stays searchable. The stale vectors go last.
use std::collections::HashSet;

use edgerag_core::chunk::parent_child::{
    chunk_document, ParentChildConfig, ParentChildDocument, ParentChildError,
};
use edgerag_core::chunk::{assemble, ChunkConfig, Piece};
use edgerag_core::embed::embed_cached;
use edgerag_core::vector::VectorRecord;
use edgerag_core::{Chunk, ChunkMetadata, ChunkType, Language};

use super::messages::DocumentRef;
use super::{Ctx, StageError};
use crate::store::chunks::{self, ChunkRow, FileRecord};
use crate::store::documents;

/// Vectors per upsert / delete call.
const VECTOR_BATCH: usize = 500;

impl From<ParentChildError> for StageError {
    fn from(e: ParentChildError) -> Self {
        match e {
            ParentChildError::Embed(e) => e.into(),
            other => StageError::permanent(other.code(), other.to_string()),
        }
    }
}

/// The children of a parent/child document as ordinary searchable chunks (same bookkeeping as
/// every chunker), each with its `chunks.metadata` JSON: the chunk's metadata plus `level`,
/// `parentId`, `childId`, `order`, `startChar`, `endChar` (the child's span in its parent), which
/// two-stage retrieval reads. A child's chunk id is its parent/child id (parent content + child
/// content + order), not its lines: an edit elsewhere in the document moves lines but keeps the
/// ids — and with them the rows' vectors — of every child of an unchanged parent.
pub fn children_as_chunks(
    path: &str,
    content: &str,
    language: Language,
    pc: &ParentChildDocument,
) -> Vec<(Chunk, String)> {
    let chunk_type =
        if language == Language::Markdown { ChunkType::MarkdownSection } else { ChunkType::TextBlock };
    let mut pieces = Vec::with_capacity(pc.children.len());
    let mut links = Vec::with_capacity(pc.children.len());
    for child in &pc.children {
        let Some(parent) = pc.parents.iter().find(|p| p.id == child.parent_id) else { continue };
        let byte_at =
            |chars: usize| parent.text.char_indices().nth(chars).map_or(parent.text.len(), |(b, _)| b);
        let (start, end) = (byte_at(child.start_char), byte_at(child.end_char));
        if start >= end {
            continue;
        }
        pieces.push(Piece {
            start_byte: parent.start_byte + start,
            end_byte: parent.start_byte + end,
            chunk_type,
            metadata: ChunkMetadata { heading_path: parent.heading_path.clone(), ..Default::default() },
        });
        links.push(child);
    }
    let chunk_config = ChunkConfig { language: Some(language), ..ChunkConfig::default() };
    let chunks = assemble(path, content, language, pieces, &chunk_config);
    chunks
        .into_iter()
        .zip(links)
        .map(|(mut chunk, link)| {
            chunk.id = link.id.clone();
            let mut meta = serde_json::to_value(&chunk.metadata).unwrap_or_else(|_| serde_json::json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert("level".into(), "child".into());
                m.insert("parentId".into(), link.parent_id.clone().into());
                m.insert("childId".into(), link.id.clone().into());
                m.insert("order".into(), link.order.into());
                m.insert("startChar".into(), link.start_char.into());
                m.insert("endChar".into(), link.end_char.into());
            }
            (chunk, meta.to_string())
        })
        .collect()
}

pub async fn run(ctx: &Ctx, msg: &DocumentRef) -> Result<(), StageError> {
    let db = ctx.stores.for_namespace(&msg.namespace).await?;
    let (ns, path) = (msg.namespace.as_str(), msg.path.as_str());
    let Some(doc) = documents::get(&db, ns, path).await? else { return Ok(()) };
    if doc.version != msg.version || doc.dirty == 0 {
        return Ok(());
    }
    let now = crate::time::now_iso();
    if doc.chunked_hash.as_deref() == Some(doc.content_hash.as_str()) {
        let clean =
            documents::mark_clean_statement(&db, ns, path, doc.version, &doc.content_hash, &now, false)?;
        db.batch(vec![clean]).await?;
        return Ok(());
    }
    match chunk_and_write(ctx, &db, msg, &doc).await {
        Ok(()) => Ok(()),
        Err(e) => {
            let error = serde_json::json!({ "code": e.code, "message": e.message, "at": now }).to_string();
            let _ = documents::record_error(&db, ns, path, &error).await;
            Err(e)
        }
    }
}

async fn chunk_and_write(
    ctx: &Ctx,
    db: &crate::store::Db,
    msg: &DocumentRef,
    doc: &documents::DocumentRow,
) -> Result<(), StageError> {
    let (ns, path) = (msg.namespace.as_str(), msg.path.as_str());
    let language = Language::detect(path);
    let config = ParentChildConfig::default();
    let embedder = crate::embed::embedder_from_env(&ctx.env)?;
    let cache = crate::embed::embedding_cache_from_env(&ctx.env)?;
    let (pc, _) = chunk_document(path, &doc.content, language, &config, &*embedder, &cache).await?;

    let (children, metadata): (Vec<Chunk>, Vec<String>) =
        children_as_chunks(path, &doc.content, language, &pc).into_iter().unzip();

    // Parents are compared with the stored ones by id (BLAKE3 of path + content + occurrence):
    // children of a kept parent exist already, with their vectors; only the children of new or
    // changed parents are embedded and written to the vector index.
    let stored_parents: HashSet<String> =
        documents::parents(db, ns, path).await?.into_iter().map(|p| p.id).collect();
    let existing: HashSet<String> =
        chunks::chunk_ids_for_paths(db, ns, &[path.to_string()]).await?.into_iter().map(|p| p.id).collect();
    let fresh: Vec<usize> = (0..children.len()).filter(|&i| !existing.contains(&children[i].id)).collect();
    let texts: Vec<String> =
        fresh.iter().map(|&i| edgerag_core::text::embedding_text(&children[i])).collect();
    let (vectors, _) = embed_cached(&*embedder, &cache, &texts).await?;
    if vectors.len() != fresh.len() {
        return Err(StageError::retryable(
            "EMBED_WRONG_COUNT",
            format!("{} vectors for {} texts", vectors.len(), fresh.len()),
        ));
    }

    let keep: HashSet<&str> = children.iter().map(|c| c.id.as_str()).collect();
    let stale: Vec<String> = existing.iter().filter(|id| !keep.contains(id.as_str())).cloned().collect();

    let index = crate::vector::vector_index_from_env(&ctx.env)?;
    let records: Vec<VectorRecord> = fresh
        .iter()
        .zip(&vectors)
        .map(|(&i, v)| VectorRecord::of_chunk(&children[i], v.clone(), &[]))
        .collect();
    for group in records.chunks(VECTOR_BATCH) {
        index.upsert(ns, group).await?;
    }
    let new_parents: HashSet<&str> = pc.parents.iter().map(|p| p.id.as_str()).collect();
    let parents_kept = stored_parents.iter().filter(|id| new_parents.contains(id.as_str())).count();

    let now = crate::time::now_iso();
    let rows: Vec<ChunkRow> = children
        .iter()
        .zip(metadata)
        .map(|(c, meta)| {
            let mut row = ChunkRow::new(c);
            row.metadata = meta;
            row
        })
        .collect();
    let key = super::index_key(&ctx.env);
    let model = crate::embed::embedder_view(&ctx.env);
    let (model_name, dims) = match &model {
        Some(e) => (Some(format!("{}|{}", e.provider, e.model)), Some(e.dims as i64)),
        None => (None, None),
    };
    let mut statements = crate::store::keyword::ensure_statements(db, ns)?;
    statements.extend(chunks::delete_chunks_statements(db, ns, &stale)?);
    statements.extend(chunks::upsert_chunks_statements(db, ns, &now, &rows)?);
    statements.extend(documents::replace_parents_statements(db, ns, &[(path, &pc.parents)])?);
    statements.push(chunks::upsert_file_statement(
        db,
        ns,
        "document",
        &now,
        &FileRecord {
            path,
            content_hash: &doc.content_hash,
            size: doc.content.len() as i64,
            language: language.as_str(),
            chunk_count: children.len() as i64,
            index_key: &key,
            tags: "",
        },
    )?);
    statements.push(documents::mark_clean_statement(
        db,
        ns,
        path,
        doc.version,
        &doc.content_hash,
        &now,
        true,
    )?);
    statements.push(db.stmt(
        "UPDATE namespaces SET status = CASE WHEN status = 'INDEXING' THEN status ELSE 'READY' END, \
           ready_at = CASE WHEN status = 'INDEXING' THEN ready_at ELSE ?2 END, updated_at = ?2, \
           embed_model = COALESCE(?3, embed_model), embed_dims = COALESCE(?4, embed_dims), \
           file_count = (SELECT COUNT(*) FROM files WHERE namespace = ?1), \
           chunk_count = (SELECT COUNT(*) FROM chunks WHERE namespace = ?1) \
         WHERE id = ?1",
        &crate::store::args![ns, &now, &model_name, dims],
    )?);
    db.batch(statements).await?;

    for group in stale.chunks(VECTOR_BATCH) {
        index.delete_by_ids(ns, group).await?;
    }
    crate::log::info(
        "document_chunked",
        &[
            ("namespace", ns),
            ("path", path),
            ("version", &doc.version.to_string()),
            ("parents", &pc.parents.len().to_string()),
            ("parentsKept", &parents_kept.to_string()),
            ("parentsRemoved", &(stored_parents.len() - parents_kept).to_string()),
            ("children", &children.len().to_string()),
            ("childrenEmbedded", &fresh.len().to_string()),
            ("childrenRemoved", &stale.len().to_string()),
        ],
    );
    Ok(())
}
