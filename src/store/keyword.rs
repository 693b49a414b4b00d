//! Each namespace's own FTS5 index (migration 0060): `kw_<hex of the namespace>`, external content
//! = `chunks`, kept in sync by three triggers on `chunks` limited to that namespace. A keyword query
//! then reads only the namespace's postings and scores with the namespace's own BM25 statistics.
//!
//! The index is created by the batch that writes the namespace's chunks ([`ensure_statements`],
//! placed before the chunk writes), filled from the rows already stored and recorded in
//! `keyword_indexes`, all in that one transaction: a namespace has a `keyword_indexes` row exactly
//! when its index is complete. Until then (rows written before the migration) its rows stay in
//! the shared `chunks_fts`, which keeps serving it.
use worker::D1PreparedStatement;

use super::{placeholders, Arg, Db, StoreResult};
use crate::store::args;

/// The FTS5 table of `namespace`. Hex keeps any namespace a plain identifier, and is reversible,
/// so two namespaces never share a table.
pub fn table(namespace: &str) -> String {
    let mut name = String::with_capacity(3 + namespace.len() * 2);
    name.push_str("kw_");
    for b in namespace.bytes() {
        name.push_str(&format!("{b:02x}"));
    }
    name
}

/// `namespace` as an SQL string literal: triggers cannot take bound parameters.
fn literal(namespace: &str) -> String {
    format!("'{}'", namespace.replace('\'', "''"))
}

/// The statements that make `namespace`'s index exist and complete, in order; no-ops when it
/// already does. Put them in the same batch as, and before, the namespace's chunk writes.
pub fn ensure_sql(namespace: &str) -> Vec<String> {
    let t = table(namespace);
    let ns = literal(namespace);
    let unregistered = format!("NOT EXISTS (SELECT 1 FROM keyword_indexes WHERE namespace = {ns})");
    let mut out = vec![
        format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING fts5(search_text, path, symbol_name, \
             content = 'chunks', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2')"
        ),
        // An index made before its path and name columns held `keyword_terms`: its triggers
        // indexed `path` and `symbol_name`, and rows of that time have no terms, so the
        // `COALESCE` below reads what they were indexed with. Its triggers make way for those
        // below in this batch, before any row is written. (No-ops once gone.)
    ];
    out.extend(OLD_TRIGGERS.iter().map(|suffix| format!("DROP TRIGGER IF EXISTS {t}_{suffix}")));
    out.extend([
        // Rows stored before the namespace had its own index: out of the shared index, into its own.
        format!(
            "INSERT INTO chunks_fts (chunks_fts, rowid, search_text, path, symbol_name) \
             SELECT 'delete', rowid, search_text, path, symbol_name FROM chunks \
             WHERE namespace = {ns} AND {unregistered}"
        ),
        format!(
            "INSERT INTO {t} (rowid, search_text, path, symbol_name) \
             SELECT rowid, search_text, COALESCE(path_terms, path), COALESCE(symbol_terms, symbol_name) FROM chunks WHERE namespace = {ns} AND {unregistered}"
        ),
        format!(
            "CREATE TRIGGER IF NOT EXISTS {t}_insert AFTER INSERT ON chunks WHEN new.namespace = {ns} BEGIN \
             INSERT INTO {t} (rowid, search_text, path, symbol_name) \
             VALUES (new.rowid, new.search_text, COALESCE(new.path_terms, new.path), COALESCE(new.symbol_terms, new.symbol_name)); END"
        ),
        format!(
            "CREATE TRIGGER IF NOT EXISTS {t}_delete AFTER DELETE ON chunks WHEN old.namespace = {ns} BEGIN \
             INSERT INTO {t} ({t}, rowid, search_text, path, symbol_name) \
             VALUES ('delete', old.rowid, old.search_text, COALESCE(old.path_terms, old.path), COALESCE(old.symbol_terms, old.symbol_name)); END"
        ),
        format!(
            "CREATE TRIGGER IF NOT EXISTS {t}_update AFTER UPDATE OF search_text, path, symbol_name, path_terms, symbol_terms ON chunks \
             WHEN old.namespace = {ns} BEGIN \
             INSERT INTO {t} ({t}, rowid, search_text, path, symbol_name) \
             VALUES ('delete', old.rowid, old.search_text, COALESCE(old.path_terms, old.path), COALESCE(old.symbol_terms, old.symbol_name)); \
             INSERT INTO {t} (rowid, search_text, path, symbol_name) \
             VALUES (new.rowid, new.search_text, COALESCE(new.path_terms, new.path), COALESCE(new.symbol_terms, new.symbol_name)); END"
        ),
        format!(
            "INSERT INTO keyword_indexes (namespace, created_at) \
             VALUES ({ns}, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT(namespace) DO NOTHING"
        ),
    ]);
    out
}

/// The triggers' names before the index's path and name columns held `keyword_terms`.
const OLD_TRIGGERS: [&str; 3] = ["ins", "del", "upd"];
/// The triggers' names since.
const TRIGGERS: [&str; 3] = ["insert", "delete", "update"];

/// [`ensure_sql`] as statements of `db`.
pub fn ensure_statements(db: &Db, namespace: &str) -> StoreResult<Vec<D1PreparedStatement>> {
    ensure_sql(namespace).iter().map(|sql| db.stmt(sql, &[])).collect()
}

/// The statements that remove `namespace`'s index. Put them before the namespace's chunks are
/// deleted in the same batch: the rows then leave without a per-row index update, and the shared
/// index's triggers (which skip registered namespaces) do not touch them either; `forget_sql`
/// comes after the chunk delete.
pub fn drop_sql(namespace: &str) -> Vec<String> {
    let t = table(namespace);
    OLD_TRIGGERS
        .iter()
        .chain(&TRIGGERS)
        .map(|suffix| format!("DROP TRIGGER IF EXISTS {t}_{suffix}"))
        .chain([format!("DROP TABLE IF EXISTS {t}")])
        .collect()
}

/// Forget the namespace's index record (after its chunks are deleted).
pub const FORGET_SQL: &str = "DELETE FROM keyword_indexes WHERE namespace = ?1";

pub fn drop_statements(db: &Db, namespace: &str) -> StoreResult<Vec<D1PreparedStatement>> {
    drop_sql(namespace).iter().map(|sql| db.stmt(sql, &[])).collect()
}

pub fn forget_statement(db: &Db, namespace: &str) -> StoreResult<D1PreparedStatement> {
    db.stmt(FORGET_SQL, &args![namespace])
}

/// Which of `namespaces` (at most 100) have their own index in `db`.
pub fn registered_statement(db: &Db, namespaces: &[&str]) -> StoreResult<D1PreparedStatement> {
    let params: Vec<Arg> = namespaces.iter().map(|n| Arg::Text(n)).collect();
    db.stmt(
        &format!(
            "SELECT namespace FROM keyword_indexes WHERE namespace IN ({})",
            placeholders(namespaces.len())
        ),
        &params,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_namespace_gets_its_own_plain_identifier() {
        assert_eq!(table("repo:a/b"), "kw_7265706f3a612f62");
        assert_ne!(table("repo:a/bc"), table("repo:ab/c"));
        assert!(table("repo:o'x/y z").chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    }

    #[test]
    fn a_quote_in_a_namespace_stays_inside_the_trigger_literal() {
        let sql = ensure_sql("repo:o'x/y").join(";\n");
        assert!(sql.contains("new.namespace = 'repo:o''x/y'"), "{sql}");
        assert!(!sql.contains("'repo:o'x/y'"), "{sql}");
    }

    #[test]
    fn the_index_is_recorded_after_it_is_filled_and_its_triggers_exist() {
        let sql = ensure_sql("repo:a/b");
        let pos = |needle: &str| sql.iter().position(|s| s.contains(needle)).expect(needle);
        assert!(pos("CREATE VIRTUAL TABLE") < pos("INSERT INTO kw_"));
        assert!(pos("INSERT INTO kw_") < pos("INSERT INTO keyword_indexes"));
        assert!(pos("_update AFTER UPDATE") < pos("INSERT INTO keyword_indexes"));
        // The triggers of an index made before `keyword_terms` go before any trigger is made.
        assert!(pos("DROP TRIGGER IF EXISTS kw_7265706f3a612f62_upd") < pos("CREATE TRIGGER"));
    }
}
