//! Finishing a job exactly once. One D1 batch (a transaction) moves the job to SUCCEEDED or FAILED
//! with a fresh `finish_token`; every side effect in the same batch (namespace status, run record,
//! staging cleanup) is guarded by `finish_token = <that token>`, so it applies only if this call
//! made the transition — however many messages race to finish the job. A job that changed files
//! first goes through its end ([`super::end`]: the code graph, the snapshots), which completes it.
use crate::api::JobError;
use crate::store::args;
use crate::store::{jobs, runs, staging, Db, StoreResult};

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

/// What [`try_complete`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Files are left (or someone else moved the job on).
    NotYet,
    /// The job changed no file and is complete (this call completed it).
    Completed,
    /// Every file is done and the job changed some: this call moved it to its end (stage
    /// `finish`); the caller sends the job's end on ([`super::end`]).
    Ending,
}

/// The condition of a job whose staged files are all done.
const ALL_DONE: &str = "status IN ('QUEUED', 'RUNNING') AND staged = 1 \
     AND NOT EXISTS (SELECT 1 FROM job_files WHERE job_id = ?1 AND status != 'done')";

/// A job whose files are all done: complete it at once if it changed no file (nothing to resolve
/// again), else move it to its end (once: its stage becomes `finish`). Refreshes its counters in
/// the same batch.
pub async fn try_complete(
    db: &Db,
    job_id: &str,
    namespace: &str,
    embedder: Option<&crate::api::EmbedderView>,
) -> StoreResult<Outcome> {
    let now = crate::time::now_iso();
    let mut statements = vec![
        db.stmt(jobs::refresh_counters_sql(), &args![job_id])?,
        db.stmt(
            &format!(
                "UPDATE repo_rag_index_job SET stage = 'finish', heartbeat_at = ?2 \
                 WHERE id = ?1 AND {ALL_DONE} AND files_added + files_changed + files_deleted > 0 \
                   AND COALESCE(stage, '') != 'finish'"
            ),
            &args![job_id, &now],
        )?,
    ];
    let token = super::new_id("fin", job_id);
    statements.extend(completion_statements(db, job_id, namespace, embedder, &token, &now, true)?);
    let changes = db.batch(statements).await?;
    if changes.get(2).copied().unwrap_or(0) == 1 {
        crate::log::info("job_succeeded", &[("job", job_id), ("namespace", namespace)]);
        return Ok(Outcome::Completed);
    }
    Ok(if changes.get(1).copied().unwrap_or(0) == 1 { Outcome::Ending } else { Outcome::NotYet })
}

/// Complete a job at the end of its end ([`super::end`]): every file done, the code graph and
/// snapshots written. Returns true only for the call that completed it.
pub async fn complete(
    db: &Db,
    job_id: &str,
    namespace: &str,
    embedder: Option<&crate::api::EmbedderView>,
) -> StoreResult<bool> {
    let now = crate::time::now_iso();
    let token = super::new_id("fin", job_id);
    let mut statements = vec![db.stmt(jobs::refresh_counters_sql(), &args![job_id])?];
    statements.extend(completion_statements(db, job_id, namespace, embedder, &token, &now, false)?);
    let changes = db.batch(statements).await?;
    let completed = changes.get(1).copied().unwrap_or(0) == 1;
    if completed {
        crate::log::info("job_succeeded", &[("job", job_id), ("namespace", namespace)]);
    }
    Ok(completed)
}

/// The job SUCCEEDED (its first statement: one row changed when this call completed it), the
/// namespace READY with its counts and the side effects, guarded by `token`; `unchanged_only`
/// completes only a job that changed no file.
fn completion_statements(
    db: &Db,
    job_id: &str,
    namespace: &str,
    embedder: Option<&crate::api::EmbedderView>,
    token: &str,
    now: &str,
    unchanged_only: bool,
) -> StoreResult<Vec<worker::D1PreparedStatement>> {
    let (model, dims) = match embedder {
        Some(e) => (Some(format!("{}|{}", e.provider, e.model)), Some(e.dims as i64)),
        None => (None, None),
    };
    let unchanged = if unchanged_only { " AND files_added + files_changed + files_deleted = 0" } else { "" };
    let mut statements = vec![
        db.stmt(
            &format!(
                "UPDATE repo_rag_index_job SET status = 'SUCCEEDED', stage = 'done', completed_at = ?3, \
                   started_at = COALESCE(started_at, ?3), finish_token = ?2 \
                 WHERE id = ?1 AND {ALL_DONE}{unchanged}"
            ),
            &args![job_id, token, now],
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
            &args![job_id, token, now, namespace, &model, dims],
        )?,
    ];
    statements.extend(side_effects(db, job_id, namespace, token, now)?);
    Ok(statements)
}

/// Whether a finished job added, changed or deleted any file (its counters are final).
pub fn changed_files(job: &jobs::JobRow) -> bool {
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
