//! The in-memory copies of namespaces a local vector index keeps between queries: at most
//! `budget` bytes of [`QuantizedVectors`] for all namespaces together, least recently used
//! evicted first. A copy is trusted only at the namespace's *generation* it was built at (a
//! counter the store bumps on every write), so a lookup with any other generation misses — and
//! drops the stale copy at once, so that the rebuild never holds two copies. A namespace larger
//! than the budget is remembered as too big until its generation changes (it is scanned instead).
use std::collections::HashMap;
use std::rc::Rc;

use super::quantized::QuantizedVectors;

/// What a lookup found.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The copy built at this generation.
    Hit(Rc<QuantizedVectors>),
    /// At this generation the namespace does not fit the budget.
    TooBig,
    /// Nothing (or only a stale copy, now dropped): build one.
    Miss,
}

#[derive(Debug)]
enum Cached {
    Ready(Rc<QuantizedVectors>),
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

impl GenerationCache {
    pub fn lookup(&mut self, namespace: &str, dims: usize, generation: f64) -> Lookup {
        self.clock += 1;
        let key = (namespace.to_string(), dims);
        match self.entries.get_mut(&key) {
            Some(e) if e.generation == generation => {
                e.last_used = self.clock;
                match &e.state {
                    Cached::Ready(set) => Lookup::Hit(Rc::clone(set)),
                    Cached::TooBig => Lookup::TooBig,
                }
            }
            Some(_) => {
                self.entries.remove(&key);
                Lookup::Miss
            }
            None => Lookup::Miss,
        }
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
            Some(set) if set.bytes() <= budget => {
                while self.bytes() + set.bytes() > budget {
                    let oldest = self
                        .entries
                        .iter()
                        .filter(|(_, e)| matches!(e.state, Cached::Ready(_)))
                        .min_by_key(|(_, e)| e.last_used)
                        .map(|(k, _)| k.clone());
                    match oldest {
                        Some(k) => {
                            self.entries.remove(&k);
                        }
                        None => break,
                    }
                }
                Cached::Ready(Rc::new(set))
            }
            _ => Cached::TooBig,
        };
        self.entries.insert(key, Entry { generation, state, last_used: self.clock });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::quantized::FilterFields;

    fn copy(vectors: usize) -> QuantizedVectors {
        let mut set = QuantizedVectors::new(4);
        for i in 0..vectors {
            let fields = FilterFields { path: format!("f{i}"), language: "rust".into(), tags: vec![] };
            set.push(i as i64, &[1.0, 0.0, i as f32, 0.5], fields);
        }
        set
    }

    fn is_hit(l: &Lookup) -> bool {
        matches!(l, Lookup::Hit(_))
    }

    #[test]
    fn a_copy_answers_only_at_the_generation_it_was_built_at() {
        let mut cache = GenerationCache::default();
        assert!(matches!(cache.lookup("ns", 4, 1.0), Lookup::Miss));
        cache.store("ns", 4, 1.0, Some(copy(3)), 1 << 20);
        assert!(is_hit(&cache.lookup("ns", 4, 1.0)));
        assert!(matches!(cache.lookup("ns", 8, 1.0), Lookup::Miss), "other dims are another copy");
        assert!(matches!(cache.lookup("ns", 4, 2.0), Lookup::Miss));
        assert_eq!(cache.bytes(), 0, "the stale copy is dropped by the lookup that found it stale");
        assert!(matches!(cache.lookup("ns", 4, 1.0), Lookup::Miss));
    }

    #[test]
    fn the_least_recently_used_copy_makes_room() {
        let one = copy(10).bytes();
        let mut cache = GenerationCache::default();
        let budget = one * 2;
        cache.store("a", 4, 1.0, Some(copy(10)), budget);
        cache.store("b", 4, 1.0, Some(copy(10)), budget);
        assert!(is_hit(&cache.lookup("a", 4, 1.0)), "a is now more recent than b");
        cache.store("c", 4, 1.0, Some(copy(10)), budget);
        assert!(cache.bytes() <= budget);
        assert!(is_hit(&cache.lookup("a", 4, 1.0)));
        assert!(matches!(cache.lookup("b", 4, 1.0), Lookup::Miss));
        assert!(is_hit(&cache.lookup("c", 4, 1.0)));
    }

    #[test]
    fn a_namespace_over_the_budget_is_too_big_until_it_changes() {
        let mut cache = GenerationCache::default();
        let budget = copy(10).bytes() - 1;
        cache.store("big", 4, 5.0, Some(copy(10)), budget);
        assert!(matches!(cache.lookup("big", 4, 5.0), Lookup::TooBig));
        assert_eq!(cache.bytes(), 0);
        cache.store("gave-up", 4, 1.0, None, budget);
        assert!(matches!(cache.lookup("gave-up", 4, 1.0), Lookup::TooBig));
        assert!(matches!(cache.lookup("big", 4, 6.0), Lookup::Miss));
    }
}
