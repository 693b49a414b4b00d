//! `edgerag grep OWNER/NAME PATTERN`: lines of a repository's indexed files matching a literal or
//! a regular expression (`POST /v1/repos/{owner}/{name}/grep`, the MCP `repo.grep`).
use serde_json::{json, Map, Value};

use crate::client::{print_answer, Repo, ServerArgs};
use crate::Outcome;

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag grep acme/shop 'fn checkout'
    edgerag grep acme/shop -e 'TODO|FIXME' --path 'src/**' -C 2
    edgerag grep acme/shop -i slugify --json | jq -r '.matches[] | \"\\(.path):\\(.line)\"'";

/// Search the indexed files of a repository for a literal string or a regular expression.
///
/// Lines come in path and line order, exactly as indexed, up to --limit; the answer says when
/// the limit stopped the search and gives a --cursor to continue. A pattern holding a literal of
/// three or more characters reads only the files the server's trigram index names.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The repository.
    #[arg(value_name = "OWNER/NAME")]
    repo: Repo,
    /// What to find: a literal string, or a regular expression with -e.
    #[arg(value_name = "PATTERN")]
    pattern: String,
    /// PATTERN is a regular expression (Rust regex syntax).
    #[arg(short = 'e', long)]
    regex: bool,
    /// Ignore case.
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Only paths matching this glob (repeatable).
    #[arg(long = "path", value_name = "GLOB")]
    paths: Vec<String>,
    /// Only files of this language (repeatable).
    #[arg(long = "language", value_name = "LANGUAGE")]
    languages: Vec<String>,
    /// Lines of context before and after each match (at most 10).
    #[arg(short = 'C', long, value_name = "N")]
    context: Option<u32>,
    /// Matching lines at most (default 100, at most 1000).
    #[arg(long)]
    limit: Option<u32>,
    /// Continue after the previous answer (its nextCursor).
    #[arg(long)]
    cursor: Option<String>,
    /// Largest answer in tokens (default 8000).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Print the server's JSON answer unchanged (schemas/grep-response.schema.json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

impl Args {
    fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("pattern".into(), json!(self.pattern));
        body.insert("regex".into(), json!(self.regex));
        body.insert("caseSensitive".into(), json!(!self.ignore_case));
        if !self.paths.is_empty() {
            body.insert("paths".into(), json!(self.paths));
        }
        if !self.languages.is_empty() {
            body.insert("languages".into(), json!(self.languages));
        }
        let optional = [("context", self.context), ("limit", self.limit), ("maxTokens", self.max_tokens)];
        for (k, v) in optional {
            if let Some(v) = v {
                body.insert(k.into(), json!(v));
            }
        }
        if let Some(c) = &self.cursor {
            body.insert("cursor".into(), json!(c));
        }
        Value::Object(body)
    }

    pub fn run(self) -> Outcome {
        let path = format!("/v1/repos/{}/{}/grep", self.repo.owner, self.repo.name);
        print_answer(self.server.client().send_text("POST", &path, &self.body()), self.json, render)
    }
}

fn render(answer: &Value) -> String {
    let mut out = String::new();
    for m in answer["matches"].as_array().into_iter().flatten() {
        let path = m["path"].as_str().unwrap_or("");
        let line = m["line"].as_u64().unwrap_or(0);
        let before = m["before"].as_array().cloned().unwrap_or_default();
        for (i, l) in before.iter().enumerate() {
            out += &format!("{path}-{}-{}\n", line as usize - before.len() + i, l.as_str().unwrap_or(""));
        }
        out += &format!("{path}:{line}:{}\n", m["text"].as_str().unwrap_or(""));
        for (i, l) in m["after"].as_array().into_iter().flatten().enumerate() {
            out += &format!("{path}-{}-{}\n", line as usize + 1 + i, l.as_str().unwrap_or(""));
        }
    }
    if let Some(cursor) = answer["nextCursor"].as_str() {
        let why = if answer["truncated"] == Value::Bool(true) {
            "cut to --max-tokens"
        } else if answer["limitReached"] == Value::Bool(true) {
            "stopped at --limit"
        } else {
            "stopped at the scan limit"
        };
        out += &format!("… {why}; continue with --cursor '{cursor}'\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn matches_print_like_grep_with_context_and_the_cursor() {
        let text = render(&json!({
            "matches": [{"path": "a.rs", "line": 3, "text": "fn x()", "before": ["// x"], "after": ["}"]}],
            "filesScanned": 1, "usedIndex": true, "limitReached": true, "nextCursor": "3:a.rs", "truncated": false
        }));
        assert_eq!(text, "a.rs-2-// x\na.rs:3:fn x()\na.rs-4-}\n… stopped at --limit; continue with --cursor '3:a.rs'\n");
    }
}
