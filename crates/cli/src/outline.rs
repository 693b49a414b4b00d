//! `edgerag outline OWNER/NAME [PATH]`: a file's symbols as a tree, or a folder's files with their
//! top-level symbols (`GET /v1/repos/{owner}/{name}/outline`, the MCP `repo.outline`).
use serde_json::Value;

use crate::client::{print_answer, Repo, ServerArgs};
use crate::Outcome;

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag outline acme/shop src/cart.py
    edgerag outline acme/shop src --json | jq '.files[] | {path, n: (.symbols | length)}'";

/// Outline a file or a folder of an indexed repository from its code graph.
///
/// A file: its symbols nested under their parents, each with kind, name, signature, line span and
/// the first line of its doc. A folder (or the whole repository without PATH): its files with
/// their top-level symbols, a page at a time (--offset). Cut to --max-tokens.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The repository.
    #[arg(value_name = "OWNER/NAME")]
    repo: Repo,
    /// A file or folder of the repository; omit it for the whole repository.
    #[arg(value_name = "PATH")]
    path: Option<String>,
    /// Folders: files to skip (the nextOffset of the previous page).
    #[arg(long)]
    offset: Option<u32>,
    /// Largest answer in tokens (default 8000).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Print the server's JSON answer unchanged (schemas/outline-response.schema.json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

impl Args {
    pub fn run(self) -> Outcome {
        let mut query: Vec<(&str, String)> = Vec::new();
        if let Some(p) = &self.path {
            query.push(("path", p.clone()));
        }
        let numbers = [("offset", self.offset), ("maxTokens", self.max_tokens)];
        query.extend(numbers.iter().filter_map(|(k, v)| v.map(|v| (*k, v.to_string()))));
        let path = format!("/v1/repos/{}/{}/outline", self.repo.owner, self.repo.name);
        print_answer(self.server.client().get_query_text(&path, &query), self.json, render)
    }
}

fn render(answer: &Value) -> String {
    fn symbols(out: &mut String, list: &Value, depth: usize) {
        for s in list.as_array().into_iter().flatten() {
            let what = s["signature"].as_str().unwrap_or_else(|| s["name"].as_str().unwrap_or(""));
            *out += &format!(
                "{:indent$}{} {}  [{}-{}]",
                "",
                s["kind"].as_str().unwrap_or(""),
                s["name"].as_str().unwrap_or(""),
                s["startLine"],
                s["endLine"],
                indent = 2 * depth
            );
            if what != s["name"].as_str().unwrap_or("") {
                *out += &format!("  {what}");
            }
            out.push('\n');
            symbols(out, &s["children"], depth + 1);
        }
    }
    let mut out = String::new();
    let folder = answer["kind"] == "folder";
    for f in answer["files"].as_array().into_iter().flatten() {
        if folder {
            out += &format!("{}\n", f["path"].as_str().unwrap_or(""));
        }
        symbols(&mut out, &f["symbols"], usize::from(folder));
    }
    if answer["truncated"] == Value::Bool(true) {
        out += "… cut to --max-tokens";
        if let Some(next) = answer["nextOffset"].as_u64() {
            out += &format!("; next page: --offset {next}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn symbols_are_indented_under_their_parents() {
        let text = render(&json!({
            "path": "a.py", "kind": "file", "truncated": false,
            "files": [{"path": "a.py", "language": "python", "symbols": [
                {"id": "1", "kind": "CLASS", "name": "User", "startLine": 1, "endLine": 9, "signature": "class User(Base)",
                 "children": [{"id": "2", "kind": "METHOD", "name": "rename", "startLine": 3, "endLine": 4}]}
            ]}]
        }));
        assert_eq!(text, "CLASS User  [1-9]  class User(Base)\n  METHOD rename  [3-4]\n");
    }
}
