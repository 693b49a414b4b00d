//! `/v1/repos/{owner}/{name}/documents/{path...}`: editor-written documents. A PUT stores the text
//! (dirty) and answers at once (the route's scope comes from its shape: GET reads, PUT and DELETE
//! write the repository); chunking happens after a debounce ([`crate::pipeline::document`]).
use worker::{Env, Request, Response};

use crate::api::{
    DeletedDocument, DeletedDocumentCounts, DocumentAccepted, DocumentParentView, DocumentView,
    PutDocumentRequest,
};

use crate::config::Config;
use crate::error::ApiError;
use crate::http::{check_repo_part, content_type, parse_json, read_body, reply, ApiResult};
use crate::ingest::paths;
use crate::pipeline::messages::StageMessage;
use crate::pipeline::Ctx;
use crate::store::namespaces::namespace_id;
use crate::store::{chunks, documents};

/// Debounce before a document is chunked when `DOCUMENT_DEBOUNCE_MS` is unset.
pub const DEFAULT_DEBOUNCE_MS: u64 = 3000;

struct Target {
    namespace: String,
    path: String,
}

fn target(owner: &str, name: &str, rest: &[&str]) -> ApiResult<Target> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    let raw = rest.join("/");
    if raw.trim_matches('/').is_empty() {
        return Err(ApiError::bad_request("EMPTY_PATH", "the document path is empty"));
    }
    let path = paths::normalize(&raw)
        .map_err(|code| ApiError::bad_request(code, format!("document path {raw:?} is not acceptable")))?;
    Ok(Target { namespace: namespace_id(owner, name), path })
}

fn debounce_seconds(env: &Env) -> u32 {
    let ms = crate::bindings::var(env, "DOCUMENT_DEBOUNCE_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_DEBOUNCE_MS);
    // Queues delay in whole seconds (at most 12 h).
    ms.div_ceil(1000).min(43_200) as u32
}

/// `PUT …/documents/{path}` with `{"text": …}` or a `text/plain` body → 202 with the version.
pub async fn put(
    req: &mut Request,
    env: &Env,
    cfg: &Config,
    owner: &str,
    name: &str,
    rest: &[&str],
) -> ApiResult<Response> {
    let t = target(owner, name, rest)?;
    let ct = content_type(req);
    let body = read_body(req, cfg.max_file_bytes).await?;
    let text = match ct.as_str() {
        "text/plain" | "text/markdown" => String::from_utf8(body)
            .map_err(|_| ApiError::bad_request("INVALID_UTF8", "the document is not UTF-8 text"))?,
        _ => parse_json::<PutDocumentRequest>(req, &body, false)?.text,
    };
    let ctx = Ctx::for_namespace(env, &t.namespace, true).await?;
    let now = crate::time::now_iso();
    ctx.db
        .run(
            "INSERT INTO namespaces (id, owner, name, source, status, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'document', 'EMPTY', ?4, ?4) ON CONFLICT(id) DO NOTHING",
            &crate::store::args![&t.namespace, owner, name, &now],
        )
        .await?;
    let hash = edgerag_core::ids::text_hash(&text);
    let version = documents::put(&ctx.db, &t.namespace, &t.path, &text, &hash, &now).await?;
    let message = StageMessage::document(&t.namespace, &t.path, version);
    let queue = env
        .queue(crate::bindings::CHUNK_QUEUE)
        .map_err(|e| ApiError::new(503, "QUEUE_UNAVAILABLE", e.to_string()))?;
    crate::ledger::queue_send(&[serde_json::to_string(&message).map_or(0, |j| j.len())]);
    queue
        .send(worker::MessageBuilder::new(message).delay_seconds(debounce_seconds(env)).build())
        .await
        .map_err(|e| ApiError::new(503, "QUEUE_UNAVAILABLE", e.to_string()))?;
    reply(
        202,
        &DocumentAccepted { namespace: t.namespace, path: t.path, version, content_hash: hash, dirty: true },
    )
}

fn not_found(t: &Target) -> ApiError {
    ApiError::not_found("DOCUMENT_NOT_FOUND", format!("no document {:?} in {}", t.path, t.namespace))
}

/// `GET …/documents/{path}`.
pub async fn get(env: &Env, owner: &str, name: &str, rest: &[&str]) -> ApiResult<Response> {
    let t = target(owner, name, rest)?;
    let db = Ctx::for_namespace(env, &t.namespace, false).await?.db;
    let Some(doc) = documents::get(&db, &t.namespace, &t.path).await? else { return Err(not_found(&t)) };
    let parents = documents::parents(&db, &t.namespace, &t.path).await?;
    let children = db
        .first::<crate::store::Count>(
            "SELECT COUNT(*) AS n FROM chunks WHERE namespace = ? AND path = ?",
            &crate::store::args![&t.namespace, &t.path],
        )
        .await?
        .map_or(0, |c| c.n);
    let parent_list: Vec<DocumentParentView> = parents
        .into_iter()
        .map(|p| DocumentParentView {
            heading_path: serde_json::from_str(&p.heading_path).unwrap_or_default(),
            id: p.id,
            order: p.ord,
            start_line: p.start_line,
            end_line: p.end_line,
            chars: p.chars,
            child_count: p.child_count,
        })
        .collect();
    reply(
        200,
        &DocumentView {
            namespace: t.namespace,
            path: t.path,
            version: doc.version,
            dirty: doc.dirty != 0,
            content_hash: doc.content_hash,
            last_chunked_at: doc.last_chunked_at,
            last_error: doc.last_error.and_then(|e| serde_json::from_str(&e).ok()),
            chunk_runs: doc.chunk_runs,
            parents: parent_list.len(),
            children,
            parent_list,
            updated_at: doc.updated_at,
        },
    )
}

/// `DELETE …/documents/{path}`: the document, its parents, chunks (FTS by trigger) and vectors.
pub async fn delete(env: &Env, owner: &str, name: &str, rest: &[&str]) -> ApiResult<Response> {
    let t = target(owner, name, rest)?;
    let db = Ctx::for_namespace(env, &t.namespace, false).await?.db;
    if documents::get(&db, &t.namespace, &t.path).await?.is_none() {
        return Err(not_found(&t));
    }
    let ids: Vec<String> = chunks::chunk_ids_for_paths(&db, &t.namespace, std::slice::from_ref(&t.path))
        .await?
        .into_iter()
        .map(|p| p.id)
        .collect();
    let index = crate::vector::vector_index_from_env(env)
        .map_err(|e| ApiError::new(503, "VECTOR_INDEX_UNAVAILABLE", e.to_string()))?;
    for group in ids.chunks(500) {
        index
            .delete_by_ids(&t.namespace, group)
            .await
            .map_err(|e| ApiError::new(503, "VECTOR_INDEX_UNAVAILABLE", e.to_string()))?;
    }
    let mut statements = chunks::delete_chunks_statements(&db, &t.namespace, &ids)?;
    statements.push(chunks::delete_file_statement(&db, &t.namespace, &t.path)?);
    statements.extend(documents::delete_statements(&db, &t.namespace, &t.path)?);
    statements.push(db.stmt(
        "UPDATE namespaces SET file_count = (SELECT COUNT(*) FROM files WHERE namespace = ?1), \
           chunk_count = (SELECT COUNT(*) FROM chunks WHERE namespace = ?1) WHERE id = ?1",
        &crate::store::args![&t.namespace],
    )?);
    db.batch(statements).await?;
    reply(
        200,
        &DeletedDocument {
            namespace: t.namespace,
            path: t.path,
            deleted: DeletedDocumentCounts { chunks: ids.len() as u64 },
        },
    )
}
