//! `edgerag grep OWNER/NAME PATTERN`: lines of a repository's indexed files matching a literal or
//! a regular expression (`POST /v1/repos/{owner}/{name}/grep`, the MCP `repo.grep`).
use edgerag_api::{GrepRequest, GrepResponse};

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
    fn body(&self) -> GrepRequest {
        GrepRequest {
            pattern: self.pattern.clone(),
            regex: self.regex,
            case_sensitive: Some(!self.ignore_case),
            paths: self.paths.clone(),
            languages: self.languages.clone(),
            context: self.context,
            limit: self.limit,
            cursor: self.cursor.clone(),
            max_tokens: self.max_tokens,
        }
    }

    pub fn run(self) -> Outcome {
        let path = format!("/v1/repos/{}/{}/grep", self.repo.owner, self.repo.name);
        print_answer(self.server.client().send_text("POST", &path, &self.body()), self.json, render)
    }
}

fn render(answer: &GrepResponse) -> String {
    let mut out = String::new();
    for m in &answer.matches {
        let (path, line) = (&m.path, m.line);
        for (i, l) in m.before.iter().enumerate() {
            out += &format!("{path}-{}-{l}\n", line as usize - m.before.len() + i);
        }
        out += &format!("{path}:{line}:{}\n", m.text);
        for (i, l) in m.after.iter().enumerate() {
            out += &format!("{path}-{}-{l}\n", line as usize + 1 + i);
        }
    }
    if let Some(cursor) = &answer.next_cursor {
        let why = if answer.truncated {
            "cut to --max-tokens"
        } else if answer.limit_reached {
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
    use serde_json::json;

    #[test]
    fn matches_print_like_grep_with_context_and_the_cursor() {
        let text = render(&serde_json::from_value(json!({
            "matches": [{"path": "a.rs", "line": 3, "text": "fn x()", "before": ["// x"], "after": ["}"]}],
            "filesScanned": 1, "usedIndex": true, "limitReached": true, "nextCursor": "3:a.rs", "truncated": false
        })).unwrap());
        assert_eq!(text, "a.rs-2-// x\na.rs:3:fn x()\na.rs-4-}\n… stopped at --limit; continue with --cursor '3:a.rs'\n");
    }
}
