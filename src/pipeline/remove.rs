//! Removing a repository from the index: its active job cancelled, its vectors, rows, keyword
//! index and registration deleted. Shared by `DELETE /v1/repos/{owner}/{name}` and the GitHub
//! App's webhooks (a repository removed from an installation).
use crate::api::{DeletedCounts, JobError};
use crate::error::ApiError;
use crate::http::ApiResult;
use crate::store::{chunks, github, jobs, namespaces};

use super::{finish, Ctx};

/// Delete namespace `ns` (the database of `ctx`); `None` when it is not indexed.
pub async fn repository(ctx: &Ctx, ns: &str) -> ApiResult<Option<DeletedCounts>> {
    let db = &ctx.db;
    if namespaces::get(db, ns).await?.is_none() {
        return Ok(None);
    }
    if let Some(job) = jobs::active(db, ns).await? {
        let error = JobError {
            code: "CANCELLED".into(),
            message: "the repository was deleted".into(),
            stage: "request".into(),
            attempt: job.attempt.max(0) as u32,
            at: crate::time::now_iso(),
        };
        finish::fail(db, &job.id, ns, &error).await?;
    }
    let mut deleted = DeletedCounts::default();
    let index = crate::vector::vector_index_from_env(&ctx.env)
        .map_err(|e| ApiError::new(503, "VECTOR_INDEX_UNAVAILABLE", e.to_string()))?;
    let mut after = String::new();
    loop {
        let ids = chunks::chunk_ids_page(db, ns, &after, 500).await?;
        let Some(last) = ids.last().cloned() else { break };
        index
            .delete_by_ids(ns, &ids)
            .await
            .map_err(|e| ApiError::new(503, "VECTOR_INDEX_UNAVAILABLE", e.to_string()))?;
        deleted.vectors += ids.len() as u64;
        after = last;
    }
    let count = |table: &str, column: &str| format!("SELECT COUNT(*) AS n FROM {table} WHERE {column} = ?");
    let n = |row: Option<crate::store::Count>| row.map_or(0, |c| c.n.max(0) as u64);
    deleted.files = n(db.first(&count("files", "namespace"), &crate::store::args![ns]).await?);
    deleted.chunks = n(db.first(&count("chunks", "namespace"), &crate::store::args![ns]).await?);
    deleted.jobs = n(db.first(&count("repo_rag_index_job", "namespace"), &crate::store::args![ns]).await?);
    // The namespace's keyword index goes before its chunks (see `keyword::drop_sql`).
    let mut statements = crate::store::keyword::drop_statements(db, ns)?;
    statements.extend(
        [
            "DELETE FROM job_chunks WHERE job_id IN (SELECT id FROM repo_rag_index_job WHERE namespace = ?1)",
            "DELETE FROM job_files WHERE namespace = ?1",
            "DELETE FROM chunks WHERE namespace = ?1",
            crate::store::keyword::FORGET_SQL,
            "DELETE FROM documents WHERE namespace = ?1",
            "DELETE FROM document_parents WHERE namespace = ?1",
            "DELETE FROM files WHERE namespace = ?1",
            "DELETE FROM index_runs WHERE namespace = ?1",
            "DELETE FROM repo_rag_index_job WHERE namespace = ?1",
            "DELETE FROM pending_fetches WHERE namespace = ?1",
            "DELETE FROM namespaces WHERE id = ?1",
        ]
        .iter()
        .map(|sql| db.stmt(sql, &crate::store::args![ns]))
        .collect::<Result<Vec<_>, _>>()?,
    );
    db.batch(statements).await?;
    github::unregister(ctx.stores.catalog(), ns).await?;
    ctx.stores.forget(ns).await?;
    crate::log::info("repo_deleted", &[("namespace", ns)]);
    Ok(Some(deleted))
}
