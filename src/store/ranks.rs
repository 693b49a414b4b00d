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
    let stored_nodes: Vec<Stored> =
        db.all("SELECT id, rank FROM graph_nodes WHERE namespace = ?1", &args![namespace]).await?;
    let stored_files: Vec<Stored> =
        db.all("SELECT path AS id, rank FROM graph_files WHERE namespace = ?1", &args![namespace]).await?;
    let as_map = |rows: Vec<Stored>| rows.into_iter().map(|r| (r.id, r.rank)).collect::<HashMap<_, _>>();
    let node_rows = changed(&nodes, &as_map(stored_nodes));
    let file_rows = changed(&by_file, &as_map(stored_files));
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
