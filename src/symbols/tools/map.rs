//! `repo.map` (`POST /v1/repos/{owner}/{name}/map`): a map of the repository that fits the
//! caller's `maxTokens` — the most important files, each with its definitions as signatures.
//!
//! 1. Importance is the files' PageRank, computed when a job that changed files finishes
//!    ([`crate::store::ranks`], migration 0101) and read here in one query, not per request.
//! 2. Personalization moves files first without re-running PageRank: a file matching one of
//!    `paths`, defining one of `symbols`, or holding `query`'s words in its path or symbol names
//!    scores `(rank + 1 / files) × (1 + 10 × hits)`; others score their rank. Ties go by path, so
//!    the same index and arguments always give the same map.
//! 3. Definitions (every symbol but modules and fields) are read for files in that order, a group
//!    at a time, until the map is over the budget; the largest prefix of files that fits is the
//!    answer (a first file alone over the budget keeps its first definitions).
use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;

use crate::api::{MapFile, MapRequest, MapResponse, MapSymbol};
use crate::args;
use crate::error::ApiError;
use crate::http::ApiResult;
use crate::store::{numbered_placeholders, Arg};
use crate::symbols::RepoDb;

use edgerag_search::repo_tools::{answer_tokens, largest_fitting};

const FILES_PER_QUERY: usize = 40;
const MAX_QUERY_CHARS: usize = 2_000;
/// Words of `query` looked up at most.
const MAX_WORDS: usize = 20;
/// A signature longer than this is cut (ending with `…`).
const MAX_SIGNATURE_CHARS: usize = 300;
/// Weight of one personalization hit.
const BOOST: f64 = 10.0;

#[derive(Deserialize)]
struct FileRank {
    path: String,
    rank: f64,
}

#[derive(Deserialize)]
struct PathRow {
    path: String,
}

#[derive(Deserialize)]
struct SymbolRow {
    path: String,
    kind: String,
    name: String,
    signature: Option<String>,
    start_line: i64,
}

/// The words of a question worth looking up: identifier-like, 3+ characters, lowercased, in order
/// of first appearance.
fn words(query: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| seen.insert(w.clone()))
        .take(MAX_WORDS)
        .collect()
}

/// Files in map order: personalization `hits` per path first (see the module docs), then rank,
/// then path.
fn order(files: Vec<FileRank>, hits: &HashMap<String, u32>) -> Vec<(String, f64)> {
    let n = files.len().max(1) as f64;
    let mut scored: Vec<(f64, String, f64)> = files
        .into_iter()
        .map(|f| {
            let h = hits.get(&f.path).copied().unwrap_or(0);
            let score = if h == 0 { f.rank } else { (f.rank + 1.0 / n) * (1.0 + BOOST * f64::from(h)) };
            (score, f.path, f.rank)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, p, r)| (p, r)).collect()
}

fn signature(row: &SymbolRow) -> String {
    let s = row.signature.as_deref().filter(|s| !s.is_empty()).unwrap_or(&row.name);
    match s.char_indices().nth(MAX_SIGNATURE_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

pub async fn map(repo: &RepoDb, req: &MapRequest) -> ApiResult<MapResponse> {
    let max_tokens = super::budget(req.max_tokens)?;
    let globs = super::globs(&req.paths)?;
    let query = req.query.as_deref().unwrap_or("");
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("query is at most {MAX_QUERY_CHARS} characters"),
        ));
    }
    let ns = repo.namespace.as_str();
    let files: Vec<FileRank> = repo
        .db
        .all("SELECT path, rank FROM graph_files WHERE namespace = ?1 ORDER BY rank DESC, path", &args![ns])
        .await?;
    let total = files.len();
    let words = words(query);
    let names: Vec<&str> = req.symbols.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect();
    let mut hits: HashMap<String, u32> = HashMap::new();
    if !req.paths.is_empty() {
        for f in files.iter().filter(|f| globs.is_match(&f.path)) {
            *hits.entry(f.path.clone()).or_default() += 1;
        }
    }
    for f in &files {
        let lower = f.path.to_lowercase();
        let n = words.iter().filter(|w| lower.contains(w.as_str())).count() as u32;
        if n > 0 {
            *hits.entry(f.path.clone()).or_default() += n;
        }
    }
    if !names.is_empty() || !words.is_empty() {
        let rows: Vec<PathRow> = repo
            .db
            .all(
                "SELECT path FROM graph_nodes WHERE namespace = ?1 AND kind <> 'MODULE' AND \
                 (name IN (SELECT value FROM json_each(?2)) OR lower(name) IN (SELECT value FROM json_each(?3)))",
                &args![
                    ns,
                    serde_json::to_string(&names).unwrap_or_default().as_str(),
                    serde_json::to_string(&words).unwrap_or_default().as_str()
                ],
            )
            .await?;
        for r in rows {
            *hits.entry(r.path).or_default() += 1;
        }
    }
    let personalized = !hits.is_empty();
    let ordered = order(files, &hits);
    let mut mapped: Vec<MapFile> = Vec::new();
    for group in ordered.chunks(FILES_PER_QUERY) {
        let mut params: Vec<Arg> = vec![Arg::from(ns)];
        params.extend(group.iter().map(|(p, _)| Arg::from(p.as_str())));
        let sql = format!(
            "SELECT path, kind, name, signature, start_line FROM graph_nodes WHERE namespace = ?1 \
             AND path IN ({}) AND kind NOT IN ('MODULE', 'FIELD') ORDER BY path, start_line, id",
            numbered_placeholders(2, group.len())
        );
        let rows: Vec<SymbolRow> = repo.db.all(&sql, &params).await?;
        let mut by_path: HashMap<&str, Vec<MapSymbol>> = HashMap::new();
        for r in &rows {
            by_path.entry(r.path.as_str()).or_default().push(MapSymbol {
                kind: r.kind.clone(),
                signature: signature(r),
                line: r.start_line.max(0) as u32,
            });
        }
        for (path, rank) in group {
            let symbols = by_path.remove(path.as_str()).unwrap_or_default();
            mapped.push(MapFile { path: path.clone(), rank: *rank, symbols });
        }
        if answer_tokens(&answer(&mapped, total, personalized, true)) > max_tokens as usize {
            break;
        }
    }
    Ok(fit(mapped, total, personalized, max_tokens))
}

fn answer(files: &[MapFile], total: usize, personalized: bool, truncated: bool) -> MapResponse {
    MapResponse { files: files.to_vec(), files_total: total as u32, personalized, truncated }
}

fn fit(mapped: Vec<MapFile>, total: usize, personalized: bool, max_tokens: u32) -> MapResponse {
    let k = largest_fitting(mapped.len(), max_tokens, |k| answer(&mapped[..k], total, personalized, true));
    if k > 0 || mapped.is_empty() {
        return answer(&mapped[..k], total, personalized, k < total);
    }
    let first = &mapped[0];
    let with = |s: usize| {
        let file = MapFile { symbols: first.symbols[..s].to_vec(), ..first.clone() };
        answer(&[file], total, personalized, true)
    };
    let s = largest_fitting(first.symbols.len(), max_tokens, with);
    let cut = with(s);
    if answer_tokens(&cut) <= max_tokens as usize {
        cut
    } else {
        answer(&[], total, personalized, true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ranks(list: &[(&str, f64)]) -> Vec<FileRank> {
        list.iter().map(|(p, r)| FileRank { path: p.to_string(), rank: *r }).collect()
    }

    #[test]
    fn files_go_by_rank_then_path_and_hits_move_a_file_first() {
        let files = [("b.py", 0.2), ("a.py", 0.2), ("c.py", 0.5), ("d.py", 0.0)];
        let plain = order(ranks(&files), &HashMap::new());
        assert_eq!(
            plain.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
            ["c.py", "a.py", "b.py", "d.py"]
        );
        let hits = HashMap::from([("d.py".to_string(), 1)]);
        let moved = order(ranks(&files), &hits);
        assert_eq!(moved[0].0, "d.py");
        assert_eq!(moved[0].1, 0.0, "the reported rank stays the PageRank");
    }

    #[test]
    fn question_words_are_identifiers_of_three_characters_or_more() {
        assert_eq!(
            words("How does slugify() handle a User_name? slugify!"),
            ["how", "does", "slugify", "handle", "user_name"]
        );
        assert!(words("a b c").is_empty());
    }

    #[test]
    fn a_map_is_the_largest_that_fits_and_never_over_the_budget() {
        let file = |p: &str| MapFile {
            path: p.into(),
            rank: 0.1,
            symbols: (1..=5)
                .map(|i| MapSymbol { kind: "FUNCTION".into(), signature: format!("def f{i}(x)"), line: i })
                .collect(),
        };
        let files: Vec<MapFile> = (0..20).map(|i| file(&format!("src/f{i}.py"))).collect();
        for budget in [100u32, 200, 500, 2_000] {
            let m = fit(files.clone(), 20, false, budget);
            assert!(answer_tokens(&m) <= budget as usize, "{budget}");
            assert!(!m.files.is_empty());
            if m.files.len() < 20 {
                assert!(m.truncated);
            }
        }
        let all = fit(files, 20, false, 100_000);
        assert_eq!((all.files.len(), all.truncated), (20, false));
    }
}
