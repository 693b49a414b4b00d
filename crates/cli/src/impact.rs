//! `edgerag impact OWNER/NAME [--diff FILE | PATH[:START-END]...]`: what a change touches
//! (`POST /v1/repos/{owner}/{name}/impact`, the MCP `repo.impact`).
use std::io::Read;

use serde_json::{json, Map, Value};

use crate::client::{print_answer, Repo, ServerArgs};
use crate::{Failure, Outcome};

const EXAMPLES: &str = "\
EXAMPLES:
    git diff main | edgerag impact acme/shop --diff -
    edgerag impact acme/shop src/cart.py:40-75 src/util.py";

/// Show what a change touches: the symbols changed, their callers and users up to three steps
/// away, the HTTP endpoints reached and the test files involved.
///
/// Give the change as a unified diff (--diff FILE, or - for stdin) or as paths, each optionally
/// with a line range (PATH:START-END).
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// The repository.
    #[arg(value_name = "OWNER/NAME")]
    repo: Repo,
    /// Changed paths, each optionally with a line range: `src/a.py:10-20`.
    #[arg(value_name = "PATH[:START-END]", conflicts_with = "diff")]
    changes: Vec<String>,
    /// A unified diff to read (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    diff: Option<String>,
    /// Steps followed back from the changed symbols (1 to 3, default 3).
    #[arg(long)]
    depth: Option<u32>,
    /// Impacted symbols shown at most (default 50).
    #[arg(long)]
    limit: Option<u32>,
    /// Largest answer in tokens (default 8000).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Print the server's JSON answer unchanged (schemas/impact-response.schema.json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// `path` or `path:start-end` as a `changes` entry.
fn change(arg: &str) -> Result<Value, String> {
    let Some((path, range)) = arg.rsplit_once(':').filter(|(_, r)| r.contains('-') || r.parse::<u32>().is_ok()) else {
        return Ok(json!({ "path": arg }));
    };
    let (start, end) = range.split_once('-').unwrap_or((range, range));
    match (start.parse::<u32>(), end.parse::<u32>()) {
        (Ok(s), Ok(e)) => Ok(json!({ "path": path, "startLine": s, "endLine": e })),
        _ => Err(format!("{arg:?}: a line range is START-END (two line numbers)")),
    }
}

impl Args {
    fn body(&self) -> Result<Value, Failure> {
        let mut body = Map::new();
        match &self.diff {
            Some(file) => {
                let mut text = String::new();
                let read = if file == "-" {
                    std::io::stdin().read_to_string(&mut text).map(|_| ())
                } else {
                    std::fs::read_to_string(file).map(|t| text = t)
                };
                read.map_err(|e| Failure::Usage(format!("cannot read the diff {file}: {e}")))?;
                body.insert("diff".into(), json!(text));
            }
            None if self.changes.is_empty() => {
                return Err(Failure::Usage("give changed paths or --diff".into()));
            }
            None => {
                let changes: Vec<Value> =
                    self.changes.iter().map(|c| change(c)).collect::<Result<_, _>>().map_err(Failure::Usage)?;
                body.insert("changes".into(), json!(changes));
            }
        }
        for (k, v) in [("depth", self.depth), ("limit", self.limit), ("maxTokens", self.max_tokens)] {
            if let Some(v) = v {
                body.insert(k.into(), json!(v));
            }
        }
        Ok(Value::Object(body))
    }

    pub fn run(self) -> Outcome {
        let body = self.body()?;
        let path = format!("/v1/repos/{}/{}/impact", self.repo.owner, self.repo.name);
        print_answer(self.server.client().send_text("POST", &path, &body), self.json, render)
    }
}

fn render(answer: &Value) -> String {
    let symbol = |s: &Value| format!("{} {}  {}:{}", s["kind"].as_str().unwrap_or(""), s["fqn"].as_str().unwrap_or(""), s["path"].as_str().unwrap_or(""), s["startLine"]);
    let mut out = String::from("changed:\n");
    for s in answer["changed"].as_array().into_iter().flatten() {
        out += &format!("  {}\n", symbol(s));
    }
    out += &format!("impacted ({}):\n", answer["total"]);
    for i in answer["impacted"].as_array().into_iter().flatten() {
        out += &format!("  [{}] {}\n", i["depth"], symbol(&i["symbol"]));
    }
    for (title, key) in [("endpoints", "endpoints")] {
        let list = answer[key].as_array().cloned().unwrap_or_default();
        if !list.is_empty() {
            out += &format!("{title}:\n");
            for e in &list {
                out += &format!("  {} {}  {}\n", e["httpMethod"].as_str().unwrap_or(""), e["route"].as_str().unwrap_or(""), symbol(e));
            }
        }
    }
    let tests = answer["tests"].as_array().cloned().unwrap_or_default();
    if !tests.is_empty() {
        out += "tests:\n";
        for t in &tests {
            out += &format!("  {}\n", t.as_str().unwrap_or(""));
        }
    }
    if let Some(next) = answer["nextOffset"].as_u64() {
        out += &format!("… more impacted symbols from offset {next}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn changes_are_paths_with_optional_line_ranges() {
        assert_eq!(change("src/a.py").unwrap(), json!({"path": "src/a.py"}));
        assert_eq!(change("src/a.py:3-9").unwrap(), json!({"path": "src/a.py", "startLine": 3, "endLine": 9}));
        assert_eq!(change("src/a.py:7").unwrap(), json!({"path": "src/a.py", "startLine": 7, "endLine": 7}));
        assert!(change("src/a.py:x-9").is_err());
    }

    #[test]
    fn the_answer_lists_changed_then_impacted_symbols() {
        let text = render(&json!({
            "changed": [{"id": "1", "kind": "FUNCTION", "fqn": "app.util.slugify", "path": "app/util.py", "startLine": 7, "endLine": 9}],
            "impacted": [{"depth": 1, "via": [], "symbol": {"id": "2", "kind": "METHOD", "fqn": "app.models.User.__init__", "path": "app/models.py", "startLine": 18, "endLine": 20}}],
            "endpoints": [], "tests": ["tests/test_util.py"], "total": 1, "frontierCapped": false, "truncated": false
        }));
        assert!(text.contains("changed:\n  FUNCTION app.util.slugify  app/util.py:7\n"), "{text}");
        assert!(text.contains("  [1] METHOD app.models.User.__init__  app/models.py:18\n"), "{text}");
        assert!(text.ends_with("tests:\n  tests/test_util.py\n"), "{text}");
    }
}
