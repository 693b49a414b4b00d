//! `repo.map` (`POST /v1/repos/{owner}/{name}/map`): a map of the repository that fits the
//! caller's `maxTokens` — the most important files, each with its definitions as signatures.
//!
//! 1. Importance is the files' PageRank, computed when a job that changed files finishes (the
//!    worker's `store::ranks`, migration 0101) and read here, not computed per request.
//! 2. A map about something — `paths` globs, `symbols` names, a `query` whose words (identifiers
//!    of 3+ characters) are matched against file paths and symbol names — is ranked by
//!    personalized PageRank instead ([`edgerag_core::graph::rank::personalized`]), computed for
//!    this request over the files' graph (the resolved uses between files, counted): each match
//!    is one unit of teleport mass on its file, so the files asked about and those they use (and
//!    those those use) come first. A file's `rank` is then its personalized rank.
//! 3. Ties go by path, so the same index and arguments always give the same map.
//! 4. Definitions (every symbol but modules and fields) are read for files in that order, a group
//!    at a time, until the map is over the budget; the largest prefix of files that fits is the
//!    answer (a first file alone over the budget keeps its first definitions).
use std::collections::{BTreeMap, BTreeSet, HashMap};

use edgerag_core::graph::rank::{personalized, rounded};

use super::store::{FileRank, RepoStore, RepoSymbol, ToolError, ToolResult};
use super::{answer_tokens, largest_fitting, MapFile, MapRequest, MapResponse, MapSymbol};

const FILES_PER_QUERY: usize = 40;
const MAX_QUERY_CHARS: usize = 2_000;
/// Words of `query` looked up at most.
const MAX_WORDS: usize = 20;
/// A signature longer than this is cut (ending with `…`).
const MAX_SIGNATURE_CHARS: usize = 300;

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

/// Files most important first (ties by path), with the rank to report: without personalization
/// `hits`, the stored ranks; with them, the personalized PageRank over `links` (`(source, target,
/// edges)` between files) with one unit of teleport mass per hit.
fn order(
    files: &[FileRank],
    links: &[(String, String, u32)],
    hits: &BTreeMap<String, u32>,
) -> Vec<(String, f64)> {
    let mut scored: Vec<(f64, String, f64)> = if hits.is_empty() {
        files.iter().map(|f| (f.rank, f.path.clone(), f.rank)).collect()
    } else {
        let index: HashMap<&str, usize> =
            files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
        let votes: Vec<(usize, usize, f64)> = links
            .iter()
            .filter_map(|(s, d, n)| Some((*index.get(s.as_str())?, *index.get(d.as_str())?, f64::from(*n))))
            .collect();
        let teleport: Vec<(usize, f64)> =
            hits.iter().filter_map(|(p, h)| Some((*index.get(p.as_str())?, f64::from(*h)))).collect();
        let ranks = personalized(files.len(), &votes, &teleport);
        files.iter().zip(ranks).map(|(f, r)| (r, f.path.clone(), rounded(r))).collect()
    };
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, p, r)| (p, r)).collect()
}

fn signature(row: &RepoSymbol) -> String {
    let s = row.signature.as_deref().filter(|s| !s.is_empty()).unwrap_or(&row.name);
    match s.char_indices().nth(MAX_SIGNATURE_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

pub async fn map(store: &dyn RepoStore, ns: &str, req: &MapRequest) -> ToolResult<MapResponse> {
    let max_tokens = super::budget(req.max_tokens)?;
    let globs = super::globs(&req.paths)?;
    let query = req.query.as_deref().unwrap_or("");
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::invalid(format!("query is at most {MAX_QUERY_CHARS} characters")));
    }
    let files = store.file_ranks(ns).await?;
    let total = files.len();
    let words = words(query);
    let names: Vec<String> =
        req.symbols.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    let mut hits: BTreeMap<String, u32> = BTreeMap::new();
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
        for r in store.symbols_named(ns, &names, &words).await? {
            *hits.entry(r.path).or_default() += 1;
        }
    }
    let ranked: std::collections::HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    hits.retain(|p, _| ranked.contains(p.as_str()));
    let personalized = !hits.is_empty();
    let links: Vec<(String, String, u32)> = if personalized {
        store.file_links(ns).await?.into_iter().map(|l| (l.src, l.dst, l.edges)).collect()
    } else {
        Vec::new()
    };
    let ordered = order(&files, &links, &hits);
    let mut mapped: Vec<MapFile> = Vec::new();
    for group in ordered.chunks(FILES_PER_QUERY) {
        let paths: Vec<String> = group.iter().map(|(p, _)| p.clone()).collect();
        let rows = store.definitions(ns, &paths).await?;
        let mut by_path: HashMap<&str, Vec<MapSymbol>> = HashMap::new();
        for r in &rows {
            by_path.entry(r.path.as_str()).or_default().push(MapSymbol {
                kind: r.kind.clone(),
                signature: signature(r),
                line: r.start_line,
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
    fn files_go_by_rank_then_path_and_personalization_runs_pagerank_from_the_files_asked_about() {
        let files = ranks(&[("a.py", 0.2), ("b.py", 0.2), ("c.py", 0.5), ("d.py", 0.0), ("e.py", 0.1)]);
        let plain = order(&files, &[], &BTreeMap::new());
        assert_eq!(
            plain.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
            ["c.py", "a.py", "b.py", "e.py", "d.py"]
        );
        // d uses e; asked about d, the map starts with d, then what it uses.
        let links =
            vec![("d.py".to_string(), "e.py".to_string(), 3), ("a.py".to_string(), "c.py".to_string(), 1)];
        let hits = BTreeMap::from([("d.py".to_string(), 1)]);
        let moved = order(&files, &links, &hits);
        assert_eq!(moved.iter().map(|(p, _)| p.as_str()).take(2).collect::<Vec<_>>(), ["d.py", "e.py"]);
        assert!(
            (moved.iter().map(|(_, r)| r).sum::<f64>() - 1.0).abs() < 1e-4,
            "personalized ranks sum to 1"
        );
        assert_eq!(order(&files, &links, &hits), moved, "deterministic");
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
