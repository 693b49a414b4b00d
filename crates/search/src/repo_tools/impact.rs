//! `repo.impact` (`POST /v1/repos/{owner}/{name}/impact`): what a change touches, from the code
//! graph.
//!
//! 1. The change is changed paths with line ranges, or a unified diff ([`diff_ranges`]: the
//!    lines each hunk touches in the new file; a deleted file's lines in the old one).
//! 2. The changed symbols are those whose line span overlaps a changed range (a file's own
//!    module node only when nothing inside it does).
//! 3. Symbols that call, reference, import, extend or implement them are followed backwards up
//!    to `depth` steps (at most 3), breadth first, each reached once, with the chain of edges that
//!    reached it first.
//! 4. The answer: the changed symbols; the impacted ones ranked by depth, then PageRank (from
//!    `repo.map`), then path and line, paged; the HTTP endpoints among them; and the test files
//!    holding any of them.
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::store::{RepoStore, RepoSymbol, ToolError, ToolResult};
use super::{largest_fitting, ImpactEdge, ImpactRequest, ImpactResponse, ImpactSymbol, ImpactedSymbol};

const MAX_DEPTH: u32 = 3;
const DEFAULT_IMPACTED: u32 = 50;
const MAX_IMPACTED: u32 = 500;
/// Largest diff accepted, in bytes.
pub const MAX_DIFF_BYTES: usize = 1 << 20;
/// Symbols followed per step at most (a change to a symbol everything uses stops here).
const MAX_FRONTIER: usize = 2_000;

/// The line ranges a unified diff changes, by path: each hunk's lines in the new file (an insertion
/// or a deletion touches the line where it happens), or in the old file when the file was deleted.
pub fn diff_ranges(diff: &str) -> Result<BTreeMap<String, Vec<(u32, u32)>>, String> {
    let mut out: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    let mut old_path: Option<String> = None;
    let mut path: Option<String> = None;
    let strip = |p: &str| {
        let p = p.split('\t').next().unwrap_or(p).trim();
        p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p).to_string()
    };
    for line in diff.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            old_path = (p.trim() != "/dev/null").then(|| strip(p));
        } else if let Some(p) = line.strip_prefix("+++ ") {
            path = if p.trim() == "/dev/null" {
                old_path.clone().map(|o| format!("\u{0}{o}"))
            } else {
                Some(strip(p))
            };
        } else if let Some(rest) = line.strip_prefix("@@ ") {
            let Some(target) = &path else {
                return Err("a hunk (@@) before its file header (+++)".into());
            };
            let (deleted, name) = match target.strip_prefix('\u{0}') {
                Some(old) => (true, old.to_string()),
                None => (false, target.clone()),
            };
            let mut parts = rest.split_whitespace();
            let old = parts.next().ok_or("a hunk header without ranges")?;
            let new = parts.next().ok_or("a hunk header without ranges")?;
            let range = if deleted { old.trim_start_matches('-') } else { new.trim_start_matches('+') };
            let (start, count) = match range.split_once(',') {
                Some((s, c)) => (s.parse::<u32>(), c.parse::<u32>()),
                None => (range.parse::<u32>(), Ok(1)),
            };
            let (Ok(start), Ok(count)) = (start, count) else {
                return Err(format!("hunk header {line:?} is not `@@ -a,b +c,d @@`"));
            };
            let start = start.max(1);
            out.entry(name).or_default().push((start, start + count.max(1) - 1));
        }
    }
    if out.is_empty() {
        return Err("the diff holds no hunk (`@@ -a,b +c,d @@` under `--- a/path` / `+++ b/path`)".into());
    }
    Ok(out)
}

/// Whether a path is a test file by the usual conventions of the languages edgerag reads.
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    let stem = file.split('.').next().unwrap_or(file);
    lower.split('/').any(|seg| matches!(seg, "test" | "tests" | "spec" | "specs" | "__tests__"))
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || file.contains(".test.")
        || file.contains(".spec.")
        || (path
            .rsplit('/')
            .next()
            .unwrap_or(path)
            .split('.')
            .next()
            .is_some_and(|s| s.ends_with("Test") || s.ends_with("Tests")))
}

fn view(r: &RepoSymbol) -> ImpactSymbol {
    ImpactSymbol {
        id: r.id.clone(),
        kind: r.kind.clone(),
        fqn: r.fqn.clone(),
        path: r.path.clone(),
        start_line: r.start_line,
        end_line: r.end_line,
        route: r.route.clone().filter(|s| !s.is_empty()),
        http_method: r.http_method.clone().filter(|s| !s.is_empty()),
    }
}

/// The symbols of `rows` a change of `ranges` touches (see the module docs).
fn touched(rows: &[RepoSymbol], ranges: &BTreeMap<String, Vec<(u32, u32)>>) -> Vec<RepoSymbol> {
    let overlaps = |r: &RepoSymbol| {
        ranges.get(&r.path).is_some_and(|rs| rs.iter().any(|(s, e)| *s <= r.end_line && *e >= r.start_line))
    };
    let mut out: Vec<RepoSymbol> =
        rows.iter().filter(|r| r.parent.is_some() && overlaps(r)).cloned().collect();
    let with_symbols: BTreeSet<&str> = out.iter().map(|r| r.path.as_str()).collect();
    let modules: Vec<RepoSymbol> = rows
        .iter()
        .filter(|r| r.parent.is_none() && !with_symbols.contains(r.path.as_str()) && overlaps(r))
        .cloned()
        .collect();
    out.extend(modules);
    out
}

pub async fn impact(store: &dyn RepoStore, ns: &str, req: &ImpactRequest) -> ToolResult<ImpactResponse> {
    let invalid = |m: String| ToolError::invalid(m);
    let max_tokens = super::budget(req.max_tokens)?;
    let limit = super::page_size(req.limit, DEFAULT_IMPACTED, MAX_IMPACTED)? as usize;
    let offset = req.offset.unwrap_or(0) as usize;
    let depth = req.depth.unwrap_or(MAX_DEPTH);
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(invalid(format!("depth must be 1..={MAX_DEPTH}")));
    }
    let mut ranges: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    match (&req.diff, req.changes.is_empty()) {
        (Some(_), false) => return Err(invalid("give changes or diff, not both".into())),
        (None, true) => {
            return Err(invalid("give changes (paths with line ranges) or a unified diff".into()))
        }
        (Some(diff), true) => {
            if diff.len() > MAX_DIFF_BYTES {
                return Err(invalid(format!("a diff is at most {MAX_DIFF_BYTES} bytes")));
            }
            ranges = diff_ranges(diff).map_err(|e| ToolError::bad_request("INVALID_DIFF", e))?;
        }
        (None, false) => {
            for c in &req.changes {
                let path = super::folder(Some(&c.path))?;
                let (start, end) = (c.start_line.unwrap_or(1), c.end_line.unwrap_or(u32::MAX));
                if start == 0 || end < start {
                    return Err(invalid(format!("{}: lines {start}..{end} are not a range", c.path)));
                }
                ranges.entry(path).or_default().push((start, end));
            }
        }
    }
    let paths: Vec<String> = ranges.keys().cloned().collect();
    let in_files = store.symbols_in(ns, &paths).await?;
    let changed = touched(&in_files, &ranges);
    // Breadth first over the edges into the changed symbols, each symbol reached once.
    let mut reached: HashMap<String, (u32, Vec<ImpactEdge>)> =
        changed.iter().map(|c| (c.id.clone(), (0, Vec::new()))).collect();
    let mut names: HashMap<String, String> = changed.iter().map(|c| (c.id.clone(), c.fqn.clone())).collect();
    let mut frontier: Vec<String> = changed.iter().map(|c| c.id.clone()).collect();
    let mut order: Vec<String> = Vec::new();
    let mut capped = false;
    for level in 1..=depth {
        if frontier.is_empty() {
            break;
        }
        if frontier.len() > MAX_FRONTIER {
            frontier.truncate(MAX_FRONTIER);
            capped = true;
        }
        let mut edges = store.edges_into(ns, &frontier).await?;
        edges.sort_by(|a, b| (&a.dst, &a.path, a.line, &a.src).cmp(&(&b.dst, &b.path, b.line, &b.src)));
        let mut next = Vec::new();
        for e in edges {
            if reached.contains_key(&e.src) {
                continue;
            }
            let mut via = reached.get(&e.dst).map(|(_, v)| v.clone()).unwrap_or_default();
            via.push(ImpactEdge {
                kind: e.kind,
                from: e.src.clone(),
                to: e.dst.clone(),
                path: e.path,
                line: e.line,
            });
            reached.insert(e.src.clone(), (level, via));
            order.push(e.src.clone());
            next.push(e.src);
        }
        frontier = next;
    }
    let impacted_rows = store.symbols_by_id(ns, &order).await?;
    for r in &impacted_rows {
        names.insert(r.id.clone(), r.fqn.clone());
    }
    let mut impacted: Vec<(u32, f64, ImpactSymbol, Vec<ImpactEdge>)> = impacted_rows
        .iter()
        .filter_map(|r| reached.get(&r.id).map(|(d, via)| (*d, r.rank, view(r), via.clone())))
        .collect();
    impacted.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.total_cmp(&a.1))
            .then_with(|| a.2.path.cmp(&b.2.path))
            .then(a.2.start_line.cmp(&b.2.start_line))
            .then_with(|| a.2.id.cmp(&b.2.id))
    });
    let endpoints: Vec<ImpactSymbol> =
        changed.iter().chain(impacted_rows.iter()).filter(|r| r.kind == "ENDPOINT").map(view).collect();
    let tests: Vec<String> = impacted_rows
        .iter()
        .chain(changed.iter())
        .map(|r| r.path.clone())
        .filter(|p| is_test_path(p))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let total = impacted.len();
    let page: Vec<ImpactedSymbol> = impacted
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(depth, _, symbol, via)| ImpactedSymbol {
            symbol,
            depth,
            via: via
                .into_iter()
                .map(|mut e| {
                    e.from = names.get(&e.from).cloned().unwrap_or(e.from);
                    e.to = names.get(&e.to).cloned().unwrap_or(e.to);
                    e
                })
                .collect(),
        })
        .collect();
    let changed_views: Vec<ImpactSymbol> = changed.iter().map(view).collect();
    // Within the budget: impacted symbols first go; if the rest is still over it, the answer keeps
    // only the first changed symbols (endpoints and tests left out).
    let build = |k: usize, truncated: bool| {
        let end = offset + k;
        ImpactResponse {
            changed: changed_views.clone(),
            impacted: page[..k].to_vec(),
            endpoints: endpoints.clone(),
            tests: tests.clone(),
            total: total as u32,
            next_offset: (end < total).then_some(end as u32),
            frontier_capped: capped,
            truncated,
        }
    };
    let k = largest_fitting(page.len(), max_tokens, |k| build(k, true));
    let answer = build(k, k < page.len());
    if super::answer_tokens(&answer) <= max_tokens as usize {
        return Ok(answer);
    }
    let only_changed = |c: usize| ImpactResponse {
        changed: changed_views[..c].to_vec(),
        impacted: Vec::new(),
        endpoints: Vec::new(),
        tests: Vec::new(),
        truncated: true,
        next_offset: (offset < total).then_some(offset as u32),
        ..build(0, true)
    };
    Ok(only_changed(largest_fitting(changed_views.len(), max_tokens, only_changed)))
}

/// `changes` entries as the API takes them, for tests.
#[cfg(test)]
fn change(path: &str, start: u32, end: u32) -> super::ChangedRange {
    super::ChangedRange { path: path.into(), start_line: Some(start), end_line: Some(end) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_unified_diff_gives_the_lines_each_hunk_touches() {
        let diff = "diff --git a/app/util.py b/app/util.py\n--- a/app/util.py\n+++ b/app/util.py\n\
                    @@ -7,3 +7,4 @@ def slugify(text):\n-x\n+y\n+z\n@@ -20 +21,0 @@\n-gone\n\
                    --- a/old.py\n+++ /dev/null\n@@ -1,5 +0,0 @@\n-a\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+n\n";
        let r = diff_ranges(diff).unwrap();
        assert_eq!(r["app/util.py"], vec![(7, 10), (21, 21)]);
        assert_eq!(r["old.py"], vec![(1, 5)]);
        assert_eq!(r["new.py"], vec![(1, 2)]);
        assert!(diff_ranges("not a diff").is_err());
        assert!(diff_ranges("@@ -1 +1 @@\n").is_err());
        assert!(diff_ranges("+++ b/x\n@@ -a +b @@\n").is_err());
    }

    #[test]
    fn test_files_are_recognized_by_the_usual_conventions() {
        for t in [
            "tests/test_util.py",
            "pkg/util_test.go",
            "src/app.test.ts",
            "spec/a_spec.rb",
            "src/FooTest.java",
            "a/__tests__/b.js",
        ] {
            assert!(is_test_path(t), "{t}");
        }
        for p in ["src/util.py", "src/contest.py", "latest/app.rs", "src/Testing.java"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    fn node(id: &str, parent: Option<&str>, path: &str, start: u32, end: u32) -> RepoSymbol {
        RepoSymbol {
            id: id.into(),
            kind: if parent.is_some() { "FUNCTION".into() } else { "MODULE".into() },
            name: id.into(),
            signature: None,
            doc: None,
            fqn: id.into(),
            path: path.into(),
            language: "python".into(),
            start_line: start,
            end_line: end,
            parent: parent.map(str::to_string),
            route: None,
            http_method: None,
            rank: 0.0,
        }
    }

    #[test]
    fn changed_symbols_overlap_the_ranges_and_a_module_counts_only_alone() {
        let rows = vec![
            node("m", None, "a.py", 1, 30),
            node("f", Some("m"), "a.py", 3, 10),
            node("g", Some("m"), "a.py", 12, 20),
            node("n", None, "b.py", 1, 5),
        ];
        let ranges: BTreeMap<String, Vec<(u32, u32)>> =
            [("a.py".to_string(), vec![(9, 12)]), ("b.py".to_string(), vec![(2, 2)])].into();
        let ids: Vec<String> = touched(&rows, &ranges).into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["f", "g", "n"]);
        assert_eq!(change("a.py", 1, 2).start_line, Some(1));
    }
}
