//! A deterministic embedder for unit tests: feature hashing of words and character trigrams.
//! Texts sharing words land near each other, so ranking tests mean something, but it is not a
//! semantic model — never configure it for real use.
use std::cell::Cell;

use super::{EmbedError, Embedder, EmbedderInfo};

#[derive(Debug)]
pub struct HashingEmbedder {
    dims: usize,
    max_batch: usize,
    calls: Cell<usize>,
    texts_embedded: Cell<usize>,
}

impl HashingEmbedder {
    pub fn new(dims: usize) -> Self {
        HashingEmbedder {
            dims: dims.max(1),
            max_batch: 32,
            calls: Cell::new(0),
            texts_embedded: Cell::new(0),
        }
    }

    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.max_batch = max_batch.max(1);
        self
    }

    /// Backend calls made so far (one per batch).
    pub fn calls(&self) -> usize {
        self.calls.get()
    }

    /// Texts embedded so far (the cache tests count these).
    pub fn texts_embedded(&self) -> usize {
        self.texts_embedded.get()
    }

    /// The vector of one text: L2-normalized, all zeros for a text without words.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dims];
        let lower = text.to_lowercase();
        for word in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            self.add(&mut v, word.as_bytes(), 1.0);
            let chars: Vec<char> = word.chars().collect();
            for tri in chars.windows(3) {
                let s: String = tri.iter().collect();
                self.add(&mut v, s.as_bytes(), 0.3);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }

    fn add(&self, v: &mut [f32], feature: &[u8], weight: f32) {
        let h = blake3::hash(feature);
        let b = h.as_bytes();
        let idx = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) % self.dims as u64;
        let sign = if b[8] & 1 == 0 { 1.0 } else { -1.0 };
        v[idx as usize] += sign * weight;
    }
}

#[async_trait::async_trait(?Send)]
impl Embedder for HashingEmbedder {
    fn info(&self) -> EmbedderInfo {
        EmbedderInfo {
            provider: "hashing".into(),
            model: format!("hashing-{}", self.dims),
            dims: self.dims,
            max_batch: self.max_batch,
            max_input_chars: None,
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.max_batch) {
            self.calls.set(self.calls.get() + 1);
            self.texts_embedded.set(self.texts_embedded.get() + batch.len());
            out.extend(batch.iter().map(|t| self.vector(t)));
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::vector::testing::block_on;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn deterministic_normalized_and_word_sensitive() {
        let e = HashingEmbedder::new(64);
        let a = e.vector("parse the config file");
        assert_eq!(a, e.vector("parse the config file"));
        assert!((cos(&a, &a) - 1.0).abs() < 1e-5);
        let near = e.vector("parse config");
        let far = e.vector("render a button widget");
        assert!(cos(&a, &near) > cos(&a, &far));
        assert!(e.vector("  ").iter().all(|x| *x == 0.0));
    }

    #[test]
    fn batches_and_counts() {
        let e = HashingEmbedder::new(8).with_max_batch(2);
        let texts: Vec<String> = (0..5).map(|i| format!("text {i}")).collect();
        let out = block_on(e.embed(&texts)).unwrap();
        assert_eq!(out.len(), 5);
        assert_eq!(e.calls(), 3);
        assert_eq!(e.texts_embedded(), 5);
    }
}
