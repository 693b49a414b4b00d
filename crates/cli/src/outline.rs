//! `edgerag outline OWNER/NAME [PATH]`: a file's symbols as a tree, or a folder's files with their
//! top-level symbols (`GET /v1/repos/{owner}/{name}/outline`, the MCP `repo.outline`).
use edgerag_api::{OutlineKind, OutlineQuery, OutlineResponse, OutlineSymbol};

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
        let query = OutlineQuery { path: self.path.clone(), offset: self.offset, max_tokens: self.max_tokens };
        let path = format!("/v1/repos/{}/{}/outline", self.repo.owner, self.repo.name);
        print_answer(self.server.client().get_query_text(&path, &query), self.json, render)
    }
}

fn render(answer: &OutlineResponse) -> String {
    fn symbols(out: &mut String, list: &[OutlineSymbol], depth: usize) {
        for s in list {
            *out += &format!(
                "{:indent$}{} {}  [{}-{}]",
                "",
                s.kind,
                s.name,
                s.start_line,
                s.end_line,
                indent = 2 * depth
            );
            match &s.signature {
                Some(signature) if *signature != s.name => *out += &format!("  {signature}"),
                _ => {}
            }
            out.push('\n');
            symbols(out, &s.children, depth + 1);
        }
    }
    let mut out = String::new();
    let folder = answer.kind == OutlineKind::Folder;
    for f in &answer.files {
        if folder {
            out += &format!("{}\n", f.path);
        }
        symbols(&mut out, &f.symbols, usize::from(folder));
    }
    if answer.truncated {
        out += "… cut to --max-tokens";
        if let Some(next) = answer.next_offset {
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
        let text = render(&serde_json::from_value(json!({
            "path": "a.py", "kind": "file", "truncated": false,
            "files": [{"path": "a.py", "language": "python", "symbols": [
                {"id": "1", "kind": "CLASS", "name": "User", "startLine": 1, "endLine": 9, "signature": "class User(Base)",
                 "children": [{"id": "2", "kind": "METHOD", "name": "rename", "startLine": 3, "endLine": 4}]}
            ]}]
        })).unwrap());
        assert_eq!(text, "CLASS User  [1-9]  class User(Base)\n  METHOD rename  [3-4]\n");
    }
}
