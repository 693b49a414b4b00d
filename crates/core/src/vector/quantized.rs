//! A compact in-memory copy of a vector set that still gives **exact** top-K results.
//!
//! Each vector is stored as 16-bit fixed point scaled by its largest component (half the memory of
//! f32), with its exact f32 norm. A query scores every stored vector approximately and bounds the
//! error of each approximation; every vector whose best possible exact score could still reach the
//! top K is a *candidate*. Re-scoring the candidates with their exact f32 values
//! ([`super::topk::cosine_with_norm`]) then gives bit-for-bit the result of a full exact scan —
//! usually K plus a handful of candidates, instead of the whole set.
//!
//! The error bound, for a query `q` and a stored vector `v` with scale `s = max |vⱼ|`:
//! the codes are `cⱼ = round(vⱼ / s × 32767)`, so each component is off by at most
//! `≈ 0.504 · s / 32767 < s / 64000`, and the dot product by at most `‖q‖₁ · s / 64000`; both the
//! approximate and the exact score are f32 sums of `d` products, each within `d · 2⁻²⁴` (relative to
//! `‖q‖ ‖v‖`) of the real value. The denominators (`‖q‖ · ‖v‖` as f32) are computed exactly as the
//! exact scorer computes them, so they cancel.
use super::topk::{cosine_with_norm, norm};
use super::VectorFilter;

/// Codes span `-CODE_MAX..=CODE_MAX`.
const CODE_MAX: f32 = 32767.0;
/// A component is off by less than `scale / COMPONENT_ERROR_DIVISOR` (0.5 code + f32 rounding).
const COMPONENT_ERROR_DIVISOR: f64 = 64_000.0;

/// What a query filters on, per vector (the same fields as [`super::VectorMetadata`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterFields {
    pub path: String,
    pub language: String,
    pub tags: Vec<String>,
}

impl FilterFields {
    /// [`VectorFilter::matches`] over these fields.
    pub fn matches(&self, filter: &VectorFilter) -> bool {
        (filter.languages.is_empty() || filter.languages.contains(&self.language))
            && filter.path_prefix.as_deref().is_none_or(|p| self.path.starts_with(p))
            && filter.tag.as_deref().is_none_or(|t| self.tags.iter().any(|x| x == t))
    }

    fn heap_bytes(&self) -> usize {
        self.path.capacity()
            + self.language.capacity()
            + self.tags.iter().map(|t| t.capacity() + std::mem::size_of::<String>()).sum::<usize>()
    }
}

/// Vectors of one dimension, quantized; see the module docs.
#[derive(Debug, Clone)]
pub struct QuantizedVectors {
    dims: usize,
    ids: Vec<String>,
    fields: Vec<FilterFields>,
    codes: Vec<i16>,
    /// `s / 32767` per vector: code × step = the reconstructed component.
    steps: Vec<f32>,
    scales: Vec<f32>,
    /// The exact f32 norm, computed as the exact scorer computes it.
    norms: Vec<f32>,
    /// The norm in f64 (bounds the scorers' rounding even when the f32 one underflows).
    norms64: Vec<f64>,
    bytes: usize,
}

impl QuantizedVectors {
    pub fn new(dims: usize) -> Self {
        QuantizedVectors {
            dims,
            ids: Vec::new(),
            fields: Vec::new(),
            codes: Vec::new(),
            steps: Vec::new(),
            scales: Vec::new(),
            norms: Vec::new(),
            norms64: Vec::new(),
            bytes: 0,
        }
    }

    /// Room for `n` vectors up front: growing by doubling would briefly hold twice the codes.
    pub fn with_capacity(dims: usize, n: usize) -> Self {
        QuantizedVectors {
            dims,
            ids: Vec::with_capacity(n),
            fields: Vec::with_capacity(n),
            codes: Vec::with_capacity(n.saturating_mul(dims)),
            steps: Vec::with_capacity(n),
            scales: Vec::with_capacity(n),
            norms: Vec::with_capacity(n),
            norms64: Vec::with_capacity(n),
            bytes: 0,
        }
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Approximate heap bytes held (what a cache budget counts).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes one more vector would add, before its strings.
    pub fn bytes_per_vector(dims: usize) -> usize {
        dims * 2 + 3 * 4 + 8 + 4 * std::mem::size_of::<String>() + std::mem::size_of::<Vec<String>>()
    }

    /// Adds a vector. Panics if `values.len() != dims` (callers validate first).
    pub fn push(&mut self, id: String, values: &[f32], fields: FilterFields) {
        assert_eq!(values.len(), self.dims, "vector of {} dims in a set of {}", values.len(), self.dims);
        let scale = values.iter().fold(0f32, |m, v| m.max(v.abs()));
        if scale > 0.0 && scale.is_finite() {
            self.codes.extend(values.iter().map(|v| (v / scale * CODE_MAX).round() as i16));
        } else {
            self.codes.extend(std::iter::repeat_n(0i16, self.dims));
        }
        self.bytes += Self::bytes_per_vector(self.dims) + id.capacity() + fields.heap_bytes();
        self.steps.push(scale / CODE_MAX);
        self.scales.push(scale);
        self.norms.push(norm_like_exact(values));
        self.norms64.push(values.iter().map(|v| f64::from(*v) * f64::from(*v)).sum::<f64>().sqrt());
        self.ids.push(id);
        self.fields.push(fields);
    }

    /// The ids of every vector that passes `filter` and could be in the exact top `top_k` for
    /// `query` (score descending, ties by id ascending). Re-scoring exactly these with their f32
    /// values and keeping the best `top_k` equals a full exact scan. In set order.
    pub fn candidates(&self, query: &[f32], top_k: usize, filter: &VectorFilter) -> Vec<&str> {
        self.candidates_many(&[CandidateQuery { vector: query, top_k, filter }]).pop().unwrap_or_default()
    }

    /// [`QuantizedVectors::candidates`] of each query, in order, in one pass over the codes:
    /// queries with the same filter read each stored vector once for all of them (the sub-queries
    /// of one search share their filter).
    pub fn candidates_many(&self, queries: &[CandidateQuery<'_>]) -> Vec<Vec<&str>> {
        let mut out: Vec<Vec<&str>> = vec![Vec::new(); queries.len()];
        // Queries grouped by filter, each group's passing vectors found once.
        let mut groups: Vec<(&VectorFilter, Vec<usize>)> = Vec::new();
        for (j, q) in queries.iter().enumerate() {
            if q.top_k == 0 || q.vector.len() != self.dims {
                continue;
            }
            match groups.iter_mut().find(|(f, _)| *f == q.filter) {
                Some((_, members)) => members.push(j),
                None => groups.push((q.filter, vec![j])),
            }
        }
        for (filter, members) in groups {
            let passing: Vec<usize> = (0..self.len()).filter(|&i| self.fields[i].matches(filter)).collect();
            let mut scoring: Vec<Scoring<'_>> = Vec::new();
            for j in members {
                let q = &queries[j];
                if passing.len() <= q.top_k {
                    out[j] = passing.iter().map(|&i| self.ids[i].as_str()).collect();
                } else if let Some(mut s) = Scoring::new(j, q, self.dims) {
                    s.bounds.reserve_exact(passing.len());
                    scoring.push(s);
                } else {
                    // A zero query: every exact score is 0, the top K are the K smallest ids.
                    let mut ids: Vec<&str> = passing.iter().map(|&i| self.ids[i].as_str()).collect();
                    ids.sort_unstable();
                    ids.truncate(q.top_k);
                    out[j] = ids;
                }
            }
            if scoring.is_empty() {
                continue;
            }
            // (lower, upper) bound of each passing vector's exact score, per scored query.
            for &i in &passing {
                let codes = &self.codes[i * self.dims..(i + 1) * self.dims];
                for s in &mut scoring {
                    let bound = self.bound(i, s, codes);
                    s.bounds.push(bound);
                }
            }
            for s in scoring {
                // The K-th best lower bound: at least K vectors score at least this much exactly.
                let mut lows: Vec<f64> = s.bounds.iter().map(|b| b.0).collect();
                let (_, kth, _) = lows.select_nth_unstable_by(s.top_k - 1, |a, b| b.total_cmp(a));
                let threshold = *kth;
                out[s.query] = passing
                    .iter()
                    .zip(&s.bounds)
                    .filter(|(_, b)| b.1 >= threshold)
                    .map(|(&i, _)| self.ids[i].as_str())
                    .collect();
            }
        }
        out
    }

    /// The (lower, upper) bound of stored vector `i`'s exact score for a scored query.
    fn bound(&self, i: usize, s: &Scoring<'_>, codes: &[i16]) -> (f64, f64) {
        let n = self.norms[i];
        if n == 0.0 {
            return (0.0, 0.0); // the exact scorer returns 0 for a zero vector
        }
        #[cfg(not(target_arch = "wasm32"))]
        let acc = dot_codes_portable(s.vector, codes);
        #[cfg(target_arch = "wasm32")]
        let acc = dot_codes_simd(&s.lanes, codes);
        let denom = f64::from(s.qn * n);
        let approx = f64::from(acc) * f64::from(self.steps[i]) / denom;
        let quantization = s.q1 * f64::from(self.scales[i]) / COMPONENT_ERROR_DIVISOR * 1.001;
        let rounding = s.relative * s.q2 * self.norms64[i] + s.underflow;
        // + the final f32 multiply/divide of the exact score (a few ulps).
        let err = (quantization + rounding) / denom + approx.abs() * 1e-6 + 1e-7;
        if approx.is_finite() && err.is_finite() {
            (approx - err, approx + err)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    }
}

/// One query of [`QuantizedVectors::candidates_many`].
#[derive(Debug, Clone, Copy)]
pub struct CandidateQuery<'a> {
    pub vector: &'a [f32],
    pub top_k: usize,
    pub filter: &'a VectorFilter,
}

/// What bounding one query's scores needs, computed once per query.
struct Scoring<'q> {
    /// Its index among the queries asked.
    query: usize,
    top_k: usize,
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    vector: &'q [f32],
    #[cfg(target_arch = "wasm32")]
    lanes: QueryLanes<'q>,
    qn: f32,
    q1: f64,
    q2: f64,
    /// Rounding of either f32 dot product: relative to Σ|qⱼ||vⱼ| ≤ ‖q‖‖v‖ (a sum of d products
    /// is within d·2⁻²⁴ of it; both scores, with room to spare), plus what underflow can lose.
    relative: f64,
    underflow: f64,
    bounds: Vec<(f64, f64)>,
}

impl<'q> Scoring<'q> {
    /// `None` for a zero query (nothing to bound: every exact score is 0).
    fn new(query: usize, q: &CandidateQuery<'q>, dims: usize) -> Option<Self> {
        let qn = norm(q.vector);
        if qn == 0.0 {
            return None;
        }
        let d = dims as f64;
        Some(Scoring {
            query,
            top_k: q.top_k,
            vector: q.vector,
            #[cfg(target_arch = "wasm32")]
            lanes: QueryLanes::new(q.vector),
            qn,
            q1: q.vector.iter().map(|x| f64::from(x.abs())).sum(),
            q2: q.vector.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt(),
            relative: 3.0 * d * f64::powi(2.0, -24),
            underflow: 4.0 * d * f64::powi(2.0, -149),
            bounds: Vec::new(),
        })
    }
}

/// Independent partial sums in [`dot_codes_portable`]: enough to fill the vector registers and hide the
/// adds' latency, so native builds (opt-level 3) turn the loop into SIMD by themselves.
#[cfg(not(target_arch = "wasm32"))]
const LANES: usize = 16;

/// `Σ qⱼ·cⱼ` in f32, summed in independent partial sums. The error bound in
/// [`QuantizedVectors::candidates`] holds for any order of summation, so this need not match the
/// exact scorer's order.
#[cfg(not(target_arch = "wasm32"))]
fn dot_codes_portable(query: &[f32], codes: &[i16]) -> f32 {
    let mut acc = [0f32; LANES];
    let (q_blocks, c_blocks) = (query.chunks_exact(LANES), codes.chunks_exact(LANES));
    let mut tail = 0f32;
    for (q, &c) in q_blocks.remainder().iter().zip(c_blocks.remainder()) {
        tail += q * f32::from(c);
    }
    for (q, c) in q_blocks.zip(c_blocks) {
        for k in 0..LANES {
            acc[k] += q[k] * f32::from(c[k]);
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The query as the wasm32 pre-score reads it: four components per SIMD128 vector, built once per
/// query rather than once per stored vector.
#[cfg(target_arch = "wasm32")]
struct QueryLanes<'a> {
    lanes: Vec<core::arch::wasm32::v128>,
    /// Components past the last whole group of eight.
    rest: &'a [f32],
}

#[cfg(target_arch = "wasm32")]
impl<'a> QueryLanes<'a> {
    fn new(query: &'a [f32]) -> Self {
        let blocks = query.chunks_exact(8);
        let rest = blocks.remainder();
        let lanes = blocks
            .flat_map(|q| q.chunks_exact(4))
            .map(|q| core::arch::wasm32::f32x4(q[0], q[1], q[2], q[3]))
            .collect();
        QueryLanes { lanes, rest }
    }
}

/// The same on wasm32, written with SIMD128 explicitly: the worker is built for size (opt-level
/// "s"), where the compiler does not vectorize loops. Every runtime edgerag targets has SIMD128
/// (Workers, Chromium, Firefox, Safari, Node). Eight codes a step into two f32x4 partial sums.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
// One 16-byte load per eight codes: building the vector lane by lane safely made the scan slower.
#[allow(unsafe_code)]
fn dot_codes_simd(query: &QueryLanes<'_>, codes: &[i16]) -> f32 {
    use core::arch::wasm32::{
        f32x4_add, f32x4_convert_i32x4, f32x4_extract_lane, f32x4_mul, f32x4_splat, i32x4_extend_high_i16x8,
        i32x4_extend_low_i16x8, v128, v128_load,
    };
    let (mut lo, mut hi) = (f32x4_splat(0.0), f32x4_splat(0.0));
    let c_blocks = codes.chunks_exact(8);
    let mut tail = 0f32;
    for (q, &c) in query.rest.iter().zip(c_blocks.remainder()) {
        tail += q * f32::from(c);
    }
    for (q, c) in query.lanes.chunks_exact(2).zip(c_blocks) {
        // SAFETY: `c` is 8 `i16`s, exactly the 16 bytes read; `v128_load` allows any alignment.
        let codes = unsafe { v128_load(c.as_ptr().cast::<v128>()) };
        let low = f32x4_convert_i32x4(i32x4_extend_low_i16x8(codes));
        let high = f32x4_convert_i32x4(i32x4_extend_high_i16x8(codes));
        lo = f32x4_add(lo, f32x4_mul(q[0], low));
        hi = f32x4_add(hi, f32x4_mul(q[1], high));
    }
    let sum = f32x4_add(lo, hi);
    f32x4_extract_lane::<0>(sum)
        + f32x4_extract_lane::<1>(sum)
        + f32x4_extract_lane::<2>(sum)
        + f32x4_extract_lane::<3>(sum)
        + tail
}

/// `‖v‖` exactly as [`cosine_with_norm`] computes the candidate's norm (same f32 operations in the
/// same order), so approximate and exact scores share a denominator.
fn norm_like_exact(values: &[f32]) -> f32 {
    let mut nb = 0f32;
    for y in values {
        nb += y * y;
    }
    nb.sqrt()
}

/// Exact re-scoring of candidates: `(score, id)` best first, at most `top_k`.
pub fn rescore<'a>(
    query: &[f32],
    top_k: usize,
    candidates: impl IntoIterator<Item = (&'a str, &'a [f32])>,
) -> Vec<(f32, String)> {
    let qn = norm(query);
    let mut top = super::TopK::new(top_k);
    for (id, values) in candidates {
        let score = cosine_with_norm(query, qn, values);
        if top.accepts(score, id) {
            top.push(score, id.to_string(), ());
        }
    }
    top.into_sorted().into_iter().map(|(s, id, ())| (s, id)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fields(path: &str, language: &str, tags: &[&str]) -> FilterFields {
        FilterFields {
            path: path.into(),
            language: language.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    /// Brute force: every passing vector scored exactly.
    fn exact(
        set: &[(String, Vec<f32>, FilterFields)],
        q: &[f32],
        k: usize,
        f: &VectorFilter,
    ) -> Vec<(f32, String)> {
        rescore(
            q,
            k,
            set.iter().filter(|(_, _, m)| m.matches(f)).map(|(id, v, _)| (id.as_str(), v.as_slice())),
        )
    }

    fn via_candidates(
        set: &[(String, Vec<f32>, FilterFields)],
        q: &[f32],
        k: usize,
        f: &VectorFilter,
    ) -> (Vec<(f32, String)>, usize) {
        let mut qv = QuantizedVectors::new(q.len());
        for (id, v, m) in set {
            qv.push(id.clone(), v, m.clone());
        }
        let cands = qv.candidates(q, k, f);
        let n = cands.len();
        let by_id: std::collections::HashMap<&str, &[f32]> =
            set.iter().map(|(id, v, _)| (id.as_str(), v.as_slice())).collect();
        (rescore(q, k, cands.into_iter().map(|id| (id, by_id[id]))), n)
    }

    #[test]
    fn few_candidates_for_spread_vectors() {
        // 2,000 pseudo-random unit-ish vectors: the candidates are K plus a few, and exact.
        let dims = 64;
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let set: Vec<(String, Vec<f32>, FilterFields)> = (0..2000)
            .map(|i| (format!("v{i:05}"), (0..dims).map(|_| next()).collect(), fields("a.rs", "rust", &[])))
            .collect();
        let q: Vec<f32> = (0..dims).map(|_| next()).collect();
        let (got, n) = via_candidates(&set, &q, 10, &VectorFilter::default());
        assert_eq!(got, exact(&set, &q, 10, &VectorFilter::default()));
        assert!((10..=20).contains(&n), "{n} candidates");
    }

    #[test]
    fn duplicates_zero_vectors_and_zero_query() {
        let mut set = Vec::new();
        for i in 0..30 {
            set.push((format!("dup{i:02}"), vec![0.5, -0.25, 0.125], fields("x/a.md", "markdown", &["t"])));
        }
        set.push(("zero".into(), vec![0.0, 0.0, 0.0], fields("x/b.md", "markdown", &[])));
        set.push(("best".into(), vec![1.0, 0.0, 0.0], fields("y/c.rs", "rust", &["t", "u"])));
        let q = [1.0, 0.0, 0.0];
        for k in [1, 5, 31, 40] {
            let f = VectorFilter::default();
            assert_eq!(via_candidates(&set, &q, k, &f).0, exact(&set, &q, k, &f), "k={k}");
        }
        // All ties at the top resolve by id, exactly as the scan does.
        let (got, _) = via_candidates(&set, &[0.5, -0.25, 0.125], 3, &VectorFilter::default());
        assert_eq!(got.iter().map(|(_, id)| id.as_str()).collect::<Vec<_>>(), ["dup00", "dup01", "dup02"]);
        // A zero query scores everything 0: smallest ids first.
        let (got, _) = via_candidates(&set, &[0.0, 0.0, 0.0], 2, &VectorFilter::default());
        assert_eq!(got, exact(&set, &[0.0, 0.0, 0.0], 2, &VectorFilter::default()));
        // Filters apply before top K.
        let f = VectorFilter { tag: Some("u".into()), ..VectorFilter::default() };
        assert_eq!(via_candidates(&set, &q, 5, &f).0, vec![(1.0, "best".to_string())]);
        let f =
            VectorFilter { path_prefix: Some("x/".into()), languages: vec!["markdown".into()], tag: None };
        assert_eq!(via_candidates(&set, &q, 3, &f).0, exact(&set, &q, 3, &f));
    }

    #[test]
    fn half_the_memory_of_f32() {
        let mut qv = QuantizedVectors::new(384);
        qv.push("a".into(), &[0.1; 384], fields("p", "rust", &[]));
        assert_eq!(qv.len(), 1);
        assert!(qv.bytes() < 384 * 4 * 6 / 10, "{} bytes", qv.bytes());
    }

    fn component() -> impl Strategy<Value = f32> {
        prop_oneof![
            4 => -1.0f32..1.0,
            1 => Just(0.0f32),
            1 => -1e-30f32..1e-30,
            1 => -1000.0f32..1000.0,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn candidates_then_rescoring_equal_the_exact_scan(
            dims in 1usize..24,
            raw in prop::collection::vec((prop::collection::vec(component(), 24), 0u8..4, 0u8..3, any::<bool>()), 0..120),
            dup_every in 1usize..8,
            q in prop::collection::vec(component(), 24),
            k in 1usize..25,
            lang in prop::option::of(0u8..4),
            prefix in prop::option::of(0u8..3),
            tag in any::<bool>(),
        ) {
            let langs = ["rust", "go", "python", "markdown"];
            let mut set: Vec<(String, Vec<f32>, FilterFields)> = Vec::new();
            for (i, (v, l, p, t)) in raw.iter().enumerate() {
                // Every `dup_every`-th vector repeats the previous one: ties.
                let values = if i > 0 && i % dup_every == 0 { set[i - 1].1.clone() } else { v[..dims].to_vec() };
                let tags: &[&str] = if *t { &["gen"] } else { &[] };
                set.push((format!("id{:03}", (i * 7919) % 1000), values, fields(&format!("d{p}/f.x"), langs[*l as usize], tags)));
            }
            set.dedup_by(|a, b| a.0 == b.0);
            let f = VectorFilter {
                languages: lang.map(|l| vec![langs[l as usize].to_string()]).unwrap_or_default(),
                path_prefix: prefix.map(|p| format!("d{p}/")),
                tag: tag.then(|| "gen".to_string()),
            };
            let query = &q[..dims];
            prop_assert_eq!(via_candidates(&set, query, k, &f).0, exact(&set, query, k, &f));
        }

        #[test]
        fn candidates_of_many_queries_in_one_pass_equal_each_query_alone(
            dims in 1usize..16,
            raw in prop::collection::vec((prop::collection::vec(component(), 16), 0u8..3), 0..80),
            queries in prop::collection::vec((prop::collection::vec(component(), 16), 0usize..20, prop::option::of(0u8..3)), 0..5),
        ) {
            let langs = ["rust", "go", "python"];
            let mut qv = QuantizedVectors::new(dims);
            for (i, (v, l)) in raw.iter().enumerate() {
                qv.push(format!("id{i:03}"), &v[..dims], fields("src/f.x", langs[*l as usize], &[]));
            }
            // Some queries share a filter (and so one pass), some do not; top_k 0 asks nothing.
            let filters: Vec<VectorFilter> = queries
                .iter()
                .map(|(_, _, l)| VectorFilter {
                    languages: l.map(|l| vec![langs[l as usize].to_string()]).unwrap_or_default(),
                    ..VectorFilter::default()
                })
                .collect();
            let asked: Vec<CandidateQuery<'_>> = queries
                .iter()
                .zip(&filters)
                .map(|((v, k, _), filter)| CandidateQuery { vector: &v[..dims], top_k: *k, filter })
                .collect();
            let together = qv.candidates_many(&asked);
            prop_assert_eq!(together.len(), asked.len());
            for (q, got) in asked.iter().zip(together) {
                prop_assert_eq!(got, qv.candidates(q.vector, q.top_k, q.filter));
            }
        }
    }
}
