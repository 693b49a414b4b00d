//! `edgerag index DIR`: upload a directory to an edgerag server and wait until it is READY.
//!
//! The walk applies the same ignore rules as the server (built-in directories, `.gitignore`,
//! `.mcpignore`, binary / oversize / non-UTF-8 files). Files whose BLAKE3 hash matches what the
//! server already indexed (`GET /v1/repos/{o}/{n}/files`) are not sent again; files the server has
//! but the directory no longer does are deleted. Uploads go in batches (JSON, a few MiB each).
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use edgerag_api::{
    DeleteFilesRequest, FilesResponse, JobAccepted, JobStatus, JobView, RepoStatusResponse, UploadFile, UploadRequest,
};

use crate::client::{Client, ClientError, Repo, ServerArgs};
use crate::progress::Progress;
use crate::walk::{walk, Entry};
use crate::{Failure, Outcome};

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag index . --repo acme/shop --token dev-token
    edgerag index ~/src/shop --no-wait
    edgerag index . --json | jq .ready";

/// Upload a directory to an edgerag server and wait until it is indexed (READY).
///
/// Only what changed is sent: files whose content hash matches the server's copy are skipped,
/// and files the server has but the directory no longer does are deleted. The directory is
/// walked with the server's ignore rules (.git, node_modules, dist, build, .gitignore,
/// .mcpignore; binary, non-UTF-8 and oversize files).
///
/// Progress goes to stderr (a bar on a terminal, plain lines otherwise); the summary goes to
/// stdout.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The directory to index.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Repository name on the server [default: local/<directory name>].
    #[arg(long, value_name = "OWNER/NAME")]
    repo: Option<Repo>,
    /// Upload batch size in bytes (at least 1024).
    #[arg(long, value_name = "N", default_value_t = 4 * 1024 * 1024, help_heading = "Upload")]
    batch_bytes: usize,
    /// Send every file, even those the server already has (it still skips unchanged ones by
    /// content hash, without re-embedding).
    #[arg(long, help_heading = "Upload")]
    upload_all: bool,
    /// Do not delete server files that are missing from the directory.
    #[arg(long, help_heading = "Upload")]
    keep_missing: bool,
    /// Return after uploading instead of waiting for READY.
    #[arg(long, help_heading = "Waiting")]
    no_wait: bool,
    /// How long to wait for READY, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 3600, help_heading = "Waiting")]
    timeout: u64,
    /// Print the summary as one JSON object on stdout instead of text.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// What `--json` prints (and what the text summary says).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    repo: String,
    server: String,
    status: String,
    ready: bool,
    file_count: u64,
    chunk_count: u64,
    uploaded: u64,
    unchanged: u64,
    deleted: u64,
    skipped_locally: BTreeMap<String, u64>,
    jobs: Vec<String>,
    failed_job: Option<FailedJob>,
    seconds: f64,
}

#[derive(Debug, Serialize)]
struct FailedJob {
    id: String,
    status: String,
    error: Option<String>,
}

/// The directory's name with characters GitHub would not accept replaced by `-`.
fn default_name(dir: &std::path::Path) -> String {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.into());
    let base = path.file_name().and_then(|n| n.to_str()).unwrap_or("repo");
    let clean: String =
        base.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '-' }).collect();
    if clean.is_empty() || clean == "." || clean == ".." {
        "repo".into()
    } else {
        clean
    }
}

/// The walk names files `<dir>/<rel>`; the server wants `<rel>`.
fn relative(dir: &str, path: &str) -> String {
    let mut root = dir.replace('\\', "/");
    while let Some(rest) = root.strip_prefix("./") {
        root = rest.to_string();
    }
    let root = root.trim_end_matches('/');
    if root.is_empty() || root == "." {
        return path.to_string();
    }
    path.strip_prefix(&format!("{root}/")).unwrap_or(path).to_string()
}

impl Args {
    pub fn run(self) -> Outcome {
        if !self.dir.is_dir() {
            return Err(Failure::Usage(format!("{} is not a directory", self.dir.display())));
        }
        let Some(dir) = self.dir.to_str().map(str::to_string) else {
            return Err(Failure::Usage(format!("{} is not valid UTF-8", self.dir.display())));
        };
        let repo = self.repo.clone().unwrap_or_else(|| Repo { owner: "local".into(), name: default_name(&self.dir) });
        let client = self.server.client();
        let summary = self.index(&client, &dir, &repo).map_err(|e| {
            let hint = if e.status() == Some(401) {
                "\n  (writes need a token: --token or $EDGERAG_TOKEN; the local dev server uses dev-token)"
            } else {
                ""
            };
            Failure::Failed(format!("{e}{hint}"))
        })?;
        let Some(summary) = summary else { return Ok(()) };
        if self.json {
            println!("{}", serde_json::to_string(&summary).unwrap_or_default());
        } else {
            print!("{}", render(&summary));
        }
        if summary.failed_job.is_some() || !summary.ready {
            return Err(Failure::Reported);
        }
        Ok(())
    }

    /// Upload, delete, wait; `None` when there was nothing to report (no wait, or nothing indexed).
    fn index(&self, client: &Client, dir: &str, repo: &Repo) -> Result<Option<Summary>, ClientError> {
        let started = Instant::now();
        let repo_path = format!("/v1/repos/{}/{}", repo.owner, repo.name);

        // 1. The directory, with the shared ignore rules.
        let mut files: Vec<(String, String)> = Vec::new();
        let mut skipped: BTreeMap<String, u64> = BTreeMap::new();
        walk(&[dir.to_string()], edgerag_core::ignore::MAX_FILE_BYTES, &mut |entry| match entry {
            Entry::File { path, text } => files.push((relative(dir, &path), text)),
            Entry::Skipped { code, .. } => *skipped.entry(code.to_string()).or_insert(0) += 1,
        });

        // 2. What the server already has.
        let manifest: HashMap<String, (String, bool)> =
            match client.get::<FilesResponse>(&format!("{repo_path}/files")) {
                Ok(list) => list.files.into_iter().map(|f| (f.path, (f.content_hash, f.current))).collect(),
                Err(ClientError::Api { status: 404, .. }) => HashMap::new(),
                Err(e) => return Err(e),
            };
        let local: HashSet<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        let mut to_upload: Vec<&(String, String)> = Vec::new();
        let mut unchanged = 0u64;
        for file in &files {
            let hash = edgerag_core::ids::content_hash(file.1.as_bytes());
            match manifest.get(&file.0) {
                Some((h, true)) if *h == hash && !self.upload_all => unchanged += 1,
                _ => to_upload.push(file),
            }
        }
        let mut to_delete: Vec<String> = if self.keep_missing {
            Vec::new()
        } else {
            manifest.keys().filter(|p| !local.contains(p.as_str())).cloned().collect()
        };
        to_delete.sort();
        eprintln!(
            "edgerag: {repo} on {}: {} files ({} to upload, {unchanged} unchanged, {} to delete, {} skipped locally)",
            client.server(),
            files.len(),
            to_upload.len(),
            to_delete.len(),
            skipped.values().sum::<u64>()
        );

        // 3. Upload in batches, then delete.
        let mut jobs: Vec<String> = Vec::new();
        let mut note_job = |id: String| {
            if jobs.last() != Some(&id) {
                jobs.push(id);
            }
        };
        let total = to_upload.len() as u64;
        let batch_limit = self.batch_bytes.max(1024);
        let mut progress = (total > 0).then(|| Progress::new("upload", total));
        let mut sent = 0u64;
        let mut start = 0;
        while start < to_upload.len() {
            let mut end = start;
            let mut bytes = 0usize;
            while end < to_upload.len() && end - start < 1000 {
                let (path, text) = to_upload[end];
                let size = text.len() + path.len() + 32;
                if end > start && bytes + size > batch_limit {
                    break;
                }
                bytes += size;
                end += 1;
            }
            let files: Vec<UploadFile> = to_upload[start..end]
                .iter()
                .map(|(path, content)| UploadFile { path: path.clone(), content: content.clone(), tags: Vec::new() })
                .collect();
            let batch = UploadRequest { files, ..Default::default() };
            let accepted: JobAccepted = client.send("POST", &format!("{repo_path}/files"), &batch)?;
            note_job(accepted.job.id);
            sent += batch.files.len() as u64;
            if let Some(p) = progress.as_mut() {
                p.update(sent, total, "files");
            }
            start = end;
        }
        if let Some(p) = progress {
            p.finish();
        }
        for group in to_delete.chunks(5000) {
            let delete = DeleteFilesRequest { paths: group.to_vec() };
            let accepted: JobAccepted = client.send("DELETE", &format!("{repo_path}/files"), &delete)?;
            note_job(accepted.job.id);
        }

        // 4. Wait for the jobs, then report.
        if self.no_wait {
            eprintln!("edgerag: uploaded; jobs {} (not waiting)", jobs.join(", "));
            return Ok(None);
        }
        let mut failed = None;
        for id in &jobs {
            let job = wait_for(client, id, Duration::from_secs(self.timeout))?;
            if job.status != JobStatus::Succeeded {
                failed = Some(job);
            }
        }
        let status: RepoStatusResponse = match client.get(&format!("{repo_path}/status")) {
            Ok(s) => s,
            Err(ClientError::Api { status: 404, .. }) if files.is_empty() => {
                eprintln!("edgerag: nothing to index in {dir}");
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        Ok(Some(Summary {
            repo: repo.to_string(),
            server: client.server().to_string(),
            status: if status.ready { "READY".into() } else { status.repo.status },
            ready: status.ready,
            file_count: status.repo.file_count,
            chunk_count: status.repo.chunk_count,
            uploaded: total,
            unchanged,
            deleted: to_delete.len() as u64,
            skipped_locally: skipped,
            jobs,
            failed_job: failed.map(|j| FailedJob {
                id: j.id,
                status: j.status.as_str().to_string(),
                error: j.last_error.map(|e| format!("{}: {}", e.code, e.message)),
            }),
            seconds: started.elapsed().as_secs_f64(),
        }))
    }
}

fn render(s: &Summary) -> String {
    let mut out = format!(
        "{}: {} — {} files, {} chunks ({} uploaded, {} unchanged, {} deleted, {} skipped) in {:.1}s\n",
        s.repo,
        s.status,
        s.file_count,
        s.chunk_count,
        s.uploaded,
        s.unchanged,
        s.deleted,
        s.skipped_locally.values().sum::<u64>(),
        s.seconds
    );
    if !s.skipped_locally.is_empty() {
        let reasons: Vec<String> = s.skipped_locally.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out += &format!("  skipped locally: {}\n", reasons.join(", "));
    }
    if let Some(job) = &s.failed_job {
        out += &format!("  job {} {}: {}\n", job.id, job.status, job.error.as_deref().unwrap_or("(no error)"));
    }
    out
}

fn wait_for(client: &Client, id: &str, timeout: Duration) -> Result<JobView, ClientError> {
    let started = Instant::now();
    let mut progress = Progress::new("index", 0);
    loop {
        let job: JobView = client.get(&format!("/v1/jobs/{id}"))?;
        let eta = job.eta_seconds.map(|s| format!(" ETA {s:.0}s")).unwrap_or_default();
        progress.update(
            job.files.done,
            job.files.total,
            &format!("files {:.0}% {}{eta}", job.progress, job.status.as_str()),
        );
        if job.status.is_terminal() {
            progress.finish();
            return Ok(job);
        }
        if started.elapsed() > timeout {
            return Err(ClientError::Transport(format!(
                "job {id} still {} after {}s",
                job.status.as_str(),
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(400));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walked_paths_become_repository_relative_and_names_are_cleaned() {
        assert_eq!(relative(".", "src/a.rs"), "src/a.rs");
        assert_eq!(relative("./repo/", "repo/src/a.rs"), "src/a.rs");
        assert_eq!(relative("/abs/repo", "/abs/repo/x"), "x");
        assert_eq!(default_name(std::path::Path::new("/tmp/my repo!")), "my-repo-");
    }

    #[test]
    fn the_summary_names_counts_skips_and_a_failed_job() {
        let s = Summary {
            repo: "acme/cli".into(),
            server: "http://h".into(),
            status: "READY".into(),
            ready: true,
            file_count: 35,
            chunk_count: 40,
            uploaded: 2,
            unchanged: 33,
            deleted: 1,
            skipped_locally: BTreeMap::from([("BINARY_FILE".to_string(), 1)]),
            jobs: vec!["j".into()],
            failed_job: Some(FailedJob { id: "j".into(), status: "FAILED".into(), error: None }),
            seconds: 1.0,
        };
        let text = render(&s);
        assert!(text.starts_with("acme/cli: READY — 35 files, 40 chunks (2 uploaded, 33 unchanged, 1 deleted, 1 skipped)"));
        assert!(text.contains("  skipped locally: BINARY_FILE 1\n  job j FAILED: (no error)"), "{text}");
    }
}
