//! Ranks of a namespace's symbols and files (migration 0101): written after cross-file
//! resolution, from the core's [`edgerag_core::graph::rank::pagerank`], only where they changed.
use std::collections::{BTreeMap, HashMap};

use edgerag_core::graph::FileGraph;
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{json_batches, Db, StoreResult, JSON_BATCH_BYTES};
use crate::store::args;

/// Symbol ranks and file ranks (the sum of each file's symbols') of resolved `files`, rounded.
pub fn compute(files: &[FileGraph]) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    edgerag_core::graph::rank::stored_ranks(files)
}

#[derive(Deserialize)]
struct Stored {
    id: String,
    rank: f64,
}

/// Whether `fresh` differs from the `stored` rank (none stored: it does).
fn differs(fresh: f64, stored: Option<f64>) -> bool {
    stored.is_none_or(|s| (s - fresh).abs() > f64::EPSILON * fresh.abs().max(1e-300))
}

/// Writes the ranks of resolved `files` that changed; returns how many rows were written.
pub async fn write(db: &Db, namespace: &str, files: &[FileGraph]) -> StoreResult<usize> {
    let (nodes, by_file) = compute(files);
    write_ranks(db, namespace, nodes.iter().map(|(k, v)| (k, *v)), by_file.iter().map(|(k, v)| (k, *v))).await
}

/// Stored ranks read per query (in key order, beside the fresh ones).
pub const READ_PAGE_ROWS: usize = 20_000;

/// Writes the entries of `fresh` (in key order) whose stored value (in `table`'s `key` column)
/// differs: the stored ones are read in pages in key order, and each page's changed entries
/// written before the next is read, so neither the stored nor the fresh ranks are ever all held.
/// Returns how many rows were written.
async fn write_changed<K: AsRef<str>>(
    db: &Db,
    namespace: &str,
    table: &str,
    key: &str,
    fresh: impl Iterator<Item = (K, f64)>,
) -> StoreResult<usize> {
    let mut fresh = fresh.peekable();
    let mut written = 0;
    let mut after = String::new();
    loop {
        let page: Vec<Stored> = db
            .all(
                &format!(
                    "SELECT {key} AS id, rank FROM {table} WHERE namespace = ?1 AND {key} > ?2 ORDER BY {key} LIMIT ?3"
                ),
                &args![namespace, after.as_str(), READ_PAGE_ROWS],
            )
            .await?;
        let full = page.len() == READ_PAGE_ROWS;
        let last = page.last().map(|r| r.id.clone());
        let stored: HashMap<String, f64> = page.into_iter().map(|r| (r.id, r.rank)).collect();
        // The fresh entries up to this page's last key are compared with it (all that are left
        // after the last page).
        let mut rows = Vec::new();
        while let Some((k, v)) = fresh.peek() {
            let k = k.as_ref();
            if full && last.as_deref().is_some_and(|l| k > l) {
                break;
            }
            if differs(*v, stored.get(k).copied()) {
                rows.push(serde_json::json!([k, v]));
            }
            fresh.next();
        }
        drop(stored);
        written += rows.len();
        if !rows.is_empty() {
            db.batch(rank_statements(db, namespace, table, rows)?).await?;
        }
        match (full, last) {
            (true, Some(last)) => after = last,
            _ => break,
        }
    }
    Ok(written)
}

/// Statements writing `rows` (`[key, rank]`) into `table` (`graph_nodes` by id, `graph_files`
/// by path). Upserts that only ever update (the rows exist): the JSON drives and each row is
/// found by its key, as `store::graph` writes edge hashes (`UPDATE … FROM json_each` rescans the
/// JSON).
fn rank_statements(
    db: &Db,
    namespace: &str,
    table: &str,
    rows: Vec<serde_json::Value>,
) -> StoreResult<Vec<D1PreparedStatement>> {
    let sql = if table == "graph_nodes" {
        "INSERT INTO graph_nodes (namespace, id, path, kind, name, fqn, language, start_line, end_line, rank) \
         SELECT ?1, j.i, '', '', '', '', '', 0, 0, j.r \
         FROM (SELECT json_extract(value, '$[0]') AS i, json_extract(value, '$[1]') AS r FROM json_each(?2)) AS j \
         WHERE EXISTS (SELECT 1 FROM graph_nodes g WHERE g.namespace = ?1 AND g.id = j.i) \
         ON CONFLICT (namespace, id) DO UPDATE SET rank = excluded.rank"
    } else {
        "INSERT INTO graph_files (namespace, path, graph, rank) \
         SELECT ?1, j.p, '', j.r \
         FROM (SELECT json_extract(value, '$[0]') AS p, json_extract(value, '$[1]') AS r FROM json_each(?2)) AS j \
         WHERE EXISTS (SELECT 1 FROM graph_files g WHERE g.namespace = ?1 AND g.path = j.p) \
         ON CONFLICT (namespace, path) DO UPDATE SET rank = excluded.rank"
    };
    json_batches(rows, JSON_BATCH_BYTES)
        .iter()
        .map(|batch| db.stmt(sql, &args![namespace, batch.as_str()]))
        .collect()
}

/// Writes the symbol ranks `nodes` (in id order) and file ranks `by_file` (in path order) that
/// differ from the stored ones, a page of stored rows at a time; returns how many rows were
/// written.
pub async fn write_ranks<N: AsRef<str>, F: AsRef<str>>(
    db: &Db,
    namespace: &str,
    nodes: impl Iterator<Item = (N, f64)>,
    by_file: impl Iterator<Item = (F, f64)>,
) -> StoreResult<usize> {
    let nodes = write_changed(db, namespace, "graph_nodes", "id", nodes).await?;
    let files = write_changed(db, namespace, "graph_files", "path", by_file).await?;
    Ok(nodes + files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgerag_core::graph::rank::rounded;

    #[test]
    fn ranks_keep_six_significant_digits() {
        assert_eq!(rounded(0.123_456_789), 0.123_457);
        assert_eq!(rounded(0.000_012_345_678), 0.000_012_345_7);
        assert_eq!(rounded(0.0), 0.0);
        assert_eq!(rounded(f64::NAN), 0.0);
    }

    #[test]
    fn only_changed_ranks_are_written() {
        assert!(!differs(0.5, Some(0.5)));
        assert!(differs(0.25, Some(0.3)));
        assert!(differs(0.25, None), "a rank never stored is written");
        assert!(!differs(0.0, Some(0.0)));
        assert!(differs(1e-7, Some(1.1e-7)), "small ranks are compared relative to their size");
    }
}
