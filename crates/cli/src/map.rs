//! `edgerag map OWNER/NAME [--query Q] [--path GLOB] [--symbol NAME]`: the repository's most
//! important files with their definitions as signatures, within a token budget
//! (`POST /v1/repos/{owner}/{name}/map`, the MCP `repo.map`).
use edgerag_api::{MapRequest, MapResponse};

use crate::client::{print_answer, Repo, ServerArgs};
use crate::Outcome;

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag map acme/shop --max-tokens 2000
    edgerag map acme/shop --query 'how are carts checked out' --path 'src/cart/**'";

/// Print a map of a repository: its most important files and their definitions.
///
/// Files are ranked by PageRank over the code graph (calls, references, imports, inheritance),
/// computed when the repository was indexed; with --query, --path or --symbol, by a PageRank
/// personalized to the files they match (those files and what they use come first). The map is
/// the largest that fits --max-tokens.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The repository.
    #[arg(value_name = "OWNER/NAME")]
    repo: Repo,
    /// Put first the files whose path or symbol names hold this question's words.
    #[arg(long)]
    query: Option<String>,
    /// Put first the files matching this glob (repeatable).
    #[arg(long = "path", value_name = "GLOB")]
    paths: Vec<String>,
    /// Put first the files defining a symbol of this name (repeatable).
    #[arg(long = "symbol", value_name = "NAME")]
    symbols: Vec<String>,
    /// Largest map in tokens (default 8000).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Print the server's JSON answer unchanged (schemas/map-response.schema.json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

impl Args {
    fn body(&self) -> MapRequest {
        MapRequest {
            query: self.query.clone(),
            paths: self.paths.clone(),
            symbols: self.symbols.clone(),
            max_tokens: self.max_tokens,
        }
    }

    pub fn run(self) -> Outcome {
        let path = format!("/v1/repos/{}/{}/map", self.repo.owner, self.repo.name);
        print_answer(self.server.client().send_text("POST", &path, &self.body()), self.json, render)
    }
}

fn render(answer: &MapResponse) -> String {
    let mut out = String::new();
    for f in &answer.files {
        out += &format!("{}:\n", f.path);
        for s in &f.symbols {
            out += &format!("{:>6}│ {}\n", s.line, s.signature);
        }
    }
    if answer.truncated {
        out += &format!("… {} of {} files fit --max-tokens\n", answer.files.len(), answer.files_total);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn files_list_their_signatures_with_line_numbers() {
        let text = render(&serde_json::from_value(json!({
            "files": [{"path": "app/util.py", "rank": 0.3, "symbols": [{"kind": "FUNCTION", "signature": "def slugify(text)", "line": 7}]}],
            "filesTotal": 5, "personalized": false, "truncated": true
        })).unwrap());
        assert_eq!(text, "app/util.py:\n     7│ def slugify(text)\n… 1 of 5 files fit --max-tokens\n");
    }
}
