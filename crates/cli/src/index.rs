//! `edgerag index <dir> --server URL [--repo owner/name] [--token T]`: upload a directory to an
//! edgerag server and wait until it is READY.
//!
//! The walk applies the same ignore rules as the server (built-in directories, `.gitignore`,
//! `.mcpignore`, binary / oversize / non-UTF-8 files). Files whose BLAKE3 hash matches what the
//! server already indexed (`GET /v1/repos/{o}/{n}/files`) are not sent again; files the server has
//! but the directory no longer does are deleted. Uploads go in batches (JSON, a few MiB each).
use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::args::{Arg, Args};
use crate::client::{default_server, default_token, parse_repo, progress, Client, ClientError};
use crate::walk::{walk, Entry};
use crate::USAGE_ERROR;

const HELP: &str = "usage: edgerag index <dir> [options]

Upload a directory to an edgerag server and wait until it is indexed (READY).

options:
  --server URL        edgerag server (default $EDGERAG_URL or http://127.0.0.1:8787)
  --repo OWNER/NAME   repository name on the server (default local/<directory name>)
  --token T           bearer token for writes (default $EDGERAG_TOKEN; `dev-token` locally)
  --batch-bytes N     upload batch size in bytes (default 4194304)
  --upload-all        send every file, even those the server already has (it still skips
                      unchanged ones by content hash, without re-embedding)
  --keep-missing      do not delete server files that are missing from the directory
  --no-wait           return after uploading instead of waiting for READY
  --timeout SECS      how long to wait for READY (default 3600)
  -h, --help          this help
";

struct Options {
    dir: String,
    server: String,
    owner: String,
    name: String,
    token: Option<String>,
    batch_bytes: usize,
    upload_all: bool,
    keep_missing: bool,
    wait: bool,
    timeout: Duration,
}

fn parse(argv: Vec<String>) -> Result<Options, Option<String>> {
    let mut args = Args::new(argv);
    let (mut dir, mut server, mut repo, mut token) = (None, default_server(), None, default_token());
    let (mut batch_bytes, mut upload_all, mut keep_missing, mut wait, mut timeout) =
        (4 * 1024 * 1024, false, false, true, 3600u64);
    while let Some(arg) = args.next() {
        match arg {
            Arg::Positional(p) if dir.is_none() => dir = Some(p),
            Arg::Positional(p) => return Err(Some(format!("unexpected argument {p:?} (one directory)"))),
            Arg::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => {
                    print!("{HELP}");
                    return Err(None);
                }
                "--server" => server = args.value(&name, inline)?,
                "--repo" => repo = Some(parse_repo(&args.value(&name, inline)?)?),
                "--token" => token = Some(args.value(&name, inline)?),
                "--batch-bytes" => batch_bytes = args.parsed::<usize>(&name, inline)?.max(1024),
                "--upload-all" => upload_all = true,
                "--keep-missing" => keep_missing = true,
                "--no-wait" => wait = false,
                "--timeout" => timeout = args.parsed(&name, inline)?,
                other => return Err(Some(format!("unknown option {other}"))),
            },
        }
    }
    let dir = dir.ok_or_else(|| Some("no directory given".to_string()))?;
    let (owner, name) = match repo {
        Some(r) => r,
        None => ("local".to_string(), default_name(&dir)),
    };
    Ok(Options {
        dir,
        server,
        owner,
        name,
        token,
        batch_bytes,
        upload_all,
        keep_missing,
        wait,
        timeout: Duration::from_secs(timeout),
    })
}

/// The directory's name with characters GitHub would not accept replaced by `-`.
fn default_name(dir: &str) -> String {
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

pub fn run(argv: Vec<String>) -> ExitCode {
    let opts = match parse(argv) {
        Ok(o) => o,
        Err(None) => return ExitCode::SUCCESS,
        Err(Some(msg)) => {
            eprintln!("edgerag index: {msg}\n\n{HELP}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    if !std::path::Path::new(&opts.dir).is_dir() {
        eprintln!("edgerag index: {} is not a directory", opts.dir);
        return ExitCode::from(USAGE_ERROR);
    }
    match index(&opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("\nedgerag index: {e}");
            if e.status() == Some(401) {
                eprintln!(
                    "  (writes need a token: --token or $EDGERAG_TOKEN; the local dev server uses dev-token)"
                );
            }
            ExitCode::FAILURE
        }
    }
}

fn index(opts: &Options) -> Result<bool, ClientError> {
    let started = Instant::now();
    let client = Client::new(&opts.server, opts.token.clone());
    let repo_path = format!("/v1/repos/{}/{}", opts.owner, opts.name);

    // 1. The directory, with the shared ignore rules.
    let mut files: Vec<(String, String)> = Vec::new();
    let mut skipped: BTreeMap<String, u64> = BTreeMap::new();
    walk(std::slice::from_ref(&opts.dir), edgerag_core::ignore::MAX_FILE_BYTES, &mut |entry| match entry {
        Entry::File { path, text } => files.push((relative(&opts.dir, &path), text)),
        Entry::Skipped { code, .. } => *skipped.entry(code.to_string()).or_insert(0) += 1,
    });

    // 2. What the server already has.
    let manifest: HashMap<String, (String, bool)> = match client.get(&format!("{repo_path}/files")) {
        Ok(v) => v["files"]
            .as_array()
            .map(|fs| {
                fs.iter()
                    .filter_map(|f| {
                        Some((
                            f["path"].as_str()?.to_string(),
                            (f["contentHash"].as_str()?.to_string(), f["current"].as_bool().unwrap_or(false)),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        Err(ClientError::Api { status: 404, .. }) => HashMap::new(),
        Err(e) => return Err(e),
    };
    let local: HashSet<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    let mut to_upload: Vec<&(String, String)> = Vec::new();
    let mut unchanged = 0u64;
    for file in &files {
        let hash = edgerag_core::ids::content_hash(file.1.as_bytes());
        match manifest.get(&file.0) {
            Some((h, true)) if *h == hash && !opts.upload_all => unchanged += 1,
            _ => to_upload.push(file),
        }
    }
    let mut to_delete: Vec<String> = if opts.keep_missing {
        Vec::new()
    } else {
        manifest.keys().filter(|p| !local.contains(p.as_str())).cloned().collect()
    };
    to_delete.sort();
    eprintln!(
        "edgerag: {}/{} on {}: {} files ({} to upload, {} unchanged, {} to delete, {} skipped locally)",
        opts.owner,
        opts.name,
        client.server(),
        files.len(),
        to_upload.len(),
        unchanged,
        to_delete.len(),
        skipped.values().sum::<u64>()
    );

    // 3. Upload in batches, then delete.
    let mut jobs: Vec<String> = Vec::new();
    let total = to_upload.len() as u64;
    let mut sent = 0u64;
    let mut batch: Vec<Value> = Vec::new();
    let mut batch_bytes = 0usize;
    let mut flush = |batch: &mut Vec<Value>,
                     batch_bytes: &mut usize,
                     jobs: &mut Vec<String>|
     -> Result<(), ClientError> {
        if batch.is_empty() {
            return Ok(());
        }
        let n = batch.len() as u64;
        let body = json!({ "files": std::mem::take(batch) });
        let res = client.send("POST", &format!("{repo_path}/files"), &body)?;
        if let Some(id) = res["job"]["id"].as_str() {
            if jobs.last().map(String::as_str) != Some(id) {
                jobs.push(id.to_string());
            }
        }
        *batch_bytes = 0;
        sent += n;
        progress("upload", sent, total, "files");
        Ok(())
    };
    for (path, text) in to_upload {
        if !batch.is_empty() && (batch_bytes + text.len() > opts.batch_bytes || batch.len() >= 1000) {
            flush(&mut batch, &mut batch_bytes, &mut jobs)?;
        }
        batch_bytes += text.len() + path.len() + 32;
        batch.push(json!({ "path": path, "content": text }));
    }
    flush(&mut batch, &mut batch_bytes, &mut jobs)?;
    if total > 0 {
        eprintln!();
    }
    for group in to_delete.chunks(5000) {
        let res = client.send("DELETE", &format!("{repo_path}/files"), &json!({ "paths": group }))?;
        if let Some(id) = res["job"]["id"].as_str() {
            if jobs.last().map(String::as_str) != Some(id) {
                jobs.push(id.to_string());
            }
        }
    }

    // 4. Wait for the jobs, then report.
    let mut failed = None;
    if opts.wait {
        for id in &jobs {
            let job = wait_for(&client, id, opts.timeout, started)?;
            if job["status"] != "SUCCEEDED" {
                failed = Some(job);
            }
        }
        if !jobs.is_empty() {
            eprintln!();
        }
    } else {
        eprintln!("edgerag: uploaded; jobs {} (not waiting)", jobs.join(", "));
        return Ok(true);
    }
    let status = match client.get(&format!("{repo_path}/status")) {
        Ok(s) => s,
        Err(ClientError::Api { status: 404, .. }) if files.is_empty() => {
            eprintln!("edgerag: nothing to index in {}", opts.dir);
            return Ok(true);
        }
        Err(e) => return Err(e),
    };
    let repo = &status["repo"];
    let ready = status["ready"].as_bool().unwrap_or(false);
    println!(
        "{}/{}: {} — {} files, {} chunks ({} uploaded, {} unchanged, {} deleted, {} skipped) in {:.1}s",
        opts.owner,
        opts.name,
        if ready { "READY" } else { repo["status"].as_str().unwrap_or("?") },
        repo["fileCount"],
        repo["chunkCount"],
        total,
        unchanged,
        to_delete.len(),
        skipped.values().sum::<u64>(),
        started.elapsed().as_secs_f64()
    );
    if !skipped.is_empty() {
        let reasons: Vec<String> = skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!("  skipped locally: {}", reasons.join(", "));
    }
    if let Some(job) = failed {
        println!("  job {} {}: {}", job["id"], job["status"], job["lastError"]);
        return Ok(false);
    }
    Ok(ready)
}

fn wait_for(client: &Client, id: &str, timeout: Duration, started: Instant) -> Result<Value, ClientError> {
    let deadline = Instant::now() + timeout;
    loop {
        let job = client.get(&format!("/v1/jobs/{id}"))?;
        let status = job["status"].as_str().unwrap_or("");
        let pct = job["progress"].as_f64().unwrap_or(0.0);
        let eta = job["etaSeconds"].as_f64().map(|s| format!(" ETA {s:.0}s")).unwrap_or_default();
        let files = &job["files"];
        progress(
            "index",
            files["done"].as_u64().unwrap_or(0),
            files["total"].as_u64().unwrap_or(0),
            &format!("files {pct:.0}% {status}{eta} ({:.0}s)", started.elapsed().as_secs_f64()),
        );
        if status == "SUCCEEDED" || status == "FAILED" {
            return Ok(job);
        }
        if Instant::now() > deadline {
            return Err(ClientError::Transport(format!(
                "job {id} still {status} after {}s",
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
    fn names_and_paths() {
        assert_eq!(relative(".", "src/a.rs"), "src/a.rs");
        assert_eq!(relative("./repo/", "repo/src/a.rs"), "src/a.rs");
        assert_eq!(relative("/abs/repo", "/abs/repo/x"), "x");
        assert_eq!(default_name("/tmp/my repo!"), "my-repo-");
    }
}
