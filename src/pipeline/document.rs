//! Document stage: chunk an editor-written document (`documents` row) with the parent/child
//! chunker, once its debounce delay has passed.
//!
//! A message names a version; a newer PUT has sent its own message, so a stale one does nothing.
//! A clean document, or one whose text hashes to what was last chunked, needs no embedding. Else:
//! sentences are embedded through the D1 embedding cache (unchanged sentences cost nothing), the
//! children are embedded the same way, the new vectors are upserted, then one D1 transaction
//! replaces the document's chunks (FTS follows by trigger) and parents and clears `dirty` — until
//! then the previous version stays searchable. The stale vectors go last.
use std::collections::HashSet;

use edgerag_core::chunk::parent_child::{chunk_document, ParentChildConfig, ParentChildError};
use edgerag_core::chunk::{assemble, ChunkConfig, Piece};
use edgerag_core::embed::embed_cached;
use edgerag_core::vector::VectorRecord;
use edgerag_core::{ChunkMetadata, ChunkType, Language};

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

    // Children become ordinary searchable chunks (same bookkeeping as every chunker); their
    // parent, order and span in the parent travel in the metadata.
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
    let children = assemble(path, &doc.content, language, pieces, &chunk_config);
    let texts: Vec<String> = children.iter().map(edgerag_core::text::embedding_text).collect();
    let (vectors, _) = embed_cached(&*embedder, &cache, &texts).await?;
    if vectors.len() != children.len() {
        return Err(StageError::retryable(
            "EMBED_WRONG_COUNT",
            format!("{} vectors for {} texts", vectors.len(), children.len()),
        ));
    }

    let existing: Vec<String> =
        chunks::chunk_ids_for_paths(db, ns, &[path.to_string()]).await?.into_iter().map(|p| p.id).collect();
    let keep: HashSet<&str> = children.iter().map(|c| c.id.as_str()).collect();
    let stale: Vec<String> = existing.into_iter().filter(|id| !keep.contains(id.as_str())).collect();

    let index = crate::vector::vector_index_from_env(&ctx.env)?;
    let records: Vec<VectorRecord> =
        children.iter().zip(&vectors).map(|(c, v)| VectorRecord::of_chunk(c, v.clone(), &[])).collect();
    for group in records.chunks(VECTOR_BATCH) {
        index.upsert(ns, group).await?;
    }

    let now = crate::time::now_iso();
    let rows: Vec<ChunkRow> = children
        .iter()
        .zip(&links)
        .map(|(c, link)| {
            let mut row = ChunkRow::new(c);
            let mut meta = serde_json::to_value(&c.metadata).unwrap_or_else(|_| serde_json::json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert("level".into(), "child".into());
                m.insert("parentId".into(), link.parent_id.clone().into());
                m.insert("childId".into(), link.id.clone().into());
                m.insert("order".into(), link.order.into());
                m.insert("startChar".into(), link.start_char.into());
                m.insert("endChar".into(), link.end_char.into());
            }
            row.metadata = meta.to_string();
            row
        })
        .collect();
    let key = super::index_key(&ctx.env);
    let model = crate::embed::embedder_view(&ctx.env);
    let (model_name, dims) = match &model {
        Some(e) => (Some(format!("{}|{}", e.provider, e.model)), Some(e.dims as i64)),
        None => (None, None),
    };
    let mut statements = chunks::delete_chunks_statements(db, ns, &stale)?;
    statements.extend(chunks::upsert_chunks_statements(db, ns, &now, &rows)?);
    statements.push(documents::delete_parents_statement(db, ns, path)?);
    for parent in &pc.parents {
        statements.push(documents::insert_parent_statement(db, ns, path, parent)?);
    }
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
        &crate::args![ns, &now, &model_name, dims],
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
            ("children", &children.len().to_string()),
        ],
    );
    Ok(())
}
