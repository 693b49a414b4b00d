//! Finishing a job exactly once. One D1 batch (a transaction) moves the job to SUCCEEDED or FAILED
//! with a fresh `finish_token`; every side effect in the same batch (namespace status, run record,
//! staging cleanup) is guarded by `finish_token = <that token>`, so it applies only if this call
//! made the transition — however many messages race to finish the job.
use crate::api::JobError;
use crate::args;
use crate::store::{graph, jobs, runs, staging, Db, StoreResult};

const TOKEN_GUARD: &str = "EXISTS (SELECT 1 FROM repo_rag_index_job WHERE id = ?1 AND finish_token = ?2)";

/// Statements shared by both outcomes: counters frozen, run record, staging cleanup.
fn side_effects(
    db: &Db,
    job_id: &str,
    namespace: &str,
    token: &str,
    now: &str,
) -> StoreResult<Vec<worker::D1PreparedStatement>> {
    let mut out = vec![db.stmt(runs::INSERT_GUARDED, &args![job_id, token, now])?];
    for stmt in staging::cleanup_statements(db, job_id, namespace, token)? {
        out.push(stmt);
    }
    Ok(out)
}

/// Complete the job if every staged file is done (and a GitHub job finished staging). Returns
/// true only for the call that completed it.
pub async fn try_complete(
    db: &Db,
    job_id: &str,
    namespace: &str,
    embedder: Option<&crate::api::EmbedderView>,
    graph_page_bytes: usize,
) -> StoreResult<bool> {
    let now = crate::time::now_iso();
    let token = super::new_id("fin", job_id);
    let (model, dims) = match embedder {
        Some(e) => (Some(format!("{}|{}", e.provider, e.model)), Some(e.dims as i64)),
        None => (None, None),
    };
    let mut statements = vec![
        db.stmt(jobs::refresh_counters_sql(), &args![job_id])?,
        db.stmt(
            "UPDATE repo_rag_index_job SET status = 'SUCCEEDED', stage = 'done', completed_at = ?3, \
               started_at = COALESCE(started_at, ?3), finish_token = ?2 \
             WHERE id = ?1 AND status IN ('QUEUED', 'RUNNING') AND staged = 1 \
               AND NOT EXISTS (SELECT 1 FROM job_files WHERE job_id = ?1 AND status != 'done')",
            &args![job_id, &token, &now],
        )?,
        db.stmt(
            &format!(
                "UPDATE namespaces SET status = 'READY', ready_at = ?3, updated_at = ?3, \
                   ref = COALESCE((SELECT ref FROM repo_rag_index_job WHERE id = ?1), ref), \
                   source = (SELECT source FROM repo_rag_index_job WHERE id = ?1), \
                   checksum = COALESCE((SELECT checksum FROM repo_rag_index_job WHERE id = ?1), checksum), \
                   fetched_at = CASE WHEN (SELECT source FROM repo_rag_index_job WHERE id = ?1) = 'github' \
                                     THEN ?3 ELSE fetched_at END, \
                   embed_model = COALESCE(?5, embed_model), embed_dims = COALESCE(?6, embed_dims), \
                   file_count = (SELECT COUNT(*) FROM files WHERE namespace = ?4), \
                   chunk_count = (SELECT COUNT(*) FROM chunks WHERE namespace = ?4) \
                 WHERE id = ?4 AND {TOKEN_GUARD}"
            ),
            &args![job_id, &token, &now, namespace, &model, dims],
        )?,
    ];
    statements.extend(side_effects(db, job_id, namespace, &token, &now)?);
    let changes = db.batch(statements).await?;
    let completed = changes.get(1).copied().unwrap_or(0) == 1;
    if completed {
        crate::log::info("job_succeeded", &[("job", job_id), ("namespace", namespace)]);
        // Once per job, after every file is indexed: edges across files (also those that pointed
        // into changed or deleted files) are resolved again from the stored per-file graphs —
        // unless the job changed no file (a no-change re-index), which leaves the graph as it was.
        let job = jobs::get(db, job_id).await?;
        if job.as_ref().is_none_or(changed_files) {
            let started = crate::time::now_ms();
            let memory_before = crate::ledger::memory_bytes();
            match graph::resolve_namespace(db, namespace, graph_page_bytes).await {
                Ok(r) => crate::log::info(
                    "graph_resolved",
                    &[
                        ("job", job_id),
                        ("namespace", namespace),
                        ("files", &r.files.to_string()),
                        ("edges", &r.edges.to_string()),
                        ("rewrittenFiles", &r.rewritten_files.to_string()),
                        ("rewrittenEdges", &r.rewritten_edges.to_string()),
                        ("ranksWritten", &r.ranks_written.to_string()),
                        ("pages", &r.pages.to_string()),
                        // The wasm memory before and after: what the resolution grew it by.
                        ("memoryBefore", &format!("{memory_before:.0}")),
                        ("memoryAfter", &format!("{:.0}", crate::ledger::memory_bytes())),
                        ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
                    ],
                ),
                Err(e) => crate::log::warn(
                    "graph_resolution_failed",
                    &[("job", job_id), ("namespace", namespace), ("error", &e.0)],
                ),
            }
        }
    }
    Ok(completed)
}

/// Whether a finished job added, changed or deleted any file (its counters are final).
fn changed_files(job: &jobs::JobRow) -> bool {
    job.files_added + job.files_changed + job.files_deleted > 0
}

/// Fail the job (if still active) with `error` kept as `last_error`. Returns true only for the
/// call that failed it. Files already indexed by the job stay indexed (each file is written in
/// one transaction, so none is half-written); the namespace is marked FAILED.
pub async fn fail(db: &Db, job_id: &str, namespace: &str, error: &JobError) -> StoreResult<bool> {
    let now = crate::time::now_iso();
    let token = super::new_id("fin", job_id);
    let json = serde_json::to_string(error).unwrap_or_default();
    let mut statements = vec![
        db.stmt(jobs::refresh_counters_sql(), &args![job_id])?,
        db.stmt(
            "UPDATE repo_rag_index_job SET status = 'FAILED', completed_at = ?3, last_error = ?4, \
               attempt = MAX(attempt, ?5), finish_token = ?2 \
             WHERE id = ?1 AND status IN ('QUEUED', 'RUNNING')",
            &args![job_id, &token, &now, &json, error.attempt],
        )?,
        db.stmt(
            &format!(
                "UPDATE namespaces SET status = 'FAILED', updated_at = ?3, \
                   file_count = (SELECT COUNT(*) FROM files WHERE namespace = ?4), \
                   chunk_count = (SELECT COUNT(*) FROM chunks WHERE namespace = ?4) \
                 WHERE id = ?4 AND {TOKEN_GUARD}"
            ),
            &args![job_id, &token, &now, namespace],
        )?,
    ];
    statements.extend(side_effects(db, job_id, namespace, &token, &now)?);
    let changes = db.batch(statements).await?;
    let failed = changes.get(1).copied().unwrap_or(0) == 1;
    if failed {
        crate::log::warn(
            "job_failed",
            &[("job", job_id), ("namespace", namespace), ("code", &error.code), ("message", &error.message)],
        );
    }
    Ok(failed)
}
