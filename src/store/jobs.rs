//! `repo_rag_index_job`: one row per indexing job, `QUEUED → RUNNING → SUCCEEDED | FAILED`.
use serde::Deserialize;

use super::{Db, StoreResult};
use crate::api::{ChunkCounters, FileCounters, FileWarning, JobError, JobStatus, JobView, SkippedFile};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
pub struct JobRow {
    pub id: String,
    pub namespace: String,
    pub owner: String,
    pub name: String,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub source: String,
    pub status: String,
    pub stage: Option<String>,
    pub attempt: i64,
    pub max_attempts: i64,
    pub queued_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub files_total: i64,
    pub files_done: i64,
    pub files_added: i64,
    pub files_changed: i64,
    pub files_unchanged: i64,
    pub files_deleted: i64,
    pub files_skipped: i64,
    pub skipped: String,
    /// JSON `[{path, code}]`: the first files indexed with a warning (migration 0111).
    #[serde(default = "no_warnings")]
    pub warnings: String,
    pub chunks_total: i64,
    pub chunks_embedded: i64,
    pub chunks_indexed: i64,
    pub last_error: Option<String>,
    pub staged: i64,
    pub checksum: Option<String>,
    pub index_key: Option<String>,
    pub messages: i64,
    pub heartbeat_at: Option<String>,
}

fn no_warnings() -> String {
    "[]".into()
}

impl JobRow {
    pub fn status(&self) -> JobStatus {
        JobStatus::parse(&self.status).unwrap_or(JobStatus::Failed)
    }

    pub fn is_active(&self) -> bool {
        !self.status().is_terminal()
    }

    /// Last sign of life: a stage message starting, else the start or queueing time.
    pub fn last_activity(&self) -> &str {
        self.heartbeat_at.as_deref().or(self.started_at.as_deref()).unwrap_or(&self.queued_at)
    }
}

const ACTIVE: &str = "status IN ('QUEUED', 'RUNNING')";

pub async fn get(db: &Db, id: &str) -> StoreResult<Option<JobRow>> {
    db.first("SELECT * FROM repo_rag_index_job WHERE id = ?", &args![id]).await
}

pub async fn active(db: &Db, namespace: &str) -> StoreResult<Option<JobRow>> {
    let sql = format!("SELECT * FROM repo_rag_index_job WHERE namespace = ? AND {ACTIVE}");
    db.first(&sql, &args![namespace]).await
}

pub async fn recent(db: &Db, namespace: &str, limit: u32) -> StoreResult<Vec<JobRow>> {
    db.all(
        "SELECT * FROM repo_rag_index_job WHERE namespace = ? ORDER BY queued_at DESC, rowid DESC LIMIT ?",
        &args![namespace, limit],
    )
    .await
}

pub struct NewJob<'a> {
    pub id: &'a str,
    pub namespace: &'a str,
    pub owner: &'a str,
    pub name: &'a str,
    pub git_ref: Option<&'a str>,
    pub source: &'a str,
    pub max_attempts: u32,
    pub staged: bool,
    pub index_key: &'a str,
    pub now: &'a str,
}

/// The namespace's active job, or a new QUEUED one. `(job, reused)`. Two racing requests end up
/// with the same job: the partial unique index lets only one active row exist per namespace.
pub async fn create_or_join(db: &Db, job: &NewJob<'_>) -> StoreResult<(JobRow, bool)> {
    for _ in 0..3 {
        if let Some(existing) = active(db, job.namespace).await? {
            return Ok((existing, true));
        }
        let inserted = db
            .run(
                "INSERT OR IGNORE INTO repo_rag_index_job \
                 (id, namespace, owner, name, ref, source, status, stage, attempt, max_attempts, queued_at, \
                  staged, index_key) \
                 VALUES (?, ?, ?, ?, ?, ?, 'QUEUED', NULL, 0, ?, ?, ?, ?)",
                &args![
                    job.id,
                    job.namespace,
                    job.owner,
                    job.name,
                    job.git_ref,
                    job.source,
                    job.max_attempts,
                    job.now,
                    job.staged,
                    job.index_key
                ],
            )
            .await?;
        if inserted == 1 {
            if let Some(row) = get(db, job.id).await? {
                return Ok((row, false));
            }
        }
    }
    Err(super::StoreError("could not create or join a job".into()))
}

/// A stage message starts: QUEUED → RUNNING, heartbeat, highest delivery attempt.
pub async fn mark_running(db: &Db, id: &str, stage: &str, now: &str, attempt: u32) -> StoreResult<()> {
    db.run(
        &format!(
            "UPDATE repo_rag_index_job SET status = 'RUNNING', stage = ?1, \
             started_at = COALESCE(started_at, ?2), heartbeat_at = ?2, messages = messages + 1, \
             attempt = MAX(attempt, ?4) WHERE id = ?3 AND {ACTIVE}"
        ),
        &args![stage, now, id, attempt],
    )
    .await?;
    Ok(())
}

/// Undo the move of a job to its end (stage `finish`) when its first message could not be sent,
/// so the next index message that finds its files done starts the end again.
pub async fn leave_end(db: &Db, id: &str) -> StoreResult<()> {
    db.run(
        "UPDATE repo_rag_index_job SET stage = 'index' WHERE id = ? AND stage = 'finish' \
           AND status IN ('QUEUED', 'RUNNING')",
        &args![id],
    )
    .await?;
    Ok(())
}

/// A stage message failed and will be retried.
pub async fn record_failure(db: &Db, id: &str, attempt: u32, error: &JobError) -> StoreResult<()> {
    let json = serde_json::to_string(error).unwrap_or_default();
    db.run(
        &format!(
            "UPDATE repo_rag_index_job SET attempt = MAX(attempt, ?), last_error = ? WHERE id = ? AND {ACTIVE}"
        ),
        &args![attempt, &json, id],
    )
    .await?;
    Ok(())
}

/// Recompute the stored counters from the job's staging rows.
pub fn refresh_counters_sql() -> &'static str {
    "UPDATE repo_rag_index_job SET \
       (files_total, files_done, files_added, files_changed, files_unchanged, files_deleted, files_skipped, \
        chunks_total, chunks_embedded, chunks_indexed) = \
       (SELECT COUNT(*), \
          COALESCE(SUM(status = 'done'), 0), \
          COALESCE(SUM(change = 'added'), 0), COALESCE(SUM(change = 'changed'), 0), \
          COALESCE(SUM(change = 'unchanged'), 0), COALESCE(SUM(change = 'deleted'), 0), \
          COALESCE(SUM(change = 'skipped'), 0), \
          COALESCE(SUM(chunk_count), 0), \
          COALESCE(SUM(CASE WHEN status IN ('embedded', 'done') THEN chunk_count ELSE 0 END), 0), \
          COALESCE(SUM(CASE WHEN status = 'done' THEN chunk_count ELSE 0 END), 0) \
        FROM job_files WHERE job_id = ?1), \
       skipped = (SELECT COALESCE(json_group_array(json_object('path', path, 'reason', reason)), '[]') \
        FROM (SELECT path, reason FROM job_files WHERE job_id = ?1 AND reason IS NOT NULL ORDER BY seq LIMIT 100)), \
       warnings = (SELECT COALESCE(json_group_array(json_object('path', path, 'code', warning)), '[]') \
        FROM (SELECT path, warning FROM job_files WHERE job_id = ?1 AND warning IS NOT NULL ORDER BY seq LIMIT 100)) \
     WHERE id = ?1"
}

pub async fn refresh_counters(db: &Db, id: &str) -> StoreResult<()> {
    db.run(refresh_counters_sql(), &args![id]).await?;
    Ok(())
}

/// Live per-status / per-change / per-reason counts of a job's staging rows.
#[derive(Debug, Clone, Deserialize)]
pub struct StageCount {
    pub status: String,
    pub change: String,
    pub reason: Option<String>,
    pub n: i64,
    pub chunks: i64,
}

pub async fn stage_counts(db: &Db, id: &str) -> StoreResult<Vec<StageCount>> {
    db.all(
        "SELECT status, change, reason, COUNT(*) AS n, COALESCE(SUM(chunk_count), 0) AS chunks \
         FROM job_files WHERE job_id = ? GROUP BY status, change, reason",
        &args![id],
    )
    .await
}

/// The API view of a job. Active jobs are computed live from their staging rows; finished jobs
/// from the counters frozen when they finished.
pub fn view(row: &JobRow, live: Option<&[StageCount]>, now_ms: f64) -> JobView {
    let status = row.status();
    let mut files = FileCounters {
        total: row.files_total.max(0) as u64,
        done: row.files_done.max(0) as u64,
        added: row.files_added.max(0) as u64,
        changed: row.files_changed.max(0) as u64,
        unchanged: row.files_unchanged.max(0) as u64,
        deleted: row.files_deleted.max(0) as u64,
        skipped: row.files_skipped.max(0) as u64,
    };
    let mut chunks = ChunkCounters {
        total: row.chunks_total.max(0) as u64,
        embedded: row.chunks_embedded.max(0) as u64,
        indexed: row.chunks_indexed.max(0) as u64,
    };
    let mut by_reason = std::collections::BTreeMap::new();
    // Weighted progress: each file to process moves pending → chunked → embedded → done.
    let mut weight = 0.0;
    if let Some(counts) = live {
        files = FileCounters::default();
        chunks = ChunkCounters::default();
        for c in counts {
            let n = c.n.max(0) as u64;
            let k = c.chunks.max(0) as u64;
            files.total += n;
            match c.change.as_str() {
                "added" => files.added += n,
                "changed" => files.changed += n,
                "unchanged" => files.unchanged += n,
                "deleted" => files.deleted += n,
                _ => files.skipped += n,
            }
            chunks.total += k;
            match c.status.as_str() {
                "done" => {
                    files.done += n;
                    chunks.embedded += k;
                    chunks.indexed += k;
                    weight += n as f64;
                }
                "embedded" => {
                    chunks.embedded += k;
                    weight += n as f64 * 2.0 / 3.0;
                }
                "chunked" => weight += n as f64 / 3.0,
                _ => {}
            }
        }
    } else {
        weight = files.done as f64;
    }
    if let Some(counts) = live {
        for c in counts.iter().filter(|c| c.reason.is_some()) {
            *by_reason.entry(c.reason.clone().unwrap_or_default()).or_insert(0) += c.n.max(0) as u64;
        }
    } else if let Ok(list) = serde_json::from_str::<Vec<SkippedFile>>(&row.skipped) {
        // Frozen jobs keep only the first 100 skips; the exact total is `files.skipped`.
        for s in list {
            *by_reason.entry(s.reason).or_insert(0) += 1;
        }
    }
    let progress = match status {
        JobStatus::Succeeded => 100.0,
        _ if row.staged == 0 || files.total == 0 => 0.0,
        _ => (weight / files.total as f64 * 100.0).clamp(0.0, 100.0),
    };
    let eta_seconds = match (status, row.started_at.as_deref().and_then(crate::time::ms_from_iso)) {
        (JobStatus::Running, Some(started)) if progress > 0.0 && progress < 100.0 => {
            let elapsed = ((now_ms - started) / 1000.0).max(0.0);
            Some((elapsed * (100.0 - progress) / progress * 10.0).round() / 10.0)
        }
        _ => None,
    };
    let skipped: Vec<SkippedFile> = serde_json::from_str(&row.skipped).unwrap_or_default();
    let warnings: Vec<FileWarning> = serde_json::from_str(&row.warnings).unwrap_or_default();
    JobView {
        id: row.id.clone(),
        namespace: row.namespace.clone(),
        owner: row.owner.clone(),
        name: row.name.clone(),
        git_ref: row.git_ref.clone(),
        source: row.source.clone(),
        status,
        stage: row.stage.clone(),
        attempt: row.attempt.max(0) as u32,
        max_attempts: row.max_attempts.max(0) as u32,
        queued_at: row.queued_at.clone(),
        started_at: row.started_at.clone(),
        completed_at: row.completed_at.clone(),
        progress: (progress * 10.0).round() / 10.0,
        eta_seconds,
        files,
        chunks,
        skipped_by_reason: by_reason,
        skipped,
        warnings,
        last_error: row.last_error.as_deref().and_then(|e| serde_json::from_str::<JobError>(e).ok()),
    }
}

/// Load a job and render it (live counts when active).
pub async fn load_view(db: &Db, row: &JobRow) -> StoreResult<JobView> {
    let live = if row.is_active() { Some(stage_counts(db, &row.id).await?) } else { None };
    Ok(view(row, live.as_deref(), crate::time::now_ms()))
}
