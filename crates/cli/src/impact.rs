//! `edgerag impact OWNER/NAME [--diff FILE | PATH[:START-END]...]`: what a change touches
//! (`POST /v1/repos/{owner}/{name}/impact`, the MCP `repo.impact`).
use std::io::Read;

use edgerag_api::{ChangedRange, ImpactRequest, ImpactResponse, ImpactSymbol};

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
fn change(arg: &str) -> Result<ChangedRange, String> {
    let Some((path, range)) = arg.rsplit_once(':').filter(|(_, r)| r.contains('-') || r.parse::<u32>().is_ok()) else {
        return Ok(ChangedRange { path: arg.to_string(), ..Default::default() });
    };
    let (start, end) = range.split_once('-').unwrap_or((range, range));
    match (start.parse::<u32>(), end.parse::<u32>()) {
        (Ok(s), Ok(e)) => Ok(ChangedRange { path: path.to_string(), start_line: Some(s), end_line: Some(e) }),
        _ => Err(format!("{arg:?}: a line range is START-END (two line numbers)")),
    }
}

impl Args {
    fn body(&self) -> Result<ImpactRequest, Failure> {
        let mut body = ImpactRequest {
            depth: self.depth,
            limit: self.limit,
            max_tokens: self.max_tokens,
            ..Default::default()
        };
        match &self.diff {
            Some(file) => {
                let mut text = String::new();
                let read = if file == "-" {
                    std::io::stdin().read_to_string(&mut text).map(|_| ())
                } else {
                    std::fs::read_to_string(file).map(|t| text = t)
                };
                read.map_err(|e| Failure::Usage(format!("cannot read the diff {file}: {e}")))?;
                body.diff = Some(text);
            }
            None if self.changes.is_empty() => {
                return Err(Failure::Usage("give changed paths or --diff".into()));
            }
            None => {
                body.changes =
                    self.changes.iter().map(|c| change(c)).collect::<Result<_, _>>().map_err(Failure::Usage)?;
            }
        }
        Ok(body)
    }

    pub fn run(self) -> Outcome {
        let body = self.body()?;
        let path = format!("/v1/repos/{}/{}/impact", self.repo.owner, self.repo.name);
        print_answer(self.server.client().send_text("POST", &path, &body), self.json, render)
    }
}

fn render(answer: &ImpactResponse) -> String {
    let symbol = |s: &ImpactSymbol| format!("{} {}  {}:{}", s.kind, s.fqn, s.path, s.start_line);
    let mut out = String::from("changed:\n");
    for s in &answer.changed {
        out += &format!("  {}\n", symbol(s));
    }
    out += &format!("impacted ({}):\n", answer.total);
    for i in &answer.impacted {
        out += &format!("  [{}] {}\n", i.depth, symbol(&i.symbol));
    }
    if !answer.endpoints.is_empty() {
        out += "endpoints:\n";
        for e in &answer.endpoints {
            let (method, route) = (e.http_method.as_deref().unwrap_or(""), e.route.as_deref().unwrap_or(""));
            out += &format!("  {method} {route}  {}\n", symbol(e));
        }
    }
    if !answer.tests.is_empty() {
        out += "tests:\n";
        for t in &answer.tests {
            out += &format!("  {t}\n");
        }
    }
    if let Some(next) = answer.next_offset {
        out += &format!("… more impacted symbols from offset {next}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_are_paths_with_optional_line_ranges() {
        let change = |arg| change(arg).map(|c| serde_json::to_value(c).unwrap());
        assert_eq!(change("src/a.py").unwrap(), json!({"path": "src/a.py"}));
        assert_eq!(change("src/a.py:3-9").unwrap(), json!({"path": "src/a.py", "startLine": 3, "endLine": 9}));
        assert_eq!(change("src/a.py:7").unwrap(), json!({"path": "src/a.py", "startLine": 7, "endLine": 7}));
        assert!(change("src/a.py:x-9").is_err());
    }

    #[test]
    fn the_answer_lists_changed_then_impacted_symbols() {
        let text = render(&serde_json::from_value(json!({
            "changed": [{"id": "1", "kind": "FUNCTION", "fqn": "app.util.slugify", "path": "app/util.py", "startLine": 7, "endLine": 9}],
            "impacted": [{"depth": 1, "via": [], "symbol": {"id": "2", "kind": "METHOD", "fqn": "app.models.User.__init__", "path": "app/models.py", "startLine": 18, "endLine": 20}}],
            "endpoints": [], "tests": ["tests/test_util.py"], "total": 1, "frontierCapped": false, "truncated": false
        })).unwrap());
        assert!(text.contains("changed:\n  FUNCTION app.util.slugify  app/util.py:7\n"), "{text}");
        assert!(text.contains("  [1] METHOD app.models.User.__init__  app/models.py:18\n"), "{text}");
        assert!(text.ends_with("tests:\n  tests/test_util.py\n"), "{text}");
    }
}
