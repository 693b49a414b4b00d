//! `index_runs` (run records): one per finished job, written in the same transaction
//! that finishes the job.
use serde::Deserialize;

use super::{Db, StoreResult};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
pub struct RunRow {
    pub id: String,
    pub job_id: String,
    pub namespace: String,
    pub kind: String,
    pub processed: i64,
    pub written_chunks: i64,
    pub skipped_chunks: i64,
    pub pages: i64,
    pub duration_ms: i64,
    pub rate: f64,
    pub started_at: String,
    pub completed_at: Option<String>,
}

/// `INSERT` of the run record of job `?1`, guarded by the finish token `?2`, finished at `?3`.
/// processed = files accounted for, written = chunks indexed, skipped = chunks of unchanged
/// files (not re-embedded), pages = stage messages, rate = files per second.
pub const INSERT_GUARDED: &str = "INSERT INTO index_runs \
   (id, job_id, namespace, kind, processed, written_chunks, skipped_chunks, pages, duration_ms, rate, \
    started_at, completed_at) \
   SELECT 'run_' || j.id, j.id, j.namespace, j.source, j.files_total, j.chunks_indexed, \
     COALESCE((SELECT SUM(f.chunk_count) FROM files f JOIN job_files jf \
                 ON jf.namespace = f.namespace AND jf.path = f.path \
               WHERE jf.job_id = j.id AND jf.change = 'unchanged'), 0), \
     j.messages, \
     CAST(MAX(0, (julianday(?3) - julianday(COALESCE(j.started_at, j.queued_at))) * 86400000) AS INTEGER), \
     CASE WHEN julianday(?3) > julianday(COALESCE(j.started_at, j.queued_at)) \
          THEN j.files_total / ((julianday(?3) - julianday(COALESCE(j.started_at, j.queued_at))) * 86400) \
          ELSE 0 END, \
     COALESCE(j.started_at, j.queued_at), ?3 \
   FROM repo_rag_index_job j WHERE j.id = ?1 AND j.finish_token = ?2 \
   ON CONFLICT(id) DO NOTHING";

pub async fn for_job(db: &Db, job_id: &str) -> StoreResult<Option<RunRow>> {
    db.first("SELECT * FROM index_runs WHERE job_id = ?", &args![job_id]).await
}
