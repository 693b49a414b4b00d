//! Ranks of a namespace's symbols and files (migration 0101): written after cross-file
//! resolution, from the core's [`edgerag_core::graph::rank::pagerank`], only where they changed.
use std::collections::{BTreeMap, HashMap};

use edgerag_core::graph::FileGraph;
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{json_batches, Db, StoreResult, JSON_BATCH_BYTES};
use crate::args;

/// Symbol ranks and file ranks (the sum of each file's symbols') of resolved `files`, rounded.
pub fn compute(files: &[FileGraph]) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    edgerag_core::graph::rank::stored_ranks(files)
}

#[derive(Deserialize)]
struct Stored {
    id: String,
    rank: f64,
}

/// Entries of `fresh` whose value differs from `stored`.
fn changed<'a>(fresh: &'a BTreeMap<String, f64>, stored: &HashMap<String, f64>) -> Vec<(&'a str, f64)> {
    fresh
        .iter()
        .filter(|(k, v)| {
            stored.get(k.as_str()).is_none_or(|s| (s - **v).abs() > f64::EPSILON * v.abs().max(1e-300))
        })
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

/// Writes the ranks of resolved `files` that changed; returns how many rows were written.
pub async fn write(db: &Db, namespace: &str, files: &[FileGraph]) -> StoreResult<usize> {
    let (nodes, by_file) = compute(files);
    write_ranks(db, namespace, &nodes, &by_file).await
}

/// Stored ranks read per query (in key order, beside the fresh ones).
pub const READ_PAGE_ROWS: usize = 20_000;

/// The entries of `fresh` whose stored value (in `table`'s `key` column) differs, read in pages
/// in key order so a namespace's ranks are never all held twice.
async fn changed_in<'a>(
    db: &Db,
    namespace: &str,
    table: &str,
    key: &str,
    fresh: &'a BTreeMap<String, f64>,
) -> StoreResult<Vec<(&'a str, f64)>> {
    let mut out = Vec::new();
    let mut after = String::new();
    let mut rest = fresh.range::<String, _>(..);
    let mut pending = rest.next();
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
        // The fresh entries up to this page's last key are compared with it.
        let mut in_page = BTreeMap::new();
        while let Some((k, v)) = pending {
            if full && last.as_deref().is_some_and(|l| k.as_str() > l) {
                break;
            }
            in_page.insert(k.clone(), *v);
            pending = rest.next();
        }
        out.extend(changed(&in_page, &stored).into_iter().map(|(k, v)| {
            let (k, _) = fresh.get_key_value(k).expect("a key of fresh");
            (k.as_str(), v)
        }));
        match (full, last) {
            (true, Some(last)) => after = last,
            _ => break,
        }
    }
    Ok(out)
}

/// Writes the symbol ranks `nodes` and file ranks `by_file` that differ from the stored ones;
/// returns how many rows were written.
pub async fn write_ranks(
    db: &Db,
    namespace: &str,
    nodes: &BTreeMap<String, f64>,
    by_file: &BTreeMap<String, f64>,
) -> StoreResult<usize> {
    let node_rows = changed_in(db, namespace, "graph_nodes", "id", nodes).await?;
    let file_rows = changed_in(db, namespace, "graph_files", "path", by_file).await?;
    let written = node_rows.len() + file_rows.len();
    let mut statements: Vec<D1PreparedStatement> = Vec::new();
    // Upserts that only ever update (the rows exist): the JSON drives and each row is found by its
    // key, as `store::graph` writes edge hashes (`UPDATE … FROM json_each` rescans the JSON).
    for batch in json_batches(node_rows.iter().map(|(id, r)| serde_json::json!([id, r])), JSON_BATCH_BYTES) {
        statements.push(db.stmt(
            "INSERT INTO graph_nodes (namespace, id, path, kind, name, fqn, language, start_line, end_line, rank) \
             SELECT ?1, j.i, '', '', '', '', '', 0, 0, j.r \
             FROM (SELECT json_extract(value, '$[0]') AS i, json_extract(value, '$[1]') AS r FROM json_each(?2)) AS j \
             WHERE EXISTS (SELECT 1 FROM graph_nodes g WHERE g.namespace = ?1 AND g.id = j.i) \
             ON CONFLICT (namespace, id) DO UPDATE SET rank = excluded.rank",
            &args![namespace, batch.as_str()],
        )?);
    }
    for batch in json_batches(file_rows.iter().map(|(p, r)| serde_json::json!([p, r])), JSON_BATCH_BYTES) {
        statements.push(db.stmt(
            "INSERT INTO graph_files (namespace, path, graph, rank) \
             SELECT ?1, j.p, '', j.r \
             FROM (SELECT json_extract(value, '$[0]') AS p, json_extract(value, '$[1]') AS r FROM json_each(?2)) AS j \
             WHERE EXISTS (SELECT 1 FROM graph_files g WHERE g.namespace = ?1 AND g.path = j.p) \
             ON CONFLICT (namespace, path) DO UPDATE SET rank = excluded.rank",
            &args![namespace, batch.as_str()],
        )?);
    }
    if !statements.is_empty() {
        db.batch(statements).await?;
    }
    Ok(written)
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
        let fresh: BTreeMap<String, f64> =
            [("a".to_string(), 0.5), ("b".to_string(), 0.25), ("c".to_string(), 0.25)].into();
        let stored: HashMap<String, f64> = [("a".to_string(), 0.5), ("b".to_string(), 0.3)].into();
        assert_eq!(changed(&fresh, &stored), vec![("b", 0.25), ("c", 0.25)]);
    }
}
