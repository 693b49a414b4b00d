//! `repo.outline` (`GET /v1/repos/{owner}/{name}/outline`), from the code graph: a file's symbols
//! as a tree (each under its parent), or a folder's files with their top-level symbols.
//!
//! A file's own `MODULE` node (the one without a parent) is the root of its tree and is not
//! listed; its children are the file's top-level symbols. Within the token budget a file keeps
//! its symbols in line order (a prefix of the tree, parents before their children); a folder
//! keeps whole files, at least the first (cut like a file when it alone is over the budget).
use std::collections::{HashMap, HashSet};

use super::largest_fitting;
use super::store::{FileFilter, RepoStore, RepoSymbol, ToolError, ToolResult};
use super::{OutlineFile, OutlineKind, OutlineQuery, OutlineResponse, OutlineSymbol};

/// Files whose symbols are read per store call.
const PATHS_PER_QUERY: usize = 90;

pub async fn outline(store: &dyn RepoStore, ns: &str, query: &OutlineQuery) -> ToolResult<OutlineResponse> {
    let max_tokens = super::budget(query.max_tokens)?;
    let path = super::folder(query.path.as_deref())?;
    if !path.is_empty() {
        if let Some(file) = store.file(ns, &path).await? {
            let rows = store.symbols_in(ns, std::slice::from_ref(&path)).await?;
            return Ok(file_outline(path.clone(), file.language, &rows, max_tokens));
        }
    }
    let offset = query.offset.unwrap_or(0) as usize;
    let files = store.files(ns, &FileFilter { folder: &path, ..Default::default() }).await?;
    if files.is_empty() {
        return Err(ToolError::not_found(
            "PATH_NOT_FOUND",
            format!("{path:?} is neither an indexed file nor a folder of one"),
        ));
    }
    let total = files.len();
    // Read the files' top-level symbols a group at a time, until what was read is over the budget.
    let mut outlined: Vec<OutlineFile> = Vec::new();
    for group in files[offset.min(total)..].chunks(PATHS_PER_QUERY) {
        let paths: Vec<String> = group.iter().map(|f| f.path.clone()).collect();
        let rows = store.symbols_in(ns, &paths).await?;
        // A top-level symbol's parent is its file's own module node.
        let modules: HashSet<(&str, &str)> =
            rows.iter().filter(|r| r.parent.is_none()).map(|r| (r.path.as_str(), r.id.as_str())).collect();
        let mut by_path: HashMap<&str, Vec<OutlineSymbol>> = HashMap::new();
        for row in &rows {
            if row.parent.as_deref().is_some_and(|p| modules.contains(&(row.path.as_str(), p))) {
                by_path.entry(row.path.as_str()).or_default().push(symbol(row));
            }
        }
        for f in group {
            let symbols = by_path.remove(f.path.as_str()).unwrap_or_default();
            outlined.push(OutlineFile { path: f.path.clone(), language: f.language.clone(), symbols });
        }
        let so_far = folder_answer(&path, &outlined, outlined.len(), offset, total);
        if super::answer_tokens(&so_far) > max_tokens as usize {
            break;
        }
    }
    Ok(fit_folder(path, outlined, offset, total, max_tokens))
}

fn symbol(row: &RepoSymbol) -> OutlineSymbol {
    OutlineSymbol {
        id: row.id.clone(),
        kind: row.kind.clone(),
        name: row.name.clone(),
        signature: row.signature.clone().filter(|s| !s.is_empty()),
        start_line: row.start_line,
        end_line: row.end_line,
        doc: row
            .doc
            .as_deref()
            .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
            .map(str::to_string),
        children: Vec::new(),
    }
}

/// The first `k` symbols of `rows` (in line order, the file's own module node excluded) as a
/// tree: each under its parent when the parent is kept, at the top otherwise.
fn tree(rows: &[RepoSymbol], k: usize) -> Vec<OutlineSymbol> {
    let listed: Vec<&RepoSymbol> = rows.iter().filter(|r| r.parent.is_some()).take(k).collect();
    let index: HashMap<&str, usize> = listed.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
    // Children of each kept symbol, then build bottom-up (a child always follows its parent).
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); listed.len()];
    let mut roots = Vec::new();
    for (i, r) in listed.iter().enumerate() {
        match r.parent.as_deref().and_then(|p| index.get(p)) {
            Some(&p) if p < i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    fn build(i: usize, listed: &[&RepoSymbol], children: &[Vec<usize>]) -> OutlineSymbol {
        let mut s = symbol(listed[i]);
        s.children = children[i].iter().map(|&c| build(c, listed, children)).collect();
        s
    }
    roots.into_iter().map(|i| build(i, &listed, &children)).collect()
}

fn file_outline(path: String, language: String, rows: &[RepoSymbol], max_tokens: u32) -> OutlineResponse {
    let n = rows.iter().filter(|r| r.parent.is_some()).count();
    let build = |k: usize| OutlineResponse {
        path: path.clone(),
        kind: OutlineKind::File,
        files: vec![OutlineFile { path: path.clone(), language: language.clone(), symbols: tree(rows, k) }],
        next_offset: None,
        truncated: k < n,
    };
    build(largest_fitting(n, max_tokens, |k| {
        let mut a = build(k);
        a.truncated = true;
        a
    }))
}

fn folder_answer(
    path: &str,
    outlined: &[OutlineFile],
    k: usize,
    offset: usize,
    total: usize,
) -> OutlineResponse {
    let end = offset + k;
    OutlineResponse {
        path: path.to_string(),
        kind: OutlineKind::Folder,
        files: outlined[..k].to_vec(),
        next_offset: (end < total).then_some(end as u32),
        truncated: true,
    }
}

fn fit_folder(
    path: String,
    mut outlined: Vec<OutlineFile>,
    offset: usize,
    total: usize,
    max_tokens: u32,
) -> OutlineResponse {
    let k =
        largest_fitting(outlined.len(), max_tokens, |k| folder_answer(&path, &outlined, k, offset, total));
    if k > 0 || outlined.is_empty() {
        let mut answer = folder_answer(&path, &outlined, k, offset, total);
        answer.truncated = k < outlined.len();
        return answer;
    }
    // Even the first file alone is over the budget: its first symbols.
    let first = outlined.swap_remove(0);
    let with = |s: usize| {
        let file = OutlineFile { symbols: first.symbols[..s].to_vec(), ..first.clone() };
        folder_answer(&path, &[file], 1, offset, total)
    };
    let s = largest_fitting(first.symbols.len(), max_tokens, with);
    with(s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::repo_tools::answer_tokens;

    fn row(id: &str, kind: &str, parent: Option<&str>, start: u32, end: u32) -> RepoSymbol {
        RepoSymbol {
            id: id.into(),
            kind: kind.into(),
            name: format!("name_{id}"),
            fqn: format!("name_{id}"),
            route: None,
            http_method: None,
            rank: 0.0,
            path: "a.py".into(),
            language: "python".into(),
            start_line: start,
            end_line: end,
            signature: Some(format!("def name_{id}()")),
            doc: Some("\nFirst line.\nSecond line.".into()),
            parent: parent.map(str::to_string),
        }
    }

    fn rows() -> Vec<RepoSymbol> {
        vec![
            row("m", "MODULE", None, 1, 40),
            row("c", "CLASS", Some("m"), 1, 20),
            row("c1", "METHOD", Some("c"), 2, 10),
            row("c2", "METHOD", Some("c"), 11, 20),
            row("f", "FUNCTION", Some("m"), 22, 40),
        ]
    }

    #[test]
    fn a_file_is_a_tree_of_its_symbols_without_its_own_module() {
        let a = file_outline("a.py".into(), "python".into(), &rows(), 8_000);
        let top = &a.files[0].symbols;
        assert_eq!(top.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["c", "f"]);
        assert_eq!(top[0].children.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["c1", "c2"]);
        assert_eq!(top[0].doc.as_deref(), Some("First line."));
        assert!(!a.truncated);
    }

    #[test]
    fn a_file_over_the_budget_keeps_its_first_symbols_and_says_so() {
        let full = answer_tokens(&file_outline("a.py".into(), "python".into(), &rows(), 8_000));
        let budget = (full - 20) as u32;
        let a = file_outline("a.py".into(), "python".into(), &rows(), budget);
        assert!(a.truncated);
        assert!(answer_tokens(&a) <= budget as usize);
        assert_eq!(a.files[0].symbols[0].id, "c");
    }

    #[test]
    fn a_folder_keeps_whole_files_in_budget_or_cuts_the_first() {
        let file = |p: &str| OutlineFile {
            path: p.into(),
            language: "python".into(),
            symbols: tree(&rows(), 10)
                .into_iter()
                .map(|mut s| {
                    s.children.clear();
                    s
                })
                .collect(),
        };
        let files = vec![file("a.py"), file("b.py"), file("c.py")];
        let one = answer_tokens(&folder_answer("", &files, 1, 0, 3));
        let a = fit_folder(String::new(), files.clone(), 0, 3, one as u32 + 5);
        assert_eq!(a.files.len(), 1);
        assert_eq!((a.next_offset, a.truncated), (Some(1), true));
        let tiny = fit_folder(String::new(), files.clone(), 0, 3, (one - 10) as u32);
        assert_eq!(tiny.files.len(), 1);
        assert!(tiny.files[0].symbols.len() < 2);
        assert!(answer_tokens(&tiny) <= one - 10);
        let all = fit_folder(String::new(), files, 0, 3, 8_000);
        assert_eq!((all.files.len(), all.next_offset, all.truncated), (3, None, false));
    }
}
