//! `edgerag status [OWNER/NAME]`: one repository's indexing status, or every repository.
use edgerag_api::{RepoStatusResponse, ReposResponse};

use crate::client::{parse, Repo, ServerArgs};
use crate::{Failure, Outcome};

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag status
    edgerag status acme/shop --json | jq .ready";

/// Show the indexing status of one repository, or list the repositories.
///
/// Without a repository: every repository on the server with its status, file and chunk counts.
/// With one: its status (READY flag, progress, ETA, attempts, last error, recent jobs).
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The repository; omit it to list every repository.
    #[arg(value_name = "OWNER/NAME")]
    repo: Option<Repo>,
    /// Print the server's JSON answer unchanged (schemas/repo-status.schema.json or
    /// schemas/repos-response.schema.json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

impl Args {
    pub fn run(self) -> Outcome {
        let client = self.server.client();
        let path = match &self.repo {
            Some(r) => format!("/v1/repos/{}/{}/status", r.owner, r.name),
            None => "/v1/repos".to_string(),
        };
        let failed = |e| Failure::Failed(format!("{e}"));
        let body = client.get_text(&path).map_err(failed)?;
        if self.json {
            println!("{}", body.trim_end());
            return Ok(());
        }
        match self.repo {
            Some(_) => print!("{}", render_status(&parse(&body).map_err(failed)?)),
            None => print!("{}", render_list(&parse(&body).map_err(failed)?)),
        }
        Ok(())
    }
}

fn render_list(list: &ReposResponse) -> String {
    if list.repos.is_empty() {
        return "no repositories\n".into();
    }
    let mut out = format!("{:<40} {:<9} {:>7} {:>8}  ready at\n", "repository", "status", "files", "chunks");
    for r in &list.repos {
        out += &format!(
            "{:<40} {:<9} {:>7} {:>8}  {}\n",
            format!("{}/{}", r.owner, r.name),
            r.status,
            r.file_count,
            r.chunk_count,
            r.ready_at.as_deref().unwrap_or("-")
        );
    }
    out
}

fn render_status(s: &RepoStatusResponse) -> String {
    let repo = &s.repo;
    let mut out = format!(
        "{}/{}  {}{}\n",
        repo.owner,
        repo.name,
        repo.status,
        if s.ready { " (READY)" } else { "" }
    );
    out += &format!(
        "  files {}  chunks {}  ref {}\n",
        repo.file_count,
        repo.chunk_count,
        repo.git_ref.as_deref().unwrap_or("-")
    );
    if let Some(e) = &s.embedder {
        out += &format!(
            "  embedder {} {} ({} dims), vector index {}\n",
            e.provider, e.model, e.dims, s.vector_index
        );
    }
    if let Some(job) = &s.job {
        let eta = s.eta_seconds.map(|e| format!(", ETA {e:.0}s")).unwrap_or_default();
        out += &format!(
            "  latest job {} {} — {}%{eta}, attempts {}\n",
            job.id,
            job.status.as_str(),
            s.progress,
            s.attempts
        );
        let f = &job.files;
        out += &format!(
            "    files: {} added, {} changed, {} unchanged, {} deleted, {} skipped\n",
            f.added, f.changed, f.unchanged, f.deleted, f.skipped
        );
    }
    if let Some(e) = &s.last_error {
        out += &format!("  last error: {} {}\n", e.code, e.message);
    }
    if !s.recent_jobs.is_empty() {
        out += "  recent jobs:\n";
        for j in &s.recent_jobs {
            out += &format!(
                "    {} {:<9} {:<7} queued {} files {}\n",
                j.id,
                j.status.as_str(),
                j.source,
                j.queued_at,
                j.files.total
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::{json, Value};

    /// A job as the server answers it.
    fn job(id: &str, source: &str, queued_at: &str, files: Value) -> Value {
        json!({"id": id, "namespace": "repo:acme/shop", "owner": "acme", "name": "shop", "ref": null,
               "source": source, "status": "SUCCEEDED", "stage": "done", "attempt": 1, "maxAttempts": 5,
               "queuedAt": queued_at, "startedAt": null, "completedAt": null, "progress": 100, "etaSeconds": null,
               "files": files, "chunks": {"total": 90, "embedded": 90, "indexed": 90},
               "skippedByReason": {}, "skipped": [], "lastError": null})
    }

    #[test]
    fn a_status_answer_renders_ready_counts_job_and_last_error() {
        let files = json!({"total": 35, "done": 35, "added": 35, "changed": 0, "unchanged": 0, "deleted": 0, "skipped": 1});
        let s: RepoStatusResponse = serde_json::from_value(json!({
            "repo": {"owner": "acme", "name": "shop", "status": "READY", "fileCount": 35, "chunkCount": 90,
                     "ref": null, "readyAt": "2026-01-01T00:00:00Z", "namespace": "repo:acme/shop", "ready": true,
                     "updatedAt": "x", "source": "upload"},
            "status": "SUCCEEDED", "ready": true, "progress": 100, "attempts": 1, "etaSeconds": null,
            "vectorIndex": "local", "embedder": {"provider": "openai", "model": "m", "dims": 384},
            "job": job("j1", "upload", "t0", files.clone()),
            "lastError": {"code": "EMBED_FAILED", "message": "boom", "at": "t", "attempt": 1, "stage": "embed"},
            "recentJobs": [job("j1", "upload", "t0", files)]
        }))
        .unwrap();
        let text = render_status(&s);
        assert!(text.starts_with("acme/shop  READY (READY)\n  files 35  chunks 90  ref -\n"), "{text}");
        assert!(text.contains("embedder openai m (384 dims), vector index local"), "{text}");
        assert!(text.contains("latest job j1 SUCCEEDED — 100%, attempts 1"), "{text}");
        assert!(text.contains("35 added, 0 changed, 0 unchanged, 0 deleted, 1 skipped"), "{text}");
        assert!(text.contains("last error: EMBED_FAILED boom"), "{text}");
        assert!(text.contains("    j1 SUCCEEDED upload  queued t0 files 35"), "{text}");
    }

    #[test]
    fn the_repository_list_is_a_table_or_says_there_is_none() {
        let list: ReposResponse = serde_json::from_value(json!({"repos": [
            {"namespace": "repo:acme/cli", "owner": "acme", "name": "cli", "status": "READY", "ready": true,
             "readyAt": null, "ref": null, "source": "upload", "fileCount": 35, "chunkCount": 40, "updatedAt": "x"}
        ]}))
        .unwrap();
        let text = render_list(&list);
        assert!(text.lines().nth(1).unwrap().starts_with("acme/cli"), "{text}");
        assert!(text.contains(" READY ") && text.contains("35") && text.contains("  -"), "{text}");
        assert_eq!(render_list(&ReposResponse { repos: vec![] }), "no repositories\n");
    }

    /// A newer server may add fields anywhere in its answer: the CLI still renders it.
    #[test]
    fn an_answer_with_fields_added_by_a_newer_server_still_renders() {
        let list: ReposResponse = serde_json::from_value(json!({"repos": [
            {"namespace": "repo:acme/cli", "owner": "acme", "name": "cli", "status": "READY", "ready": true,
             "readyAt": null, "ref": null, "source": "upload", "fileCount": 35, "chunkCount": 40, "updatedAt": "x",
             "stars": 3}
        ], "nextPage": null}))
        .unwrap();
        assert!(render_list(&list).lines().nth(1).unwrap().starts_with("acme/cli"));
    }
}
