//! `repo.list_files` (`GET /v1/repos/{owner}/{name}/tree`): the indexed files under a folder or
//! matching a glob, in path order, with language, size and line count, paged.
use super::store::{FileFilter, RepoStore, ToolResult};
use super::{ListFilesQuery, ListFilesResponse, ListedFile};

const DEFAULT_FILES: u32 = 200;
const MAX_FILES: u32 = 1_000;

pub async fn list_files(
    store: &dyn RepoStore,
    namespace: &str,
    query: &ListFilesQuery,
) -> ToolResult<ListFilesResponse> {
    let max_tokens = super::budget(query.max_tokens)?;
    let limit = super::page_size(query.limit, DEFAULT_FILES, MAX_FILES)? as usize;
    let offset = query.offset.unwrap_or(0) as usize;
    let folder = super::folder(query.prefix.as_deref())?;
    let globs = super::globs(&query.glob.iter().cloned().collect::<Vec<_>>())?;
    let language = query.language.as_deref().map(|l| l.trim().to_ascii_lowercase()).filter(|l| !l.is_empty());
    let filter = FileFilter { folder: &folder, language: language.as_deref(), from: "", lines: true };
    let rows = store.files(namespace, &filter).await?;
    let matching: Vec<ListedFile> = rows
        .into_iter()
        .filter(|r| globs.is_match(&r.path))
        .map(|r| ListedFile { path: r.path, language: r.language, size: r.size, lines: r.lines })
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
    let kept = super::largest_fitting(window.len(), max_tokens, |k| build(k, true));
    build(kept, kept < window.len())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::repo_tools::answer_tokens;

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
