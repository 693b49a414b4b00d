//! `edgerag search QUESTION...`: ask a running edgerag (the worker; locally `scripts/dev.sh` on
//! 127.0.0.1:8787) and print the ranked matches with their paths and line spans, the modules that
//! ran and any warnings.
use std::io::Write;

use edgerag_api::search::request::{FiltersInput, GlobalSearchRequest, OneOrMany, SearchRequest};
use edgerag_api::search::response::SearchResponse;
use serde::Serialize;

use crate::client::{parse, ClientError, Repo, ServerArgs};
use crate::{Failure, Outcome};

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag search \"where is the retry backoff computed\"
    edgerag search --repo acme/shop --lang go --path 'src/**' retry backoff
    edgerag search --global --json \"rate limiter\" | jq '.matches[].path'";

/// Search indexed repositories and print the ranked matches.
///
/// Hybrid retrieval (BM25 + vectors) with a code-aware rerank, run by the edgerag server. Each
/// match shows its path and line span, symbol, language, score and the first lines of the
/// snippet; neighbours added for context are marked `+`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The question. Several words are joined with spaces, so quoting is optional.
    #[arg(value_name = "QUESTION", required = true)]
    words: Vec<String>,
    /// Repository to search [default: the last READY one].
    #[arg(long, value_name = "OWNER/NAME", help_heading = "Scope")]
    repo: Option<Repo>,
    /// Search every READY repository.
    #[arg(long, conflicts_with = "repo", help_heading = "Scope")]
    global: bool,
    /// Retrieval profile: conservative, balanced, aggressive, legacy or one configured on the
    /// server.
    #[arg(long, value_name = "NAME", help_heading = "Scope")]
    profile: Option<String>,
    /// Only paths matching the glob (repeatable; `*` crosses folders).
    #[arg(long = "path", value_name = "GLOB", help_heading = "Scope")]
    paths: Vec<String>,
    /// Only this language (repeatable; aliases like ts, py, golang work).
    #[arg(long = "lang", visible_alias = "language", value_name = "NAME", help_heading = "Scope")]
    languages: Vec<String>,
    /// Print the server's JSON response unchanged (response v4,
    /// schemas/search-response.schema.json).
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Lines of each snippet to show (0 = none).
    #[arg(long, value_name = "N", default_value_t = 6, help_heading = "Output")]
    snippet_lines: usize,
    /// Ask the server for per-module timings and show them.
    #[arg(long, help_heading = "Output")]
    debug: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// The body of a search: one repository (or the last READY one), or every repository.
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
enum Body {
    Repo(SearchRequest),
    Global(GlobalSearchRequest),
}

impl Args {
    /// The endpoint path and the body for the options.
    fn request(&self) -> Result<(&'static str, Body), Failure> {
        let raw_query = self.words.join(" ");
        if raw_query.trim().is_empty() {
            return Err(Failure::Usage("the question is empty".into()));
        }
        let list = |items: &[String]| (!items.is_empty()).then(|| OneOrMany::Many(items.to_vec()));
        let filters = (!self.paths.is_empty() || !self.languages.is_empty()).then(|| FiltersInput {
            paths: list(&self.paths),
            languages: list(&self.languages),
            tags: None,
        });
        let (profile, debug) = (self.profile.clone(), self.debug.then_some(true));
        if self.global {
            let body = GlobalSearchRequest { raw_query, profile, filters, debug, ..Default::default() };
            return Ok(("/v1/search/global", Body::Global(body)));
        }
        let body = SearchRequest {
            owner: self.repo.as_ref().map(|r| r.owner.clone()),
            name: self.repo.as_ref().map(|r| r.name.clone()),
            raw_query,
            profile,
            filters,
            debug,
            ..Default::default()
        };
        Ok(("/v1/search", Body::Repo(body)))
    }

    pub fn run(self) -> Outcome {
        let (path, body) = self.request()?;
        let client = self.server.client();
        let text = client.send_text("POST", path, &body).map_err(|e| match e {
            ClientError::Api { status, code, message } => {
                Failure::Failed(format!("{code} ({status}): {message}"))
            }
            other => Failure::Failed(format!(
                "cannot reach {} ({other}). Is edgerag running? Start it with scripts/dev.sh or pass --server URL.",
                client.url(path)
            )),
        })?;
        let output = if self.json {
            format!("{}\n", text.trim_end())
        } else {
            render(&parse(&text).map_err(|e| Failure::Failed(e.to_string()))?, self.snippet_lines)
        };
        // A closed pipe (`| head`) is a normal way to stop reading.
        let _ = std::io::stdout().lock().write_all(output.as_bytes());
        Ok(())
    }
}

/// Human-readable rendering of a v4 response.
fn render(res: &SearchResponse, snippet_lines: usize) -> String {
    let mut out = String::new();
    let (owner, name) = (&res.repo_owner, &res.repo_name);
    let n = res.matches.len();
    out += &format!("{owner}/{name} · profile {} · {n} match{}\n", res.profile, if n == 1 { "" } else { "es" });
    if res.matches.is_empty() {
        let reason = res.no_results_reason.map_or("CONTEXT_NOT_FOUND", |r| r.as_str());
        out += &format!("no matches ({reason})\n");
    }
    let mut rank = 0;
    for m in &res.matches {
        let meta = &m.metadata;
        let neighbour = meta.neighbor_of_span_hash.is_some();
        let label = if neighbour {
            "   +".to_string()
        } else {
            rank += 1;
            format!("{rank:>4}")
        };
        let repo_prefix = if *owner != meta.repo_owner || *name != meta.repo_name {
            format!("{}/{}:", meta.repo_owner, meta.repo_name)
        } else {
            String::new()
        };
        out += &format!("{label}. {repo_prefix}{}:{}-{}", m.path, m.start_line, m.end_line);
        if let Some(symbol) = &m.symbol {
            out += &format!("  {symbol}");
        }
        out += &format!(
            "  ({}, score {:.3}{})\n",
            m.language,
            m.score,
            if neighbour { ", neighbour" } else { "" }
        );
        if snippet_lines > 0 {
            let lines: Vec<&str> = m.snippet.lines().collect();
            for line in lines.iter().take(snippet_lines) {
                out += &format!("      │ {line}\n");
            }
            if lines.len() > snippet_lines {
                out += &format!("      │ … {} more lines\n", lines.len() - snippet_lines);
            }
        }
    }
    out += &format!("modules: {}\n", res.applied_modules.join(", "));
    for w in &res.warnings {
        out += &format!("warning: {w}\n");
    }
    if let Some(debug) = &res.debug {
        let parts: Vec<String> = debug.timings.iter().map(|t| format!("{} {:.1}ms", t.module, t.ms)).collect();
        out += &format!("timings: {} (total {:.1}ms)\n", parts.join(", "), debug.total_ms);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use clap::Parser;
    use serde_json::{json, Value};

    use super::*;
    use crate::{Cli, Command};

    fn parse_args(args: &[&str]) -> Result<Args, clap::Error> {
        let cli = Cli::try_parse_from(["edgerag", "search"].iter().chain(args))?;
        match cli.command {
            Command::Search(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_become_the_request_body() {
        let o = parse_args(&[
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
        .unwrap();
        let (path, body) = o.request().ok().unwrap();
        assert_eq!(path, "/v1/search");
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({"rawQuery": "where is retry", "owner": "acme", "name": "shop", "profile": "aggressive",
                   "filters": {"paths": ["src/**"], "languages": ["go"]}})
        );
        let o = parse_args(&["q", "--global", "--language", "ts", "--debug"]).unwrap();
        let (path, body) = o.request().ok().unwrap();
        assert_eq!(path, "/v1/search/global");
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({"rawQuery": "q", "filters": {"languages": ["ts"]}, "debug": true})
        );
    }

    #[test]
    fn usage_errors_are_refused_before_any_request() {
        use clap::error::ErrorKind;
        assert_eq!(parse_args(&["--help"]).unwrap_err().kind(), ErrorKind::DisplayHelp);
        assert_eq!(parse_args(&[]).unwrap_err().kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(parse_args(&["q", "--repo", "nope"]).unwrap_err().kind(), ErrorKind::ValueValidation);
        assert_eq!(parse_args(&["q", "--global", "--repo", "a/b"]).unwrap_err().kind(), ErrorKind::ArgumentConflict);
        assert_eq!(parse_args(&["q", "--bogus"]).unwrap_err().kind(), ErrorKind::UnknownArgument);
        assert_eq!(parse_args(&["q", "--snippet-lines", "x"]).unwrap_err().kind(), ErrorKind::ValueValidation);
        assert!(matches!(parse_args(&["  "]).unwrap().request(), Err(Failure::Usage(_))));
    }

    /// A match as the server answers it.
    fn hit(path: &str, lines: (u32, u32), symbol: Option<&str>, language: &str, score: f64, snippet: &str) -> Value {
        json!({"path": path, "startLine": lines.0, "endLine": lines.1, "symbol": symbol, "language": language,
               "score": score, "snippet": snippet,
               "metadata": {"repoOwner": "acme", "repoName": "shop", "chunkId": "c", "chunkHash": "h", "spanHash": "s",
                            "chunkType": "code-function", "chunkIndex": 0, "tokenCount": 3}})
    }

    /// A v4 response with `fields` over the ones every response has.
    fn response(fields: Value) -> SearchResponse {
        let mut res = json!({
            "matches": [], "rerankApplied": false, "augmentedPrompt": "", "instructions": "", "contextMissing": false,
            "noResults": false, "noResultsReason": null, "appliedModules": [], "warnings": [],
            "repoOwner": "acme", "repoName": "shop", "profile": "balanced"
        });
        res.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        serde_json::from_value(res).unwrap()
    }

    #[test]
    fn renders_matches_neighbours_and_warnings() {
        let mut neighbour = hit("src/net/retry.go", (31, 35), None, "go", 0.8, "d");
        neighbour["metadata"]["neighborOfSpanHash"] = json!("x");
        let mut other = hit("lib/x.py", (1, 2), None, "python", 0.5, "");
        other["metadata"]["repoOwner"] = json!("other");
        other["metadata"]["repoName"] = json!("lib");
        let res = response(json!({
            "repoOwner": "acme", "repoName": "shop", "profile": "balanced",
            "matches": [hit("src/net/retry.go", (11, 30), Some("RetryWithBackoff"), "go", 0.93, "a\nb\nc"), neighbour, other],
            "appliedModules": ["profile:balanced", "retrieval.bm25"],
            "warnings": ["repoOwner/repoName were filled automatically"],
            "noResultsReason": null,
            "debug": {"subQueries": ["q"], "keywordQuery": null, "plan": {},
                      "timings": [{"module": "bm25", "ms": 1.5}], "totalMs": 3.5}
        }));
        let text = render(&res, 2);
        assert!(text.starts_with("acme/shop · profile balanced · 3 matches\n"), "{text}");
        assert!(text.contains("   1. src/net/retry.go:11-30  RetryWithBackoff  (go, score 0.930)"), "{text}");
        assert!(text.contains("      │ b\n      │ … 1 more lines"), "{text}");
        assert!(text.contains("   +. src/net/retry.go:31-35  (go, score 0.800, neighbour)"), "{text}");
        assert!(text.contains("   2. other/lib:lib/x.py:1-2  (python, score 0.500)"), "{text}");
        assert!(text.contains("modules: profile:balanced, retrieval.bm25"));
        assert!(text.contains("warning: repoOwner/repoName were filled automatically"));
        assert!(text.contains("timings: bm25 1.5ms (total 3.5ms)"), "{text}");
        let empty = response(
            json!({"repoOwner": "a", "repoName": "b", "profile": "p", "matches": [], "noResultsReason": "INDEX_NOT_READY"}),
        );
        assert!(render(&empty, 3).contains("no matches (INDEX_NOT_READY)"));
    }
}
