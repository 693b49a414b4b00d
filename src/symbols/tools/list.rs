//! `repo.list_files` (`GET /v1/repos/{owner}/{name}/tree`): the indexed files under a folder or
//! matching a glob, in path order, with language, size and line count, paged.
use serde::Deserialize;

use crate::api::{ListFilesQuery, ListFilesResponse, ListedFile};
use crate::args;
use crate::http::ApiResult;
use crate::store::Arg;
use crate::symbols::RepoDb;

const DEFAULT_FILES: u32 = 200;
const MAX_FILES: u32 = 1_000;

#[derive(Deserialize)]
struct FileRow {
    path: String,
    language: String,
    size: i64,
    lines: Option<i64>,
}

/// The files under `?2..?3` (every file when null) of language `?4` (any when null); a file's
/// line count is its last chunk's last line (file rows do not keep it).
const FILES_SQL: &str = "SELECT f.path, f.language, f.size, \
       (SELECT MAX(c.end_line) FROM chunks c \
         WHERE c.namespace = f.namespace AND c.path = f.path AND c.type <> 'symbol-plan') AS lines \
     FROM files f WHERE f.namespace = ?1 AND (?2 IS NULL OR (f.path >= ?2 AND f.path < ?3)) \
       AND (?4 IS NULL OR f.language = ?4) ORDER BY f.path";

pub async fn list_files(repo: &RepoDb, query: &ListFilesQuery) -> ApiResult<ListFilesResponse> {
    let max_tokens = super::budget(query.max_tokens)?;
    let limit = super::page_size(query.limit, DEFAULT_FILES, MAX_FILES)? as usize;
    let offset = query.offset.unwrap_or(0) as usize;
    let folder = super::folder(query.prefix.as_deref())?;
    let globs = super::globs(&query.glob.iter().cloned().collect::<Vec<_>>())?;
    let language = query.language.as_deref().map(|l| l.trim().to_ascii_lowercase()).filter(|l| !l.is_empty());
    let (low, high) = super::under(&folder).unzip();
    let params: Vec<Arg> =
        args![repo.namespace.as_str(), low.as_deref(), high.as_deref(), language.as_deref()].into();
    let rows: Vec<FileRow> = repo.db.all(FILES_SQL, &params).await?;
    let matching: Vec<ListedFile> = rows
        .into_iter()
        .filter(|r| globs.is_match(&r.path))
        .map(|r| ListedFile {
            path: r.path,
            language: r.language,
            size: r.size.max(0) as u64,
            lines: r.lines.unwrap_or(0).max(0) as u32,
        })
        .collect();
    Ok(page(matching, offset, limit, max_tokens))
}

/// Files `offset..offset + limit`, fewer when the answer would not fit `max_tokens`.
fn page(matching: Vec<ListedFile>, offset: usize, limit: usize, max_tokens: u32) -> ListFilesResponse {
    let total = matching.len();
    let window: Vec<ListedFile> = matching.into_iter().skip(offset).take(limit).collect();
    let build = |k: usize, truncated: bool| {
        let end = offset + k;
        ListFilesResponse {
            files: window[..k].to_vec(),
            total: total as u32,
            next_offset: (end < total).then_some(end as u32),
            truncated,
        }
    };
    let kept = edgerag_search::repo_tools::largest_fitting(window.len(), max_tokens, |k| build(k, true));
    build(kept, kept < window.len())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use edgerag_search::repo_tools::answer_tokens;

    fn files(n: usize) -> Vec<ListedFile> {
        (0..n)
            .map(|i| ListedFile {
                path: format!("src/file_{i:04}.rs"),
                language: "rust".into(),
                size: 10,
                lines: 2,
            })
            .collect()
    }

    #[test]
    fn pages_follow_each_other_with_next_offset() {
        let first = page(files(5), 0, 2, 8_000);
        assert_eq!(first.files.len(), 2);
        assert_eq!((first.total, first.next_offset, first.truncated), (5, Some(2), false));
        let last = page(files(5), 4, 2, 8_000);
        assert_eq!(last.files[0].path, "src/file_0004.rs");
        assert_eq!(last.next_offset, None);
    }

    #[test]
    fn a_page_over_the_budget_is_cut_and_says_so() {
        let cut = page(files(1_000), 0, 1_000, 200);
        assert!(cut.truncated);
        assert!(answer_tokens(&cut) <= 200, "{}", answer_tokens(&cut));
        assert!(!cut.files.is_empty());
        assert_eq!(cut.next_offset, Some(cut.files.len() as u32));
    }
}
