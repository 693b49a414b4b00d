//! Which D1 database holds what. `D1_BINDINGS` lists the databases (default `DB`); the first one
//! is the catalog: `namespace_databases` (namespace → binding) and the embedding cache. Everything
//! about one namespace — its files, chunks, FTS rows, local vectors, jobs, staging rows and runs —
//! lives in that namespace's database, because a job's stages and its finish are single D1
//! transactions over those tables. A namespace is assigned a database when it is first written
//! ([`Stores::assign`]: by a hash of its id, so the choice is deterministic) and keeps it; one
//! without a catalog row lives in the catalog database (where every namespace lived before).
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use worker::Env;

use super::{jobs, Db, StoreError, StoreResult};
use crate::store::args;

/// The databases of this deployment and the namespaces resolved so far (per request / batch).
#[derive(Clone)]
pub struct Stores(Rc<Inner>);

struct Inner {
    /// `(binding, database)`, catalog first; never empty.
    databases: Vec<(String, Db)>,
    /// namespace → index into `databases`, as resolved during this request.
    resolved: RefCell<HashMap<String, usize>>,
}

/// The database index a new namespace goes to among `count` databases: a stable hash of its id
/// (BLAKE3, not `std`'s randomly seeded hasher), so every isolate picks the same one.
pub fn pick_database(namespace: &str, count: usize) -> usize {
    if count <= 1 {
        return 0;
    }
    let hash = blake3::hash(namespace.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    (u64::from_le_bytes(first) % count as u64) as usize
}

impl Stores {
    /// Every D1 binding in `D1_BINDINGS` (default `DB`), opened.
    pub fn from_env(env: &Env) -> StoreResult<Stores> {
        let mut databases = Vec::new();
        for name in crate::bindings::d1_bindings(env) {
            let db = env
                .d1(&name)
                .map_err(|e| StoreError(format!("no D1 binding `{name}` (listed in D1_BINDINGS): {e}")))?;
            databases.push((name, Db::new(db)));
        }
        Ok(Stores::new(databases))
    }

    /// `databases` must not be empty ([`Stores::from_env`] always has at least `DB`).
    fn new(databases: Vec<(String, Db)>) -> Stores {
        Stores(Rc::new(Inner { databases, resolved: RefCell::new(HashMap::new()) }))
    }

    /// The same databases (and namespaces resolved so far), their statements charged to `scope`'s
    /// invocation alone (see [`Db::scoped`]).
    pub fn scoped(&self, scope: &crate::ledger::Scope) -> Stores {
        Stores(Rc::new(Inner {
            databases: self.0.databases.iter().map(|(n, db)| (n.clone(), db.scoped(scope))).collect(),
            resolved: RefCell::new(self.0.resolved.borrow().clone()),
        }))
    }

    /// The catalog database (the first binding): namespace assignments, the embedding cache,
    /// dead letters.
    pub fn catalog(&self) -> &Db {
        &self.0.databases[0].1
    }

    /// Every database, catalog first: fan out over these for what spans namespaces.
    pub fn databases(&self) -> impl Iterator<Item = &Db> {
        self.0.databases.iter().map(|(_, db)| db)
    }

    /// `(binding, database)` pairs, catalog first.
    pub fn named(&self) -> &[(String, Db)] {
        &self.0.databases
    }

    fn single(&self) -> bool {
        self.0.databases.len() == 1
    }

    fn index_of(&self, binding: &str, namespace: &str) -> StoreResult<usize> {
        self.0.databases.iter().position(|(name, _)| name == binding).ok_or_else(|| {
            StoreError(format!(
                "namespace {namespace} lives in D1 binding `{binding}`, which is not in D1_BINDINGS"
            ))
        })
    }

    async fn recorded(&self, namespace: &str) -> StoreResult<Option<usize>> {
        if let Some(&i) = self.0.resolved.borrow().get(namespace) {
            return Ok(Some(i));
        }
        #[derive(serde::Deserialize)]
        struct Row {
            binding: String,
        }
        let row: Option<Row> = self
            .catalog()
            .first("SELECT binding FROM namespace_databases WHERE namespace = ?", &args![namespace])
            .await?;
        let Some(row) = row else { return Ok(None) };
        let i = self.index_of(&row.binding, namespace)?;
        self.0.resolved.borrow_mut().insert(namespace.to_string(), i);
        Ok(Some(i))
    }

    /// The database holding `namespace`'s rows (the catalog database when it has none yet).
    pub async fn for_namespace(&self, namespace: &str) -> StoreResult<Db> {
        if self.single() {
            return Ok(self.catalog().clone());
        }
        let i = self.recorded(namespace).await?.unwrap_or(0);
        Ok(self.0.databases[i].1.clone())
    }

    /// The database for writing `namespace`: its recorded one, or — the first time — one chosen
    /// by [`pick_database`] and recorded in the catalog. Namespaces that already have rows in the
    /// catalog database (written before there were several) stay there.
    pub async fn assign(&self, namespace: &str) -> StoreResult<Db> {
        if self.single() {
            return Ok(self.catalog().clone());
        }
        if let Some(i) = self.recorded(namespace).await? {
            return Ok(self.0.databases[i].1.clone());
        }
        let legacy = super::namespaces::get(self.catalog(), namespace).await?.is_some();
        let pick = if legacy { 0 } else { pick_database(namespace, self.0.databases.len()) };
        // Racing requests may pick at once: the first insert wins, everyone reads it back.
        self.catalog()
            .run(
                "INSERT OR IGNORE INTO namespace_databases (namespace, binding, created_at) VALUES (?, ?, ?)",
                &args![namespace, self.0.databases[pick].0.as_str(), &crate::time::now_iso()],
            )
            .await?;
        self.0.resolved.borrow_mut().remove(namespace);
        let i = self.recorded(namespace).await?.unwrap_or(pick);
        Ok(self.0.databases[i].1.clone())
    }

    /// Forget where `namespace` lived (after its rows were deleted).
    pub async fn forget(&self, namespace: &str) -> StoreResult<()> {
        self.0.resolved.borrow_mut().remove(namespace);
        if self.single() {
            return Ok(());
        }
        self.catalog().run("DELETE FROM namespace_databases WHERE namespace = ?", &args![namespace]).await?;
        Ok(())
    }

    /// The database holding job `job_id` (messages carry only the job id). With one database no
    /// query is made; with several each is asked, catalog first.
    pub async fn job_database(&self, job_id: &str) -> StoreResult<Option<Db>> {
        if self.single() {
            return Ok(Some(self.catalog().clone()));
        }
        for db in self.databases() {
            if jobs::get(db, job_id).await?.is_some() {
                return Ok(Some(db.clone()));
            }
        }
        Ok(None)
    }

    /// `namespaces` grouped by their database (in database order; namespaces keep their order).
    pub async fn group(&self, namespaces: &[String]) -> StoreResult<Vec<(Db, Vec<String>)>> {
        if self.single() {
            return Ok(vec![(self.catalog().clone(), namespaces.to_vec())]);
        }
        // One read of the whole catalog instead of one per namespace (global search asks for all).
        #[derive(serde::Deserialize)]
        struct Row {
            namespace: String,
            binding: String,
        }
        let rows: Vec<Row> =
            self.catalog().all("SELECT namespace, binding FROM namespace_databases", &[]).await?;
        let mut placed = HashMap::new();
        for row in rows {
            placed.insert(row.namespace.clone(), self.index_of(&row.binding, &row.namespace)?);
        }
        let mut groups: Vec<Vec<String>> = vec![Vec::new(); self.0.databases.len()];
        for ns in namespaces {
            groups[placed.get(ns).copied().unwrap_or(0)].push(ns.clone());
        }
        Ok(self
            .0
            .databases
            .iter()
            .zip(groups)
            .filter(|(_, g)| !g.is_empty())
            .map(|((_, db), g)| (db.clone(), g))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::pick_database;

    #[test]
    fn a_namespace_always_picks_the_same_database() {
        for ns in ["repo:a/b", "repo:octo/cat", "repo:x/y"] {
            assert_eq!(pick_database(ns, 3), pick_database(ns, 3));
            assert!(pick_database(ns, 3) < 3);
            assert_eq!(pick_database(ns, 1), 0);
        }
    }

    #[test]
    fn namespaces_spread_over_every_database() {
        let mut seen = [0usize; 2];
        for i in 0..200 {
            seen[pick_database(&format!("repo:owner/name-{i}"), 2)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 60), "uneven spread: {seen:?}");
    }
}
