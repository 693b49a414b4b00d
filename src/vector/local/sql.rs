//! The local index's SQL pieces that need no database: result rows, the filter as SQL and the page
//! check.
use edgerag_core::vector::{VectorError, VectorFilter, VectorMetadata};
use serde::Deserialize;

use crate::store::numbered_placeholders;

#[derive(Deserialize)]
pub(super) struct PageRow {
    pub(super) n: f64,
    pub(super) last: Option<f64>,
    pub(super) ids: Option<String>,
    pub(super) vs: Option<String>,
    /// The page's paths (a JSON array), read only when the query has path globs.
    #[serde(default)]
    pub(super) paths: Option<String>,
}

/// A page of the unfiltered scan that builds the in-memory copy (JSON arrays: any path is safe).
#[derive(Deserialize)]
pub(super) struct BuildPageRow {
    pub(super) n: f64,
    pub(super) last: Option<f64>,
    pub(super) rowids: Option<String>,
    pub(super) paths: Option<String>,
    pub(super) langs: Option<String>,
    pub(super) tags: Option<String>,
    /// Each row's stored 8-bit copy, or null where it has none.
    pub(super) qs: Option<String>,
    /// The f32 hex of the rows without a stored copy, concatenated in order.
    pub(super) vs: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct GenerationRow {
    pub(super) generation: f64,
    pub(super) logged_from: f64,
}

/// A row changed since a copy was built: its columns are null when it is gone (or of another
/// dimension).
#[derive(Deserialize)]
pub(super) struct ChangeRow {
    pub(super) r: f64,
    pub(super) path: Option<String>,
    pub(super) language: Option<String>,
    pub(super) tags: Option<String>,
    /// The row's stored 8-bit copy; else its f32 hex (`v`); neither when it is gone.
    pub(super) q: Option<String>,
    pub(super) v: Option<String>,
}

/// The tags of a `tags` column (`,a,b,`).
pub(super) fn tags_of_column(column: &str) -> Vec<String> {
    column.split(',').filter(|t| !t.is_empty()).map(str::to_string).collect()
}

#[derive(Deserialize)]
pub(super) struct FullRow {
    pub(super) id: String,
    pub(super) v: String,
    pub(super) metadata: String,
}

/// A row read back by its `rowid` (the in-memory copy's key).
#[derive(Deserialize)]
pub(super) struct KeyedRow {
    pub(super) r: f64,
    pub(super) id: String,
    pub(super) v: String,
    pub(super) metadata: String,
}

#[derive(Deserialize)]
pub(super) struct MetaRow {
    pub(super) id: String,
    pub(super) metadata: String,
}

pub(super) fn parse_metadata(id: &str, json: &str) -> Result<VectorMetadata, VectorError> {
    serde_json::from_str(json)
        .map_err(|e| VectorError::Backend(format!("local index: metadata of {id}: {e}")))
}

/// The filter as SQL over `local_vectors` with its (text) parameters, numbered from `first`.
pub(super) fn filter_sql(filter: &VectorFilter, first: usize) -> (String, Vec<String>) {
    let mut sql = String::new();
    let mut args = Vec::new();
    let mut n = first;
    if !filter.languages.is_empty() {
        sql.push_str(&format!(" AND language IN ({})", numbered_placeholders(n, filter.languages.len())));
        n += filter.languages.len();
        args.extend(filter.languages.iter().cloned());
    }
    if let Some(prefix) = &filter.path_prefix {
        // substr/length count characters on both sides; no LIKE, so `%` and `_` are plain.
        sql.push_str(&format!(" AND substr(path, 1, length(?{n})) = ?{n}"));
        n += 1;
        args.push(prefix.clone());
    }
    if let Some(tag) = &filter.tag {
        sql.push_str(&format!(" AND instr(tags, ?{n}) > 0"));
        args.push(edgerag_core::tags::column_needle(tag));
    }
    (sql, args)
}

/// A page's concatenated hex must hold exactly `n` vectors.
pub(super) fn check_page_hex(vs: &str, n: usize, hex_len: usize) -> Result<(), VectorError> {
    if vs.len() == n * hex_len {
        return Ok(());
    }
    Err(VectorError::Backend(format!(
        "local index: page of {n} vectors has {} hex chars, expected {}",
        vs.len(),
        n * hex_len
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_numbered_sql_parameters() {
        assert_eq!(filter_sql(&VectorFilter::default(), 5), (String::new(), vec![]));
        let filter = VectorFilter {
            languages: vec!["rust".into(), "go".into()],
            path_prefix: Some("src/%_".into()),
            tag: Some("ten".into()),
            // Applied to each page's paths, not in SQL.
            path_globs: vec!["src/**".into()],
        };
        let (sql, args) = filter_sql(&filter, 5);
        assert_eq!(
            sql,
            " AND language IN (?5,?6) AND substr(path, 1, length(?7)) = ?7 AND instr(tags, ?8) > 0"
        );
        assert_eq!(args, ["rust", "go", "src/%_", ",ten,"]);
    }

    #[test]
    fn a_page_must_hold_exactly_its_vectors() {
        assert!(check_page_hex(&"0".repeat(32), 2, 16).is_ok());
        assert!(check_page_hex(&"0".repeat(31), 2, 16).is_err());
    }
}
