//! The repository tools an agent uses beside search, one file each: [`list`] (`repo.list_files`),
//! [`outline`] (`repo.outline`), [`grep`] (`repo.grep`), [`map`] (`repo.map`),
//! [`impact`] (`repo.impact`). Each is one function over a checked
//! repository ([`crate::symbols::RepoDb`]), called by the HTTP route and the MCP tool alike, and
//! each answer fits the caller's `maxTokens` ([`budget`]).
pub mod grep;
pub mod impact;
pub mod list;
pub mod map;
pub mod outline;

use edgerag_search::repo_tools::{DEFAULT_MAX_TOKENS, MAX_MAX_TOKENS, MIN_MAX_TOKENS};

use crate::error::ApiError;
use crate::http::ApiResult;

/// The caller's `maxTokens`, checked: 400 `INVALID_REQUEST` outside `100..=100000`.
pub fn budget(max_tokens: Option<u32>) -> ApiResult<u32> {
    let max = max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if !(MIN_MAX_TOKENS..=MAX_MAX_TOKENS).contains(&max) {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("maxTokens must be {MIN_MAX_TOKENS}..={MAX_MAX_TOKENS}"),
        ));
    }
    Ok(max)
}

/// A page size, checked: `default` when absent, 400 `INVALID_REQUEST` outside `1..=max`.
pub fn page_size(limit: Option<u32>, default: u32, max: u32) -> ApiResult<u32> {
    let limit = limit.unwrap_or(default);
    if limit == 0 || limit > max {
        return Err(ApiError::bad_request("INVALID_REQUEST", format!("limit must be 1..={max}")));
    }
    Ok(limit)
}

/// A repository-relative folder as given (`src/`, `/src`, `src`) → `src`; `..` and empty segments
/// are refused.
pub fn folder(path: Option<&str>) -> ApiResult<String> {
    let trimmed = path.unwrap_or("").trim().trim_matches('/');
    if trimmed.split('/').any(|s| s == ".." || s == ".") || trimmed.contains("//") {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("{trimmed:?} is not a repository path"),
        ));
    }
    Ok(trimmed.to_string())
}

/// The bounds of the paths under `folder` for a range scan: `[folder/, folder0)` (`0` follows
/// `/` in byte order); the whole repository for an empty folder.
pub fn under(folder: &str) -> Option<(String, String)> {
    (!folder.is_empty()).then(|| (format!("{folder}/"), format!("{folder}0")))
}

/// Globs as every part of edgerag reads them ([`edgerag_core::path_glob`]: `*` crosses `/`):
/// 400 `INVALID_REQUEST` naming the first glob that does not parse.
pub fn globs(patterns: &[String]) -> ApiResult<edgerag_core::path_glob::PathGlobs> {
    for p in patterns {
        edgerag_core::path_glob::compile_glob(p)
            .map_err(|e| ApiError::bad_request("INVALID_REQUEST", format!("path glob {p:?}: {e}")))?;
    }
    Ok(edgerag_core::path_glob::PathGlobs::new(patterns))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn folders_are_normalized_and_escapes_refused() {
        assert_eq!(folder(Some("/src/api/")).unwrap(), "src/api");
        assert_eq!(folder(None).unwrap(), "");
        for bad in ["../x", "a/../b", "a//b", "./a"] {
            assert_eq!(folder(Some(bad)).unwrap_err().status, 400, "{bad}");
        }
        assert_eq!(under("src"), Some(("src/".into(), "src0".into())));
        assert_eq!(under(""), None);
    }

    #[test]
    fn budgets_and_page_sizes_are_checked() {
        assert_eq!(budget(None).unwrap(), DEFAULT_MAX_TOKENS);
        assert_eq!(budget(Some(99)).unwrap_err().code, "INVALID_REQUEST");
        assert_eq!(budget(Some(100_001)).unwrap_err().status, 400);
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
        assert_eq!(globs(&["src/[".to_string()]).unwrap_err().code, "INVALID_REQUEST");
    }
}
