//! Exact scoring: cosine similarity and a bounded top-K that keeps memory at O(K) however many
//! candidates stream past (the local index scans D1 in pages through one of these).
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Cosine similarity; 0 when either vector is all zeros. Plain f32 arithmetic in index order, so
/// native and wasm32 builds give bit-identical scores (and therefore identical tie order).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// Cosine against a query whose norm is already known (`query_norm = sqrt(Σ q²)`): the scan loop
/// computes one dot product and one norm per candidate. Same result as [`cosine`].
pub fn cosine_with_norm(query: &[f32], query_norm: f32, b: &[f32]) -> f32 {
    let (mut dot, mut nb) = (0f32, 0f32);
    for (x, y) in query.iter().zip(b) {
        dot += x * y;
        nb += y * y;
    }
    if query_norm == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (query_norm * nb.sqrt())
}

pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// `a` ranks before `b`: higher score first, then smaller id.
pub fn ranks_before(a_score: f32, a_id: &str, b_score: f32, b_id: &str) -> bool {
    match a_score.total_cmp(&b_score) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => a_id < b_id,
    }
}

struct Entry<T> {
    score: f32,
    id: String,
    item: T,
}

// Heap order: the entry that ranks *last* is the greatest, so `peek` is the one to evict.
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score).then_with(|| self.id.cmp(&other.id))
    }
}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T> Eq for Entry<T> {}

/// The best `k` items seen so far, by (score desc, id asc).
pub struct TopK<T> {
    k: usize,
    heap: BinaryHeap<Entry<T>>,
}

impl<T> TopK<T> {
    pub fn new(k: usize) -> Self {
        TopK { k, heap: BinaryHeap::with_capacity(k.saturating_add(1).min(1024)) }
    }

    /// Whether a candidate would enter the top K (lets callers skip building the item).
    pub fn accepts(&self, score: f32, id: &str) -> bool {
        if self.k == 0 {
            return false;
        }
        if self.heap.len() < self.k {
            return true;
        }
        match self.heap.peek() {
            Some(worst) => ranks_before(score, id, worst.score, &worst.id),
            None => true,
        }
    }

    pub fn push(&mut self, score: f32, id: String, item: T) {
        if !self.accepts(score, &id) {
            return;
        }
        self.heap.push(Entry { score, id, item });
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Best first: `(score, id, item)`.
    pub fn into_sorted(self) -> Vec<(f32, String, T)> {
        // `into_sorted_vec` is ascending by `Ord`, i.e. best first.
        self.heap.into_sorted_vec().into_iter().map(|e| (e.score, e.id, e.item)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_basics() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-6);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        let q = [0.3, -0.7, 0.2];
        let b = [0.1, 0.5, -0.9];
        assert_eq!(cosine(&q, &b), cosine_with_norm(&q, norm(&q), &b));
    }

    #[test]
    fn keeps_best_k_with_stable_ties() {
        let mut t = TopK::new(3);
        for (s, id) in [(0.5, "e"), (0.9, "b"), (0.5, "a"), (0.1, "z"), (0.9, "c"), (0.5, "d")] {
            t.push(s, id.to_string(), ());
        }
        let got: Vec<(f32, String)> = t.into_sorted().into_iter().map(|(s, id, _)| (s, id)).collect();
        assert_eq!(got, vec![(0.9, "b".into()), (0.9, "c".into()), (0.5, "a".into())]);
    }

    #[test]
    fn matches_full_sort() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 40) % 50) as f32 / 10.0
        };
        let items: Vec<(f32, String)> = (0..500).map(|i| (next(), format!("id{i:04}"))).collect();
        let mut t = TopK::new(17);
        for (s, id) in &items {
            t.push(*s, id.clone(), ());
        }
        let mut all = items.clone();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let got: Vec<(f32, String)> = t.into_sorted().into_iter().map(|(s, id, _)| (s, id)).collect();
        assert_eq!(got, all[..17].to_vec());
        assert!(TopK::<()>::new(0).into_sorted().is_empty());
    }
}
