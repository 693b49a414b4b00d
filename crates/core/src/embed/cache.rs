//! The embedding cache: vectors keyed by model + BLAKE3 of the exact text embedded, so the same text
//! is never sent to a backend twice. The worker stores it in D1 (`embedding_cache`);
//! [`InMemoryEmbeddingCache`] serves native tests.
use std::cell::RefCell;
use std::collections::HashMap;

use serde::Serialize;

use super::{check_vectors, truncate_chars, EmbedError, Embedder, EmbedderInfo};

/// A store of embeddings by `(model, key)`; `key` is [`cache_key`] of the text.
#[async_trait::async_trait(?Send)]
pub trait EmbeddingCache {
    /// The cached vectors among `keys` (missing keys are simply absent from the map).
    async fn get_many(&self, model: &str, keys: &[String]) -> Result<HashMap<String, Vec<f32>>, EmbedError>;
    /// Stores vectors (insert or replace).
    async fn put_many(&self, model: &str, entries: &[(String, Vec<f32>)]) -> Result<(), EmbedError>;
}

/// The cache key of a text: BLAKE3 of its bytes (the same function as a chunk's `text_hash`, so
/// for a chunk embedded by its own text the key *is* its `text_hash`).
pub fn cache_key(text: &str) -> String {
    crate::ids::text_hash(text)
}

/// What one [`embed_cached`] call did — the pipeline adds these to job status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedStats {
    /// Texts asked for.
    pub requested: usize,
    /// Served from the cache.
    pub cache_hits: usize,
    /// Sent to the backend (distinct texts that missed the cache).
    pub embedded: usize,
    /// Duplicates inside the request, served from the request's own results.
    pub duplicates: usize,
    /// Sent texts that were cut to the model's input limit ([`EmbedderInfo::max_input_chars`]).
    pub truncated: usize,
}

impl EmbedStats {
    pub fn add(&mut self, other: EmbedStats) {
        self.requested += other.requested;
        self.cache_hits += other.cache_hits;
        self.embedded += other.embedded;
        self.duplicates += other.duplicates;
        self.truncated += other.truncated;
    }
}

/// Embedder batches in flight at once: a message's misses go out as a few concurrent requests
/// instead of one round trip after another.
pub const EMBED_CONCURRENCY: usize = 4;

/// One vector per text, in order, sending only cache misses (each distinct text once) to the
/// embedder, in batches of `info().max_batch` with up to [`EMBED_CONCURRENCY`] in flight, and
/// storing the new vectors in the cache with one `put_many`. When a batch fails, the vectors the
/// other batches produced are still stored before the error is returned, so a retry only pays
/// for what failed. A cached vector of another dimension (model reconfigured) counts as a miss
/// and is replaced.
pub async fn embed_cached<E, C>(
    embedder: &E,
    cache: &C,
    texts: &[String],
) -> Result<(Vec<Vec<f32>>, EmbedStats), EmbedError>
where
    E: Embedder + ?Sized,
    C: EmbeddingCache + ?Sized,
{
    let info = embedder.info();
    let mut stats = EmbedStats { requested: texts.len(), ..EmbedStats::default() };
    let keys: Vec<String> = texts.iter().map(|t| cache_key(t)).collect();

    // Distinct keys, first occurrence order.
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    let mut distinct: Vec<usize> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        if first_of.contains_key(k.as_str()) {
            stats.duplicates += 1;
        } else {
            first_of.insert(k, i);
            distinct.push(i);
        }
    }

    let distinct_keys: Vec<String> = distinct.iter().map(|&i| keys[i].clone()).collect();
    let mut found = if distinct_keys.is_empty() {
        HashMap::new()
    } else {
        cache.get_many(&info.model, &distinct_keys).await?
    };
    found.retain(|_, v| v.len() == info.dims);

    let misses: Vec<usize> = distinct.iter().copied().filter(|&i| !found.contains_key(&keys[i])).collect();
    stats.cache_hits = distinct.len() - misses.len();
    stats.embedded = misses.len();

    let batches: Vec<Vec<String>> = misses
        .chunks(info.max_batch.max(1))
        .map(|batch| {
            batch
                .iter()
                .map(|&i| {
                    let (text, cut) = truncate_chars(&texts[i], info.max_input_chars);
                    stats.truncated += usize::from(cut);
                    text.to_string()
                })
                .collect()
        })
        .collect();
    let mut fresh: Vec<(String, Vec<f32>)> = Vec::with_capacity(misses.len());
    let mut failure = None;
    let mut next = misses.iter();
    for wave in batches.chunks(EMBED_CONCURRENCY) {
        let results = futures_util::future::join_all(wave.iter().map(|inputs| async move {
            let vectors = embedder.embed(inputs).await?;
            check_vectors(&vectors, inputs.len(), info.dims)?;
            Ok::<_, EmbedError>(vectors)
        }))
        .await;
        for (inputs, result) in wave.iter().zip(results) {
            let batch_keys: Vec<String> =
                next.by_ref().take(inputs.len()).map(|&i| keys[i].clone()).collect();
            match result {
                Ok(vectors) => fresh.extend(batch_keys.into_iter().zip(vectors)),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        if failure.is_some() {
            break;
        }
    }
    if !fresh.is_empty() {
        let stored = cache.put_many(&info.model, &fresh).await;
        if let Some(e) = failure {
            return Err(e);
        }
        stored?;
    }
    if let Some(e) = failure {
        return Err(e);
    }
    found.extend(fresh);

    let mut out = Vec::with_capacity(texts.len());
    for k in &keys {
        match found.get(k) {
            Some(v) => out.push(v.clone()),
            None => return Err(EmbedError::Cache(format!("vector for {k} missing after embedding"))),
        }
    }
    Ok((out, stats))
}

/// An [`Embedder`] that goes through a cache, adding up what it did in [`CachedEmbedder::stats`].
pub struct CachedEmbedder<E, C> {
    inner: E,
    cache: C,
    stats: RefCell<EmbedStats>,
}

impl<E: Embedder, C: EmbeddingCache> CachedEmbedder<E, C> {
    pub fn new(inner: E, cache: C) -> Self {
        CachedEmbedder { inner, cache, stats: RefCell::new(EmbedStats::default()) }
    }

    pub fn stats(&self) -> EmbedStats {
        *self.stats.borrow()
    }

    pub fn inner(&self) -> &E {
        &self.inner
    }
}

#[async_trait::async_trait(?Send)]
impl<E: Embedder, C: EmbeddingCache> Embedder for CachedEmbedder<E, C> {
    fn info(&self) -> EmbedderInfo {
        self.inner.info()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (vectors, stats) = embed_cached(&self.inner, &self.cache, texts).await?;
        self.stats.borrow_mut().add(stats);
        Ok(vectors)
    }
}

/// A cache in memory (tests, CLI runs).
#[derive(Debug, Default)]
pub struct InMemoryEmbeddingCache {
    entries: RefCell<HashMap<(String, String), Vec<f32>>>,
}

impl InMemoryEmbeddingCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.borrow().is_empty()
    }
}

#[async_trait::async_trait(?Send)]
impl EmbeddingCache for InMemoryEmbeddingCache {
    async fn get_many(&self, model: &str, keys: &[String]) -> Result<HashMap<String, Vec<f32>>, EmbedError> {
        let entries = self.entries.borrow();
        Ok(keys
            .iter()
            .filter_map(|k| entries.get(&(model.to_string(), k.clone())).map(|v| (k.clone(), v.clone())))
            .collect())
    }

    async fn put_many(&self, model: &str, entries: &[(String, Vec<f32>)]) -> Result<(), EmbedError> {
        let mut map = self.entries.borrow_mut();
        for (k, v) in entries {
            map.insert((model.to_string(), k.clone()), v.clone());
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::embed::HashingEmbedder;
    use crate::vector::testing::block_on;

    fn texts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn same_text_is_never_embedded_twice() {
        let e = HashingEmbedder::new(16).with_max_batch(2);
        let cache = InMemoryEmbeddingCache::new();
        let (v1, s1) = block_on(embed_cached(&e, &cache, &texts(&["a b", "c d", "a b", "e f"]))).unwrap();
        assert_eq!(v1.len(), 4);
        assert_eq!(v1[0], v1[2]);
        assert_eq!(s1, EmbedStats { requested: 4, cache_hits: 0, embedded: 3, duplicates: 1, truncated: 0 });
        assert_eq!(e.texts_embedded(), 3);
        assert_eq!(e.calls(), 2, "3 misses in batches of 2");

        let (v2, s2) = block_on(embed_cached(&e, &cache, &texts(&["e f", "g h", "a b"]))).unwrap();
        assert_eq!(s2.cache_hits, 2);
        assert_eq!(s2.embedded, 1);
        assert_eq!(e.texts_embedded(), 4);
        assert_eq!(v2[0], v1[3]);
        assert_eq!(v2[1], e.vector("g h"));
    }

    #[test]
    fn cache_is_per_model_and_dims() {
        let cache = InMemoryEmbeddingCache::new();
        let small = HashingEmbedder::new(8);
        let big = HashingEmbedder::new(16);
        block_on(embed_cached(&small, &cache, &texts(&["x"]))).unwrap();
        let (v, s) = block_on(embed_cached(&big, &cache, &texts(&["x"]))).unwrap();
        assert_eq!(v[0].len(), 16);
        assert_eq!(s.embedded, 1);
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn cached_embedder_wraps_and_counts() {
        let ce = CachedEmbedder::new(HashingEmbedder::new(8), InMemoryEmbeddingCache::new());
        block_on(ce.embed(&texts(&["one", "two"]))).unwrap();
        block_on(ce.embed(&texts(&["two", "three"]))).unwrap();
        assert_eq!(ce.stats().embedded, 3);
        assert_eq!(ce.stats().cache_hits, 1);
        assert_eq!(ce.inner().texts_embedded(), 3);
        assert_eq!(block_on(ce.embed(&[])).unwrap().len(), 0);
    }

    struct Truncating(HashingEmbedder);
    #[async_trait::async_trait(?Send)]
    impl Embedder for Truncating {
        fn info(&self) -> EmbedderInfo {
            EmbedderInfo { max_input_chars: Some(3), ..self.0.info() }
        }
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            assert!(texts.iter().all(|t| t.chars().count() <= 3));
            self.0.embed(texts).await
        }
    }

    #[test]
    fn truncation_is_counted() {
        let e = Truncating(HashingEmbedder::new(8));
        let (_, s) =
            block_on(embed_cached(&e, &InMemoryEmbeddingCache::new(), &texts(&["abcdef", "ab"]))).unwrap();
        assert_eq!(s.truncated, 1);
    }

    struct WrongDims;
    #[async_trait::async_trait(?Send)]
    impl Embedder for WrongDims {
        fn info(&self) -> EmbedderInfo {
            EmbedderInfo {
                provider: "t".into(),
                model: "t".into(),
                dims: 4,
                max_batch: 10,
                max_input_chars: None,
            }
        }
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|_| vec![0.0; 3]).collect())
        }
    }

    #[test]
    fn wrong_dimension_is_an_error_and_not_cached() {
        let cache = InMemoryEmbeddingCache::new();
        let err = block_on(embed_cached(&WrongDims, &cache, &texts(&["x"]))).unwrap_err();
        assert_eq!(err, EmbedError::WrongDimension { expected: 4, got: 3 });
        assert!(cache.is_empty());
    }
    /// Counts `put_many` calls and fails the embedding of any batch containing "boom".
    #[derive(Default)]
    struct CountingCache {
        inner: InMemoryEmbeddingCache,
        puts: RefCell<usize>,
    }

    #[async_trait::async_trait(?Send)]
    impl EmbeddingCache for CountingCache {
        async fn get_many(
            &self,
            model: &str,
            keys: &[String],
        ) -> Result<HashMap<String, Vec<f32>>, EmbedError> {
            self.inner.get_many(model, keys).await
        }
        async fn put_many(&self, model: &str, entries: &[(String, Vec<f32>)]) -> Result<(), EmbedError> {
            *self.puts.borrow_mut() += 1;
            self.inner.put_many(model, entries).await
        }
    }

    struct FailsOn(HashingEmbedder, &'static str);
    #[async_trait::async_trait(?Send)]
    impl Embedder for FailsOn {
        fn info(&self) -> EmbedderInfo {
            self.0.info()
        }
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            if texts.iter().any(|t| t == self.1) {
                return Err(EmbedError::Timeout);
            }
            self.0.embed(texts).await
        }
    }

    #[test]
    fn the_misses_of_many_batches_are_stored_with_one_put() {
        let e = HashingEmbedder::new(8).with_max_batch(2);
        let cache = CountingCache::default();
        let input: Vec<String> = (0..11).map(|i| format!("text {i}")).collect();
        let (v, s) = block_on(embed_cached(&e, &cache, &input)).unwrap();
        assert_eq!(v.len(), 11);
        assert_eq!(v[7], e.vector("text 7"));
        assert_eq!((s.embedded, e.calls()), (11, 6), "11 misses in 6 batches of at most 2");
        assert_eq!(*cache.puts.borrow(), 1);
        assert_eq!(cache.inner.len(), 11);
    }

    #[test]
    fn a_failing_batch_keeps_the_vectors_of_the_others_cached() {
        // Batches of 2: ["a","b"], ["boom","c"], ["d","e"], ... — only the second fails.
        let e = FailsOn(HashingEmbedder::new(8).with_max_batch(2), "boom");
        let cache = CountingCache::default();
        let input = texts(&["a", "b", "boom", "c", "d", "e"]);
        let err = block_on(embed_cached(&e, &cache, &input)).unwrap_err();
        assert_eq!(err, EmbedError::Timeout);
        assert_eq!(cache.inner.len(), 4, "a, b, d, e were stored; boom and c were not");
        // The retry sends only what failed.
        let ok = HashingEmbedder::new(8).with_max_batch(2);
        let (_, s) = block_on(embed_cached(&ok, &cache, &input)).unwrap();
        assert_eq!((s.cache_hits, s.embedded, ok.texts_embedded()), (4, 2, 2));
    }
}
