//! `edgerag map OWNER/NAME [--query Q] [--path GLOB] [--symbol NAME]`: the repository's most
//! important files with their definitions as signatures, within a token budget
//! (`POST /v1/repos/{owner}/{name}/map`, the MCP `repo.map`).
use serde_json::{json, Map, Value};

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
    fn body(&self) -> Value {
        let mut body = Map::new();
        if let Some(q) = &self.query {
            body.insert("query".into(), json!(q));
        }
        if !self.paths.is_empty() {
            body.insert("paths".into(), json!(self.paths));
        }
        if !self.symbols.is_empty() {
            body.insert("symbols".into(), json!(self.symbols));
        }
        if let Some(t) = self.max_tokens {
            body.insert("maxTokens".into(), json!(t));
        }
        Value::Object(body)
    }

    pub fn run(self) -> Outcome {
        let path = format!("/v1/repos/{}/{}/map", self.repo.owner, self.repo.name);
        print_answer(self.server.client().send_text("POST", &path, &self.body()), self.json, render)
    }
}

fn render(answer: &Value) -> String {
    let mut out = String::new();
    for f in answer["files"].as_array().into_iter().flatten() {
        out += &format!("{}:\n", f["path"].as_str().unwrap_or(""));
        for s in f["symbols"].as_array().into_iter().flatten() {
            out += &format!("{:>6}│ {}\n", s["line"].as_u64().unwrap_or(0), s["signature"].as_str().unwrap_or(""));
        }
    }
    if answer["truncated"] == Value::Bool(true) {
        let shown = answer["files"].as_array().map_or(0, Vec::len);
        out += &format!("… {shown} of {} files fit --max-tokens\n", answer["filesTotal"]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_list_their_signatures_with_line_numbers() {
        let text = render(&json!({
            "files": [{"path": "app/util.py", "rank": 0.3, "symbols": [{"kind": "FUNCTION", "signature": "def slugify(text)", "line": 7}]}],
            "filesTotal": 5, "personalized": false, "truncated": true
        }));
        assert_eq!(text, "app/util.py:\n     7│ def slugify(text)\n… 1 of 5 files fit --max-tokens\n");
    }
}
