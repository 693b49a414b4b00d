//! The read tools an agent uses beside search: code navigation — `repo.find_symbol`,
//! `repo.symbol_references`, `repo.read_file_range` — and `repo.list_files`, `repo.outline`,
//! `repo.grep`, `repo.map`, `repo.impact`. Their arguments and answers are the API contract's
//! ([`edgerag_api::navigation`], [`edgerag_api::tools`], re-exported here): also the queries (or
//! bodies) and answers of the worker's `/v1/repos/{owner}/{name}/symbols…`, `…/files/{path}/lines`,
//! `…/tree`, `…/outline`, `…/grep`, `…/map` and `…/impact` routes, and the source of the MCP
//! `tools/list` schemas.
//!
//! Every tool that returns text takes `maxTokens` (navigation aside): the answer's JSON, counted
//! the way `maxContextTokens` counts (`ceil(chars / 4)`), never exceeds it; what did not fit is
//! left out and the answer says `truncated: true`.
//!
//! The tools' logic is here too, one module each ([`navigation`], [`list`], [`outline`],
//! [`grep`], [`map`], [`impact`]), over the [`store::RepoStore`] port: the worker answers them over
//! D1, the in-memory [`memory::MemoryRepo`] natively, and one behaviour suite ([`testing`]) runs
//! on both. [`call`] is the one table from a call's arguments to its tool and answer.
use edgerag_core::chunk::TokenCounter as _;
use serde::Serialize;

pub mod call;
pub mod grep;
pub mod impact;
pub mod list;
pub mod map;
pub mod memory;
pub mod navigation;
pub mod outline;
pub mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use call::{call, ToolAnswer, ToolCall};
pub use edgerag_api::navigation::*;
pub use edgerag_api::tools::*;
pub use store::{RepoStore, ToolError, ToolResult};

/// Smallest `maxTokens` a tool accepts (an empty answer must fit).
pub const MIN_MAX_TOKENS: u32 = 100;
/// Largest `maxTokens` a tool accepts.
pub const MAX_MAX_TOKENS: u32 = 100_000;
/// `maxTokens` when the caller gives none.
pub const DEFAULT_MAX_TOKENS: u32 = 8_000;

/// Tokens of an answer: its JSON counted the way `maxContextTokens` counts (`ceil(chars / 4)`).
pub fn answer_tokens<T: Serialize>(answer: &T) -> usize {
    let text = serde_json::to_string(answer).unwrap_or_default();
    edgerag_core::chunk::CharsPerToken.count(&text)
}

/// The largest `k` in `0..=n` whose answer `build(k)` fits `max_tokens` (answers grow with `k`),
/// found in `O(log n)` builds.
pub fn largest_fitting<T: Serialize>(n: usize, max_tokens: u32, build: impl Fn(usize) -> T) -> usize {
    let fits = |k: usize| answer_tokens(&build(k)) <= max_tokens as usize;
    if fits(n) {
        return n;
    }
    let (mut lo, mut hi) = (0usize, n); // fits(lo) is assumed (the empty answer), fits(hi) is false
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The caller's `maxTokens`, checked: 400 `INVALID_REQUEST` outside `100..=100000`.
pub fn budget(max_tokens: Option<u32>) -> ToolResult<u32> {
    let max = max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if !(MIN_MAX_TOKENS..=MAX_MAX_TOKENS).contains(&max) {
        return Err(ToolError::invalid(format!("maxTokens must be {MIN_MAX_TOKENS}..={MAX_MAX_TOKENS}")));
    }
    Ok(max)
}

/// A page size, checked: `default` when absent, 400 `INVALID_REQUEST` outside `1..=max`.
pub fn page_size(limit: Option<u32>, default: u32, max: u32) -> ToolResult<u32> {
    let limit = limit.unwrap_or(default);
    if limit == 0 || limit > max {
        return Err(ToolError::invalid(format!("limit must be 1..={max}")));
    }
    Ok(limit)
}

/// A repository-relative folder as given (`src/`, `/src`, `src`) → `src`; `..` and empty segments
/// are refused.
pub fn folder(path: Option<&str>) -> ToolResult<String> {
    let trimmed = path.unwrap_or("").trim().trim_matches('/');
    if trimmed.split('/').any(|s| s == ".." || s == ".") || trimmed.contains("//") {
        return Err(ToolError::invalid(format!("{trimmed:?} is not a repository path")));
    }
    Ok(trimmed.to_string())
}

/// Whether `path` is under `folder` (every path is under the empty folder).
pub fn is_under(path: &str, folder: &str) -> bool {
    folder.is_empty() || path.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/'))
}

/// Globs as every part of edgerag reads them ([`edgerag_core::path_glob`]: `*` crosses `/`):
/// 400 `INVALID_REQUEST` naming the first glob that does not parse.
pub fn globs(patterns: &[String]) -> ToolResult<edgerag_core::path_glob::PathGlobs> {
    for p in patterns {
        edgerag_core::path_glob::compile_glob(p)
            .map_err(|e| ToolError::invalid(format!("path glob {p:?}: {e}")))?;
    }
    Ok(edgerag_core::path_glob::PathGlobs::new(patterns))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn folders_are_normalized_and_escapes_refused() {
        assert_eq!(folder(Some("/src/api/")).unwrap(), "src/api");
        assert_eq!(folder(None).unwrap(), "");
        for bad in ["../x", "a/../b", "a//b", "./a"] {
            assert_eq!(folder(Some(bad)).unwrap_err().status(), 400, "{bad}");
        }
        assert!(is_under("src/a.rs", "src") && is_under("src/a/b.rs", "src") && is_under("x", ""));
        assert!(!is_under("src0/a.rs", "src") && !is_under("srca.rs", "src") && !is_under("src", "src"));
    }

    #[test]
    fn budgets_and_page_sizes_are_checked() {
        assert_eq!(budget(None).unwrap(), DEFAULT_MAX_TOKENS);
        assert_eq!(budget(Some(99)).unwrap_err().code(), "INVALID_REQUEST");
        assert_eq!(budget(Some(100_001)).unwrap_err().status(), 400);
        assert_eq!(page_size(None, 20, 50).unwrap(), 20);
        assert!(page_size(Some(0), 20, 50).is_err());
        assert!(page_size(Some(51), 20, 50).is_err());
    }

    #[test]
    fn globs_are_the_search_filters_globs() {
        let g = globs(&["src/*.rs".to_string()]).unwrap();
        assert!(g.is_match("src/lib.rs"));
        assert!(g.is_match("src/a/lib.rs"));
        assert!(!g.is_match("tests/a.rs"));
        assert!(globs(&[]).unwrap().is_match("anything"));
        assert_eq!(globs(&["src/[".to_string()]).unwrap_err().code(), "INVALID_REQUEST");
    }

    #[test]
    fn the_largest_fitting_answer_is_found_and_never_exceeds_the_budget() {
        let build =
            |k: usize| json!({ "items": (0..k).map(|i| format!("item number {i}")).collect::<Vec<_>>() });
        for budget in [5u32, 10, 37, 100, 1000] {
            let k = largest_fitting(200, budget, build);
            assert!(answer_tokens(&build(k)) <= budget as usize || k == 0, "{budget}");
            if k < 200 {
                assert!(answer_tokens(&build(k + 1)) > budget as usize, "{budget}: {k} is not the largest");
            }
        }
        assert_eq!(largest_fitting(3, 100_000, build), 3);
    }

    #[test]
    fn tokens_are_a_quarter_of_the_characters_rounded_up() {
        assert_eq!(answer_tokens(&json!("ab")), 1); // "\"ab\"" is 4 chars
        assert_eq!(answer_tokens(&json!("abc")), 2);
        assert_eq!(answer_tokens(&json!("ééé")), 2); // chars, not bytes
    }
}
