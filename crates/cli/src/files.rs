//! `edgerag files OWNER/NAME [--prefix DIR] [--glob GLOB] [--language L]`: the indexed files of a
//! repository (`GET /v1/repos/{owner}/{name}/tree`, the MCP `repo.list_files`).
use serde_json::Value;

use crate::client::{print_answer, Repo, ServerArgs};
use crate::Outcome;

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag files acme/shop --prefix src/api
    edgerag files acme/shop --glob '**/*.rs' --json | jq -r '.files[].path'";

/// List the indexed files of a repository with language, size and line count.
///
/// Files come in path order, a page at a time (--limit, --offset); the answer is cut to
/// --max-tokens and says so. The same answer as the MCP tool repo.list_files.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The repository.
    #[arg(value_name = "OWNER/NAME")]
    repo: Repo,
    /// Only files under this folder.
    #[arg(long, value_name = "DIR")]
    prefix: Option<String>,
    /// Only paths matching this glob (`*` crosses folders, as in search filters).
    #[arg(long, value_name = "GLOB")]
    glob: Option<String>,
    /// Only files of this language.
    #[arg(long, value_name = "LANGUAGE")]
    language: Option<String>,
    /// Page size (default 200, at most 1000).
    #[arg(long)]
    limit: Option<u32>,
    /// Files to skip (the nextOffset of the previous page).
    #[arg(long)]
    offset: Option<u32>,
    /// Largest answer in tokens (default 8000).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Print the server's JSON answer unchanged (schemas/list-files-response.schema.json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

impl Args {
    pub fn run(self) -> Outcome {
        let mut query: Vec<(&str, String)> = Vec::new();
        let text = [("prefix", &self.prefix), ("glob", &self.glob), ("language", &self.language)];
        query.extend(text.iter().filter_map(|(k, v)| v.as_ref().map(|v| (*k, v.clone()))));
        let numbers = [("limit", self.limit), ("offset", self.offset), ("maxTokens", self.max_tokens)];
        query.extend(numbers.iter().filter_map(|(k, v)| v.map(|v| (*k, v.to_string()))));
        let path = format!("/v1/repos/{}/{}/tree", self.repo.owner, self.repo.name);
        print_answer(self.server.client().get_query_text(&path, &query), self.json, render)
    }
}

fn render(answer: &Value) -> String {
    let mut out = String::new();
    for f in answer["files"].as_array().into_iter().flatten() {
        out += &format!(
            "{:>7} {:>9} {:<11} {}\n",
            f["lines"].as_u64().unwrap_or(0),
            f["size"].as_u64().unwrap_or(0),
            f["language"].as_str().unwrap_or(""),
            f["path"].as_str().unwrap_or("")
        );
    }
    if let Some(next) = answer["nextOffset"].as_u64() {
        let cut = if answer["truncated"] == Value::Bool(true) { " (cut to --max-tokens)" } else { "" };
        out += &format!("… {} files in all{cut}; next page: --offset {next}\n", answer["total"]);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn files_are_one_line_each_and_the_next_page_is_named() {
        let text = render(&json!({
            "files": [{"path": "src/a.rs", "language": "rust", "size": 120, "lines": 7}],
            "total": 3, "nextOffset": 1, "truncated": false
        }));
        assert!(text.starts_with("      7       120 rust        src/a.rs\n"), "{text}");
        assert!(text.contains("3 files in all; next page: --offset 1"), "{text}");
    }
}
