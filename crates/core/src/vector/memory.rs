//! An exact in-memory [`VectorIndex`] for native tests (and the reference the suite checks others
//! against: it is the simplest possible reading of the port's semantics).
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use super::topk::{cosine_with_norm, norm, TopK};
use super::{
    dedup_last_wins, validate_namespace, validate_query, validate_records, VectorError, VectorIndex,
    VectorMatch, VectorQuery, VectorRecord,
};

#[derive(Debug, Default)]
pub struct InMemoryVectorIndex {
    dims: usize,
    namespaces: RefCell<HashMap<String, BTreeMap<String, VectorRecord>>>,
}

impl InMemoryVectorIndex {
    pub fn new(dims: usize) -> Self {
        InMemoryVectorIndex { dims, namespaces: RefCell::default() }
    }

    /// Vectors stored in a namespace.
    pub fn len(&self, namespace: &str) -> usize {
        self.namespaces.borrow().get(namespace).map_or(0, BTreeMap::len)
    }
}

#[async_trait::async_trait(?Send)]
impl VectorIndex for InMemoryVectorIndex {
    fn dims(&self) -> usize {
        self.dims
    }

    fn kind(&self) -> &'static str {
        "in-memory"
    }

    fn applies_path_globs(&self) -> bool {
        true
    }

    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        validate_records(namespace, records, self.dims)?;
        let mut namespaces = self.namespaces.borrow_mut();
        let ns = namespaces.entry(namespace.to_string()).or_default();
        for r in dedup_last_wins(records) {
            ns.insert(r.id.clone(), r.clone());
        }
        Ok(())
    }

    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        validate_query(namespace, query, self.dims)?;
        let namespaces = self.namespaces.borrow();
        let Some(ns) = namespaces.get(namespace) else { return Ok(Vec::new()) };
        let qn = norm(&query.vector);
        let mut top = TopK::new(query.top_k);
        let globs = query.filter.globs();
        for r in ns.values().filter(|r| query.filter.matches_with(&globs, &r.metadata)) {
            let score = cosine_with_norm(&query.vector, qn, &r.values);
            if top.accepts(score, &r.id) {
                top.push(score, r.id.clone(), r.metadata.clone());
            }
        }
        Ok(top
            .into_sorted()
            .into_iter()
            .map(|(score, id, metadata)| VectorMatch { id, score, metadata })
            .collect())
    }

    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        validate_namespace(namespace)?;
        let namespaces = self.namespaces.borrow();
        let Some(ns) = namespaces.get(namespace) else { return Ok(Vec::new()) };
        let mut seen = std::collections::HashSet::new();
        Ok(ids.iter().filter(|id| seen.insert(id.as_str())).filter_map(|id| ns.get(id).cloned()).collect())
    }

    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        validate_namespace(namespace)?;
        if let Some(ns) = self.namespaces.borrow_mut().get_mut(namespace) {
            for id in ids {
                ns.remove(id);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::vector::testing::{block_on, run_suite};

    #[test]
    fn shared_suite_passes() {
        let report = block_on(run_suite(InMemoryVectorIndex::new, "mem"));
        assert!(report.failed.is_empty(), "{report:#?}");
        assert!(report.passed.len() >= 15, "{report:#?}");
    }
}
