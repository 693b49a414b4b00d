//! `edgerag files OWNER/NAME [--prefix DIR] [--glob GLOB] [--language L]`: the indexed files of a
//! repository (`GET /v1/repos/{owner}/{name}/tree`, the MCP `repo.list_files`).
use edgerag_api::{ListFilesQuery, ListFilesResponse};

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
    fn query(&self) -> ListFilesQuery {
        ListFilesQuery {
            prefix: self.prefix.clone(),
            glob: self.glob.clone(),
            language: self.language.clone(),
            limit: self.limit,
            offset: self.offset,
            max_tokens: self.max_tokens,
        }
    }

    pub fn run(self) -> Outcome {
        let query = self.query();
        let path = format!("/v1/repos/{}/{}/tree", self.repo.owner, self.repo.name);
        print_answer(self.server.client().get_query_text(&path, &query), self.json, render)
    }
}

fn render(answer: &ListFilesResponse) -> String {
    let mut out = String::new();
    for f in &answer.files {
        out += &format!("{:>7} {:>9} {:<11} {}\n", f.lines, f.size, f.language, f.path);
    }
    if let Some(next) = answer.next_offset {
        let cut = if answer.truncated { " (cut to --max-tokens)" } else { "" };
        out += &format!("… {} files in all{cut}; next page: --offset {next}\n", answer.total);
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
        let text = render(&serde_json::from_value(json!({
            "files": [{"path": "src/a.rs", "language": "rust", "size": 120, "lines": 7}],
            "total": 3, "nextOffset": 1, "truncated": false
        })).unwrap());
        assert!(text.starts_with("      7       120 rust        src/a.rs\n"), "{text}");
        assert!(text.contains("3 files in all; next page: --offset 1"), "{text}");
    }
}
