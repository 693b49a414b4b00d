//! The in-memory copies of namespaces a local vector index keeps between queries: at most
//! `budget` bytes of [`QuantizedVectors`] for all namespaces together, least recently used
//! evicted first. A copy is trusted only at the namespace's *generation* it was built at (a
//! counter the store bumps on every write); at a later generation the copy is *stale*: the caller
//! either brings it up to date with the rows that changed since ([`GenerationCache::refresh`]) or
//! drops it and builds a new one ([`GenerationCache::drop_copy`] first, so that the rebuild never
//! holds two copies). A namespace larger than the budget is remembered as too big until its
//! generation changes (it is scanned instead).
//!
//! Copies are lent out only inside a call ([`GenerationCache::with_copy`]): nothing holds one
//! across an await, so a refresh can change a copy in place.
use std::collections::HashMap;

use super::quantized::{FilterFields, QuantizedRow, QuantizedVectors};

/// What a lookup found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookup {
    /// A copy at this generation.
    Hit,
    /// A copy built at an older generation, `built_at`: refresh it or drop it.
    Stale { built_at: f64 },
    /// At this generation the namespace does not fit the budget.
    TooBig,
    /// Nothing: build one.
    Miss,
}

/// One row that changed since a copy was built.
#[derive(Debug, Clone)]
pub enum Change {
    /// The row as it is now (new or replaced), encoded.
    Upsert { key: i64, row: QuantizedRow, fields: FilterFields },
    /// The row is gone (or no longer of the copy's dimension).
    Remove { key: i64 },
}

#[derive(Debug)]
enum Cached {
    Ready(Box<QuantizedVectors>),
    TooBig,
}

#[derive(Debug)]
struct Entry {
    generation: f64,
    state: Cached,
    last_used: u64,
}

/// Generation-keyed copies by `(namespace, dims)`, within a byte budget.
#[derive(Debug, Default)]
pub struct GenerationCache {
    entries: HashMap<(String, usize), Entry>,
    /// Logical time of the last lookup / store (recency order for eviction).
    clock: u64,
}

/// A refreshed copy with more than this share of its vectors removed is rebuilt instead
/// (a rebuild drops them).
const MAX_REMOVED_SHARE: usize = 4;

impl GenerationCache {
    pub fn lookup(&mut self, namespace: &str, dims: usize, generation: f64) -> Lookup {
        self.clock += 1;
        let key = (namespace.to_string(), dims);
        let Some(e) = self.entries.get_mut(&key) else { return Lookup::Miss };
        e.last_used = self.clock;
        match (&e.state, e.generation == generation) {
            (Cached::Ready(_), true) => Lookup::Hit,
            (Cached::TooBig, true) => Lookup::TooBig,
            (Cached::Ready(_), false) => Lookup::Stale { built_at: e.generation },
            (Cached::TooBig, false) => {
                self.entries.remove(&key);
                Lookup::Miss
            }
        }
    }

    /// `f` over the namespace's copy, whatever its generation (the caller looked it up first);
    /// `None` when there is none.
    pub fn with_copy<R>(
        &mut self,
        namespace: &str,
        dims: usize,
        f: impl FnOnce(&QuantizedVectors) -> R,
    ) -> Option<R> {
        self.clock += 1;
        let e = self.entries.get_mut(&(namespace.to_string(), dims))?;
        e.last_used = self.clock;
        match &e.state {
            Cached::Ready(set) => Some(f(set)),
            Cached::TooBig => None,
        }
    }

    /// Forgets the namespace's copy (before building a new one).
    pub fn drop_copy(&mut self, namespace: &str, dims: usize) {
        self.entries.remove(&(namespace.to_string(), dims));
    }

    /// Brings the copy built at generation `from` to generation `to` with the rows that changed in
    /// between. `false` when there is no copy at `from` (left as it is: another query may have
    /// refreshed it), and `false` with the copy dropped when it cannot apply them: a new row the copy
    /// cannot place, too many rows removed, or no room left in `budget`. The caller rebuilds.
    pub fn refresh(
        &mut self,
        namespace: &str,
        dims: usize,
        from: f64,
        to: f64,
        changes: Vec<Change>,
        budget: usize,
    ) -> bool {
        self.clock += 1;
        let key = (namespace.to_string(), dims);
        let applied = match self.entries.get_mut(&key) {
            Some(Entry { generation, state: Cached::Ready(set), last_used }) if *generation == from => {
                let mut placed = true;
                for change in changes {
                    match change {
                        Change::Upsert { key, row, fields } if row.dims() == dims => {
                            placed &= set.upsert_row(key, row, fields);
                        }
                        Change::Upsert { key, .. } | Change::Remove { key } => set.remove(key),
                    }
                    if !placed {
                        break;
                    }
                }
                *generation = to;
                *last_used = self.clock;
                placed && set.removed() * MAX_REMOVED_SHARE <= set.len()
            }
            _ => return false,
        };
        if !applied || !self.make_room(&key, budget) {
            self.entries.remove(&key);
            return false;
        }
        true
    }

    /// Bytes held by the cached copies.
    pub fn bytes(&self) -> usize {
        self.entries
            .values()
            .map(|e| match &e.state {
                Cached::Ready(set) => set.bytes(),
                Cached::TooBig => 0,
            })
            .sum()
    }

    /// Evicts the least recently used copies other than `keep`'s until everything fits `budget`;
    /// `false` if it cannot.
    fn make_room(&mut self, keep: &(String, usize), budget: usize) -> bool {
        while self.bytes() > budget {
            let oldest = self
                .entries
                .iter()
                .filter(|(k, e)| *k != keep && matches!(e.state, Cached::Ready(_)))
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    self.entries.remove(&k);
                }
                None => return false,
            }
        }
        true
    }

    /// Keeps `set` (built at `generation`) if it fits `budget`, evicting the least recently used
    /// copies to make room; `None` or a copy over the budget records the namespace as too big.
    pub fn store(
        &mut self,
        namespace: &str,
        dims: usize,
        generation: f64,
        set: Option<QuantizedVectors>,
        budget: usize,
    ) {
        self.clock += 1;
        let key = (namespace.to_string(), dims);
        self.entries.remove(&key);
        let state = match set {
            Some(set) if set.bytes() <= budget => Cached::Ready(Box::new(set)),
            _ => Cached::TooBig,
        };
        self.entries.insert(key.clone(), Entry { generation, state, last_used: self.clock });
        if !self.make_room(&key, budget) {
            self.entries.insert(key, Entry { generation, state: Cached::TooBig, last_used: self.clock });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::quantized::FilterFields;
    use crate::vector::VectorFilter;

    fn fields(i: usize) -> FilterFields {
        FilterFields { path: format!("f{i}"), language: "rust".into(), tags: vec![] }
    }

    fn copy(vectors: usize) -> QuantizedVectors {
        let mut set = QuantizedVectors::new(4);
        for i in 0..vectors {
            set.push(i as i64, &[1.0, 0.0, i as f32, 0.5], fields(i));
        }
        set
    }

    /// The copy's candidates for `[0, 0, 1, 0]`, top 2.
    fn top2(cache: &mut GenerationCache, ns: &str) -> Option<Vec<i64>> {
        cache
            .with_copy(ns, 4, |set| set.candidates(&[0.0, 0.0, 1.0, 0.0], 2, &VectorFilter::default()))
            .flatten()
    }

    #[test]
    fn a_copy_answers_at_the_generation_it_was_built_at_and_is_stale_after() {
        let mut cache = GenerationCache::default();
        assert_eq!(cache.lookup("ns", 4, 1.0), Lookup::Miss);
        cache.store("ns", 4, 1.0, Some(copy(3)), 1 << 20);
        assert_eq!(cache.lookup("ns", 4, 1.0), Lookup::Hit);
        assert_eq!(cache.lookup("ns", 8, 1.0), Lookup::Miss, "other dims are another copy");
        assert_eq!(cache.lookup("ns", 4, 2.0), Lookup::Stale { built_at: 1.0 });
        assert!(cache.bytes() > 0, "a stale copy is kept until refreshed or dropped");
        cache.drop_copy("ns", 4);
        assert_eq!(cache.bytes(), 0);
        assert_eq!(cache.lookup("ns", 4, 2.0), Lookup::Miss);
    }

    #[test]
    fn a_refresh_applies_the_changed_rows() {
        let mut cache = GenerationCache::default();
        cache.store("ns", 4, 1.0, Some(copy(10)), 1 << 20);
        assert_eq!(top2(&mut cache, "ns"), Some(vec![8, 9]));
        let changes = vec![
            Change::Remove { key: 9 },
            Change::Upsert { key: 2, row: QuantizedRow::encode(&[0.0, 0.0, 5.0, 0.0]), fields: fields(2) },
            Change::Upsert { key: 12, row: QuantizedRow::encode(&[0.0, 0.0, 1.0, 0.01]), fields: fields(12) },
            // A row whose dimension changed leaves this copy.
            Change::Upsert { key: 8, row: QuantizedRow::encode(&[1.0; 8]), fields: fields(8) },
        ];
        assert!(cache.refresh("ns", 4, 1.0, 5.0, changes, 1 << 20));
        assert_eq!(cache.lookup("ns", 4, 5.0), Lookup::Hit);
        let got = top2(&mut cache, "ns").unwrap_or_default();
        assert!(got.contains(&2) && got.contains(&12), "new and replaced rows are candidates: {got:?}");
        assert!(!got.contains(&8) && !got.contains(&9), "removed rows never are: {got:?}");
    }

    #[test]
    fn a_refresh_that_cannot_apply_drops_the_copy() {
        let mut cache = GenerationCache::default();
        cache.store("ns", 4, 1.0, Some(copy(10)), 1 << 20);
        assert!(!cache.refresh("ns", 4, 2.0, 3.0, vec![], 1 << 20), "built at 1, not 2");
        assert_eq!(cache.lookup("ns", 4, 3.0), Lookup::Stale { built_at: 1.0 }, "left as it was");
        // A new key below the last one cannot be placed.
        let mut set = QuantizedVectors::new(4);
        set.push(5, &[1.0; 4], fields(5));
        cache.store("ns", 4, 1.0, Some(set), 1 << 20);
        let low = Change::Upsert { key: 3, row: QuantizedRow::encode(&[1.0; 4]), fields: fields(3) };
        assert!(!cache.refresh("ns", 4, 1.0, 2.0, vec![low], 1 << 20));
        assert_eq!(cache.lookup("ns", 4, 2.0), Lookup::Miss);
        // More than a quarter removed: rebuild.
        cache.store("ns", 4, 1.0, Some(copy(8)), 1 << 20);
        let gone = (0..3).map(|key| Change::Remove { key }).collect();
        assert!(!cache.refresh("ns", 4, 1.0, 2.0, gone, 1 << 20));
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn the_least_recently_used_copy_makes_room() {
        let one = copy(10).bytes();
        let mut cache = GenerationCache::default();
        let budget = one * 5 / 2;
        cache.store("a", 4, 1.0, Some(copy(10)), budget);
        cache.store("b", 4, 1.0, Some(copy(10)), budget);
        assert_eq!(cache.lookup("a", 4, 1.0), Lookup::Hit, "a is now more recent than b");
        cache.store("c", 4, 1.0, Some(copy(10)), budget);
        assert!(cache.bytes() <= budget);
        assert_eq!(cache.lookup("a", 4, 1.0), Lookup::Hit);
        assert_eq!(cache.lookup("b", 4, 1.0), Lookup::Miss);
        assert_eq!(cache.lookup("c", 4, 1.0), Lookup::Hit);
        // A refresh that grows a copy evicts the others, not itself.
        let grow = (10..19)
            .map(|key| Change::Upsert {
                key,
                row: QuantizedRow::encode(&[1.0; 4]),
                fields: fields(key as usize),
            })
            .collect();
        assert!(cache.refresh("a", 4, 1.0, 2.0, grow, budget));
        assert_eq!(cache.lookup("a", 4, 2.0), Lookup::Hit);
        assert_eq!(cache.lookup("c", 4, 1.0), Lookup::Miss);
    }

    #[test]
    fn a_namespace_over_the_budget_is_too_big_until_it_changes() {
        let mut cache = GenerationCache::default();
        let budget = copy(10).bytes() - 1;
        cache.store("big", 4, 5.0, Some(copy(10)), budget);
        assert_eq!(cache.lookup("big", 4, 5.0), Lookup::TooBig);
        assert_eq!(cache.bytes(), 0);
        cache.store("gave-up", 4, 1.0, None, budget);
        assert_eq!(cache.lookup("gave-up", 4, 1.0), Lookup::TooBig);
        assert_eq!(cache.lookup("big", 4, 6.0), Lookup::Miss);
    }
}
