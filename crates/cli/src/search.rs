//! `edgerag search "question" [--repo owner/name] [--profile P] [--json] ...`: ask a running
//! edgerag (the worker, locally `scripts/dev.sh` on 127.0.0.1:8787) and print the ranked matches
//! with their paths and line spans, the modules that ran and any warnings.
use std::io::Write;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::args::{Arg, Args};
use crate::USAGE_ERROR;

const HELP: &str = "usage: edgerag search <question> [options]

Search indexed repositories (hybrid BM25 + vector retrieval, code-aware rerank) through a running
edgerag server and print the ranked matches with paths and line spans.

options:
  --repo OWNER/NAME     repository to search (default: the last READY one)
  --global              search every READY repository
  --profile NAME        conservative | balanced | aggressive | legacy | a configured one
  --path GLOB           only paths matching the glob (repeatable; `*` crosses folders)
  --lang NAME           only this language (repeatable; aliases like ts, py, golang work)
  --json                print the raw JSON response (response v4)
  --snippet-lines N     lines of each snippet to show (default 6, 0 = none)
  --debug               ask for per-module timings and show them
  --server URL          edgerag base URL (default $EDGERAG_URL or http://127.0.0.1:8787)
  --token TOKEN         bearer token when reads are not public (default $EDGERAG_TOKEN)
  -h, --help            this help

exit status: 0 on an answer (even an empty one), 1 when the server refuses or fails, 2 on usage errors.
";

#[derive(Debug, Clone, PartialEq)]
struct Options {
    query: String,
    repo: Option<(String, String)>,
    global: bool,
    profile: Option<String>,
    paths: Vec<String>,
    languages: Vec<String>,
    json: bool,
    snippet_lines: usize,
    debug: bool,
    server: String,
    token: Option<String>,
}

fn parse(argv: Vec<String>, env: impl Fn(&str) -> Option<String>) -> Result<Options, Option<String>> {
    let mut args = Args::new(argv);
    let mut words: Vec<String> = Vec::new();
    let mut o = Options {
        query: String::new(),
        repo: None,
        global: false,
        profile: None,
        paths: Vec::new(),
        languages: Vec::new(),
        json: false,
        snippet_lines: 6,
        debug: false,
        server: env("EDGERAG_URL")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "http://127.0.0.1:8787".into()),
        token: env("EDGERAG_TOKEN").filter(|s| !s.is_empty()),
    };
    while let Some(arg) = args.next() {
        match arg {
            Arg::Positional(w) => words.push(w),
            Arg::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => return Err(None),
                "--repo" => {
                    let v = args.value("--repo", inline)?;
                    let (owner, repo) = v
                        .split_once('/')
                        .ok_or_else(|| format!("--repo must look like owner/name, got {v:?}"))?;
                    o.repo = Some((owner.to_string(), repo.to_string()));
                }
                "--global" => o.global = true,
                "--profile" => o.profile = Some(args.value("--profile", inline)?),
                "--path" => o.paths.push(args.value("--path", inline)?),
                "--lang" | "--language" => o.languages.push(args.value("--lang", inline)?),
                "--json" => o.json = true,
                "--snippet-lines" => o.snippet_lines = args.parsed("--snippet-lines", inline)?,
                "--debug" => o.debug = true,
                "--server" => o.server = args.value("--server", inline)?,
                "--token" => o.token = Some(args.value("--token", inline)?),
                other => return Err(Some(format!("unknown option {other}"))),
            },
        }
    }
    o.query = words.join(" ");
    if o.query.trim().is_empty() {
        return Err(Some("a question is required".into()));
    }
    if o.global && o.repo.is_some() {
        return Err(Some("--global and --repo exclude each other".into()));
    }
    Ok(o)
}

/// The endpoint and JSON body for the options.
fn request(o: &Options) -> (String, Value) {
    let path = if o.global { "/v1/search/global" } else { "/v1/search" };
    let mut body = json!({ "rawQuery": o.query });
    if let Some((owner, name)) = &o.repo {
        body["owner"] = json!(owner);
        body["name"] = json!(name);
    }
    if let Some(p) = &o.profile {
        body["profile"] = json!(p);
    }
    if !o.paths.is_empty() || !o.languages.is_empty() {
        let mut filters = json!({});
        if !o.paths.is_empty() {
            filters["paths"] = json!(o.paths);
        }
        if !o.languages.is_empty() {
            filters["languages"] = json!(o.languages);
        }
        body["filters"] = filters;
    }
    if o.debug {
        body["debug"] = json!(true);
    }
    (format!("{}{path}", o.server.trim_end_matches('/')), body)
}

/// Human-readable rendering of a v4 response.
fn render(res: &Value, snippet_lines: usize) -> String {
    let mut out = String::new();
    let matches = res["matches"].as_array().cloned().unwrap_or_default();
    let repo =
        format!("{}/{}", res["repoOwner"].as_str().unwrap_or("?"), res["repoName"].as_str().unwrap_or("?"));
    out.push_str(&format!(
        "{repo} · profile {} · {} match{}\n",
        res["profile"].as_str().unwrap_or("?"),
        matches.len(),
        if matches.len() == 1 { "" } else { "es" }
    ));
    if matches.is_empty() {
        let reason = res["noResultsReason"].as_str().unwrap_or("CONTEXT_NOT_FOUND");
        out.push_str(&format!("no matches ({reason})\n"));
    }
    let mut rank = 0;
    for m in &matches {
        let meta = &m["metadata"];
        let neighbour = meta["neighborOfSpanHash"].is_string();
        let label = if neighbour {
            "   +".to_string()
        } else {
            rank += 1;
            format!("{rank:>4}")
        };
        let repo_prefix = if res["repoOwner"] != meta["repoOwner"] || res["repoName"] != meta["repoName"] {
            format!(
                "{}/{}:",
                meta["repoOwner"].as_str().unwrap_or(""),
                meta["repoName"].as_str().unwrap_or("")
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{label}. {repo_prefix}{}:{}-{}",
            m["path"].as_str().unwrap_or("?"),
            m["startLine"].as_u64().unwrap_or(0),
            m["endLine"].as_u64().unwrap_or(0)
        ));
        if let Some(symbol) = m["symbol"].as_str() {
            out.push_str(&format!("  {symbol}"));
        }
        out.push_str(&format!(
            "  ({}, score {:.3}{})\n",
            m["language"].as_str().unwrap_or("?"),
            m["score"].as_f64().unwrap_or(0.0),
            if neighbour { ", neighbour" } else { "" }
        ));
        if snippet_lines > 0 {
            let snippet = m["snippet"].as_str().unwrap_or("");
            let lines: Vec<&str> = snippet.lines().collect();
            for line in lines.iter().take(snippet_lines) {
                out.push_str(&format!("      │ {line}\n"));
            }
            if lines.len() > snippet_lines {
                out.push_str(&format!("      │ … {} more lines\n", lines.len() - snippet_lines));
            }
        }
    }
    let modules: Vec<&str> =
        res["appliedModules"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    out.push_str(&format!("modules: {}\n", modules.join(", ")));
    for w in res["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        out.push_str(&format!("warning: {w}\n"));
    }
    if let Some(timings) = res["debug"]["timings"].as_array() {
        let parts: Vec<String> = timings
            .iter()
            .map(|t| {
                format!("{} {:.1}ms", t["module"].as_str().unwrap_or("?"), t["ms"].as_f64().unwrap_or(0.0))
            })
            .collect();
        out.push_str(&format!(
            "timings: {} (total {:.1}ms)\n",
            parts.join(", "),
            res["debug"]["totalMs"].as_f64().unwrap_or(0.0)
        ));
    }
    out
}

pub fn run(argv: Vec<String>) -> ExitCode {
    let o = match parse(argv, |k| std::env::var(k).ok()) {
        Ok(o) => o,
        Err(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(Some(e)) => {
            eprintln!("edgerag search: {e}\n\n{HELP}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    let (url, body) = request(&o);
    let mut req = ureq::post(&url).set("content-type", "application/json");
    if let Some(t) = &o.token {
        req = req.set("authorization", &format!("Bearer {t}"));
    }
    let response = match req.send_string(&body.to_string()) {
        Ok(r) => r,
        Err(ureq::Error::Status(status, r)) => {
            let text = r.into_string().unwrap_or_default();
            let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            match (parsed["error"]["code"].as_str(), parsed["error"]["message"].as_str()) {
                (Some(code), Some(message)) => eprintln!("edgerag search: {code} ({status}): {message}"),
                _ => eprintln!("edgerag search: the server answered {status}: {text}"),
            }
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!(
                "edgerag search: cannot reach {url} ({e}). Is edgerag running? Start it with scripts/dev.sh or \
                 pass --server URL."
            );
            return ExitCode::from(1);
        }
    };
    let text = match response.into_string() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("edgerag search: reading the response failed: {e}");
            return ExitCode::from(1);
        }
    };
    let mut stdout = std::io::stdout().lock();
    let written = if o.json {
        writeln!(stdout, "{text}")
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => write!(stdout, "{}", render(&v, o.snippet_lines)),
            Err(e) => {
                eprintln!("edgerag search: the server sent something that is not JSON: {e}");
                return ExitCode::from(1);
            }
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error.
        Err(_) => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, Option<String>> {
        parse(args.iter().map(|s| s.to_string()).collect(), |_| None)
    }

    #[test]
    fn parses_options_into_a_request() {
        let o = opts(&[
            "where",
            "is",
            "retry",
            "--repo",
            "acme/shop",
            "--profile=aggressive",
            "--path",
            "src/**",
            "--lang",
            "go",
            "--json",
        ])
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(o.query, "where is retry");
        let (url, body) = request(&o);
        assert_eq!(url, "http://127.0.0.1:8787/v1/search");
        assert_eq!(
            body,
            json!({"rawQuery": "where is retry", "owner": "acme", "name": "shop", "profile": "aggressive",
                   "filters": {"paths": ["src/**"], "languages": ["go"]}})
        );
        let o = opts(&["q", "--global", "--server", "http://h:1/"]).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(request(&o).0, "http://h:1/v1/search/global");
    }

    #[test]
    fn usage_errors() {
        assert_eq!(opts(&["--help"]), Err(None));
        assert!(opts(&[]).is_err());
        assert!(opts(&["q", "--repo", "nope"]).is_err());
        assert!(opts(&["q", "--global", "--repo", "a/b"]).is_err());
        assert!(opts(&["q", "--bogus"]).is_err());
        let env = |k: &str| (k == "EDGERAG_URL").then(|| "http://x:9".to_string());
        assert_eq!(parse(vec!["q".into()], env).map(|o| o.server), Ok("http://x:9".into()));
    }

    #[test]
    fn renders_matches_neighbours_and_warnings() {
        let res = json!({
            "repoOwner": "acme", "repoName": "shop", "profile": "balanced",
            "matches": [
                {"path": "src/net/retry.go", "startLine": 11, "endLine": 30, "symbol": "RetryWithBackoff", "language": "go",
                 "score": 0.93, "snippet": "a\nb\nc", "metadata": {"repoOwner": "acme", "repoName": "shop"}},
                {"path": "src/net/retry.go", "startLine": 31, "endLine": 35, "symbol": null, "language": "go",
                 "score": 0.8, "snippet": "d", "metadata": {"repoOwner": "acme", "repoName": "shop", "neighborOfSpanHash": "x"}}
            ],
            "appliedModules": ["profile:balanced", "retrieval.bm25"],
            "warnings": ["repoOwner/repoName were filled automatically"],
            "noResultsReason": null
        });
        let text = render(&res, 2);
        assert!(text.starts_with("acme/shop · profile balanced · 2 matches\n"), "{text}");
        assert!(text.contains("   1. src/net/retry.go:11-30  RetryWithBackoff  (go, score 0.930)"), "{text}");
        assert!(text.contains("      │ b\n      │ … 1 more lines"), "{text}");
        assert!(text.contains("   +. src/net/retry.go:31-35  (go, score 0.800, neighbour)"), "{text}");
        assert!(text.contains("modules: profile:balanced, retrieval.bm25"));
        assert!(text.contains("warning: repoOwner/repoName were filled automatically"));
        let empty = render(
            &json!({"repoOwner": "a", "repoName": "b", "profile": "p", "matches": [], "noResultsReason": "INDEX_NOT_READY"}),
            3,
        );
        assert!(empty.contains("no matches (INDEX_NOT_READY)"));
    }
}
