//! `edgerag status [owner/name]`: one repository's indexing status, or every repository.
use std::process::ExitCode;

use serde_json::Value;

use crate::args::{Arg, Args};
use crate::client::{default_server, default_token, parse_repo, Client};
use crate::USAGE_ERROR;

const HELP: &str = "usage: edgerag status [OWNER/NAME] [options]

Without a repository: list the repositories on the server. With one: its status (READY flag,
progress, ETA, attempts, last error, recent jobs).

options:
  --server URL   edgerag server (default $EDGERAG_URL or http://127.0.0.1:8787)
  --token T      bearer token, when the server does not allow public reads ($EDGERAG_TOKEN)
  --json         print the server's JSON answer
  -h, --help     this help
";

pub fn run(argv: Vec<String>) -> ExitCode {
    let mut args = Args::new(argv);
    let (mut repo, mut server, mut token, mut as_json) = (None, default_server(), default_token(), false);
    while let Some(arg) = args.next() {
        let result: Result<(), String> = match arg {
            Arg::Positional(p) if repo.is_none() => parse_repo(&p).map(|r| repo = Some(r)),
            Arg::Positional(p) => Err(format!("unexpected argument {p:?}")),
            Arg::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => {
                    print!("{HELP}");
                    return ExitCode::SUCCESS;
                }
                "--server" => args.value(&name, inline).map(|v| server = v),
                "--token" => args.value(&name, inline).map(|v| token = Some(v)),
                "--json" => {
                    as_json = true;
                    Ok(())
                }
                other => Err(format!("unknown option {other}")),
            },
        };
        if let Err(msg) = result {
            eprintln!("edgerag status: {msg}\n\n{HELP}");
            return ExitCode::from(USAGE_ERROR);
        }
    }
    let client = Client::new(&server, token);
    let path = match &repo {
        Some((o, n)) => format!("/v1/repos/{o}/{n}/status"),
        None => "/v1/repos".to_string(),
    };
    let body = match client.get(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("edgerag status: {e}");
            return ExitCode::FAILURE;
        }
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    match repo {
        Some(_) => print_status(&body),
        None => print_list(&body),
    }
    ExitCode::SUCCESS
}

fn print_list(body: &Value) {
    let repos = body["repos"].as_array().cloned().unwrap_or_default();
    if repos.is_empty() {
        println!("no repositories");
        return;
    }
    println!("{:<40} {:<9} {:>7} {:>8}  ready at", "repository", "status", "files", "chunks");
    for r in repos {
        println!(
            "{:<40} {:<9} {:>7} {:>8}  {}",
            format!("{}/{}", r["owner"].as_str().unwrap_or(""), r["name"].as_str().unwrap_or("")),
            r["status"].as_str().unwrap_or(""),
            r["fileCount"],
            r["chunkCount"],
            r["readyAt"].as_str().unwrap_or("-")
        );
    }
}

fn print_status(s: &Value) {
    let repo = &s["repo"];
    println!(
        "{}/{}  {}{}",
        repo["owner"].as_str().unwrap_or(""),
        repo["name"].as_str().unwrap_or(""),
        repo["status"].as_str().unwrap_or(""),
        if s["ready"].as_bool() == Some(true) { " (READY)" } else { "" }
    );
    println!("  files {}  chunks {}  ref {}", repo["fileCount"], repo["chunkCount"], repo["ref"]);
    if let Some(e) = s["embedder"].as_object() {
        println!(
            "  embedder {} {} ({} dims), vector index {}",
            e.get("provider").and_then(Value::as_str).unwrap_or(""),
            e.get("model").and_then(Value::as_str).unwrap_or(""),
            e.get("dims").cloned().unwrap_or(Value::Null),
            s["vectorIndex"].as_str().unwrap_or("")
        );
    }
    if let Some(job) = s["job"].as_object() {
        let eta = s["etaSeconds"].as_f64().map(|e| format!(", ETA {e:.0}s")).unwrap_or_default();
        println!(
            "  latest job {} {} — {}%{eta}, attempts {}",
            job.get("id").and_then(Value::as_str).unwrap_or(""),
            job.get("status").and_then(Value::as_str).unwrap_or(""),
            s["progress"],
            s["attempts"]
        );
        let f = &job["files"];
        println!(
            "    files: {} added, {} changed, {} unchanged, {} deleted, {} skipped",
            f["added"], f["changed"], f["unchanged"], f["deleted"], f["skipped"]
        );
    }
    if !s["lastError"].is_null() {
        println!("  last error: {} {}", s["lastError"]["code"], s["lastError"]["message"]);
    }
    if let Some(jobs) = s["recentJobs"].as_array() {
        println!("  recent jobs:");
        for j in jobs {
            println!(
                "    {} {:<9} {:<7} queued {} files {}",
                j["id"].as_str().unwrap_or(""),
                j["status"].as_str().unwrap_or(""),
                j["source"].as_str().unwrap_or(""),
                j["queuedAt"].as_str().unwrap_or(""),
                j["files"]["total"]
            );
        }
    }
}
