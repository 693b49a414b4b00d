//! The local vector index's scan (divan): exact top 50 of 384-dimension vectors, the way the
//! worker answers a vector query without Vectorize.
//!
//! `cargo bench -p edgerag-core --no-default-features --bench vector`
//!
//! - `quantized_candidates`: the in-memory copy's pre-score of every vector (8-bit codes) with
//!   its error bounds, giving the candidates whose exact score could reach the top 50.
//! - `quantized_then_rescore`: the same plus the exact re-scoring of the candidates (the whole
//!   query, minus fetching the candidates' f32 values from D1).
//! - `exact_f32_scan`: the peer, a plain exact cosine scan of the f32 vectors into a top-K heap
//!   (what [`edgerag_core::vector::InMemoryVectorIndex`] and a brute-force index do).
//!
//! Vectors are dense, unit length and deterministic (a fixed-seed generator), clustered around 64
//! centres as embeddings of one repository are; queries are near a centre.
#![allow(clippy::unwrap_used)]
use std::sync::OnceLock;

use divan::{black_box, Bencher};
use edgerag_core::vector::quantized::{rescore, FilterFields, QuantizedVectors};
use edgerag_core::vector::topk::{cosine_with_norm, norm};
use edgerag_core::vector::{TopK, VectorFilter};

const DIMS: usize = 384;
const TOP_K: usize = 50;
const SIZES: [usize; 2] = [50_000, 200_000];

/// xorshift64*: a fixed sequence, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        x as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn vector_near(&mut self, centre: &[f32], spread: f32) -> Vec<f32> {
        let mut v: Vec<f32> = centre.iter().map(|c| c + spread * self.next_f32()).collect();
        let n = norm(&v);
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}

struct Set {
    ids: Vec<String>,
    values: Vec<Vec<f32>>,
    quantized: QuantizedVectors,
    queries: Vec<Vec<f32>>,
}

impl Set {
    /// The id and values of the vector pushed under key `k` (its position).
    fn row(&self, k: i64) -> (&str, &[f32]) {
        (self.ids[k as usize].as_str(), self.values[k as usize].as_slice())
    }
}

fn set(n: usize) -> &'static Set {
    static SETS: OnceLock<Vec<(usize, Set)>> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        SIZES
            .iter()
            .map(|&n| {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
                let centres: Vec<Vec<f32>> = (0..64).map(|_| rng.vector_near(&[0.0; DIMS], 1.0)).collect();
                let values: Vec<Vec<f32>> = (0..n).map(|i| rng.vector_near(&centres[i % 64], 0.08)).collect();
                let ids: Vec<String> = (0..n).map(|i| format!("chunk-{i:07}")).collect();
                let mut quantized = QuantizedVectors::with_capacity(DIMS, n);
                for (i, (id, v)) in ids.iter().zip(&values).enumerate() {
                    let fields = FilterFields {
                        path: format!("src/{id}.rs"),
                        language: "rust".into(),
                        tags: Vec::new(),
                    };
                    quantized.push(i as i64, v, fields);
                }
                let queries = (0..16).map(|i| rng.vector_near(&centres[(i * 5) % 64], 0.08)).collect();
                (n, Set { ids, values, quantized, queries })
            })
            .collect()
    });
    &sets.iter().find(|(size, _)| *size == n).unwrap().1
}

fn main() {
    divan::main();
}

#[divan::bench(args = SIZES)]
fn quantized_candidates(bencher: Bencher, n: usize) {
    let s = set(n);
    let filter = VectorFilter::default();
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        black_box(s.quantized.candidates(&s.queries[i % s.queries.len()], TOP_K, &filter).map(|c| c.len()))
    });
}

#[divan::bench(args = SIZES)]
fn quantized_then_rescore(bencher: Bencher, n: usize) {
    let s = set(n);
    let filter = VectorFilter::default();
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        let q = &s.queries[i % s.queries.len()];
        let candidates = s.quantized.candidates(q, TOP_K, &filter).unwrap();
        black_box(rescore(q, TOP_K, candidates.iter().map(|&k| s.row(k))))
    });
}

#[divan::bench(args = SIZES)]
fn exact_f32_scan(bencher: Bencher, n: usize) {
    let s = set(n);
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        black_box(exact_top(s, &s.queries[i % s.queries.len()]).len())
    });
}

/// The exact top [`TOP_K`] by a plain f32 scan, best first.
fn exact_top(s: &Set, q: &[f32]) -> Vec<(f32, String)> {
    let qn = norm(q);
    let mut top = TopK::new(TOP_K);
    for (id, v) in s.ids.iter().zip(&s.values) {
        let score = cosine_with_norm(q, qn, v);
        if top.accepts(score, id) {
            top.push(score, id.clone(), ());
        }
    }
    top.into_sorted().into_iter().map(|(s, id, ())| (s, id)).collect()
}

/// The two ways give the same top 50 (a bench that measured a wrong answer would be worthless).
#[divan::bench(args = [50_000])]
fn agreement_check(n: usize) -> usize {
    let s = set(n);
    let q = &s.queries[0];
    let exact = exact_top(s, q);
    let candidates = s.quantized.candidates(q, TOP_K, &VectorFilter::default()).unwrap();
    let fast = rescore(q, TOP_K, candidates.iter().map(|&k| s.row(k)));
    assert_eq!(fast, exact, "quantized scan and exact scan disagree");
    candidates.len()
}
