//! A compact in-memory copy of a vector set that still gives **exact** top-K results.
//!
//! Each vector is stored as 8-bit codes scaled by its largest component (a quarter of the memory
//! of f32), with its exact f32 norm and the size of what the codes lost (the largest component
//! error and the error vector's length, both measured when the vector is added). The vector's
//! own id is not kept: the caller gives each vector a *key* (the local index: the row's `rowid`)
//! and reads the candidates back by it. Path, language and tags are kept once per distinct value.
//!
//! A query is quantized too, to integer codes fine enough that its own error is negligible (16-bit,
//! fewer for very wide vectors so that the sum cannot overflow), so the pre-score is an exact
//! integer dot product — on wasm32 eight products per SIMD instruction. Every stored vector's
//! approximate score comes with a bound on its error; every vector whose best possible exact score
//! could still reach the top K is a *candidate*. Re-scoring the candidates with their exact f32
//! values ([`super::topk::cosine_with_norm`]) then gives bit-for-bit the result of a full exact
//! scan — usually K plus a few dozen candidates, instead of the whole set.
//!
//! The error bound, for a query `q` and a stored vector `v` whose codes reconstruct `ṽ` (error
//! `e = v − ṽ`), the query's codes `q̃`: `q·v − q̃·ṽ = q·e + (q − q̃)·ṽ`, so the exact dot product is
//! within `min(‖q‖₁‖e‖∞, ‖q‖₂‖e‖₂) + ‖q − q̃‖₂ (‖v‖₂ + ‖e‖₂)` of the integer one. The exact scorer's
//! own f32 sum of `d` products is within `d · 2⁻²⁴` (relative to `‖q‖ ‖v‖`) of the real value. The
//! denominators (`‖q‖ · ‖v‖` as f32) are computed exactly as the exact scorer computes them, so they
//! cancel.
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

mod snapshot;
pub use snapshot::{append_part as append_snapshot_part, part_text as snapshot_part_text};

use super::topk::{cosine_with_norm, norm};
use super::VectorFilter;
use crate::path_glob::{PathGlobs, PathVerdicts};

/// Stored codes span `-CODE_MAX..=CODE_MAX`.
const CODE_MAX: f32 = 127.0;
/// A query's codes span at most `-QUERY_CODE_MAX..=QUERY_CODE_MAX`.
const QUERY_CODE_MAX: i32 = i16::MAX as i32;

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
        language_passes(&self.language, filter)
            && path_passes(&self.path, filter, &filter.globs())
            && tags_pass(&self.tags, filter)
    }
}

fn language_passes(language: &str, filter: &VectorFilter) -> bool {
    filter.languages.is_empty() || filter.languages.iter().any(|l| l == language)
}

fn path_passes(path: &str, filter: &VectorFilter, globs: &PathGlobs) -> bool {
    filter.path_prefix.as_deref().is_none_or(|p| path.starts_with(p)) && globs.is_match(path)
}

fn tags_pass(tags: &[String], filter: &VectorFilter) -> bool {
    filter.tag.as_deref().is_none_or(|t| tags.iter().any(|x| x == t))
}

/// Distinct values, each stored once and referred to by its index. The map holds a 64-bit hash of
/// each value, not the value again; on the (vanishingly rare) collision of two different values
/// the second is simply stored again, unshared.
#[derive(Debug, Clone, Default, PartialEq)]
struct Interned<T> {
    values: Vec<T>,
    index: HashMap<u64, u32>,
}

impl<T: Eq + Hash> Interned<T> {
    /// The value's index, and the heap bytes it added (0 when already present).
    fn intern(&mut self, value: T, heap: impl Fn(&T) -> usize) -> (u32, usize) {
        let hash = {
            let mut h = std::hash::DefaultHasher::new();
            value.hash(&mut h);
            h.finish()
        };
        if let Some(&i) = self.index.get(&hash) {
            if self.values[i as usize] == value {
                return (i, 0);
            }
        }
        let i = self.values.len() as u32;
        // The value, plus the map's slot (hash, index and control byte, at most 7/8 full).
        let bytes = heap(&value) + std::mem::size_of::<T>() + 20;
        self.values.push(value);
        self.index.entry(hash).or_insert(i);
        (i, bytes)
    }

    /// Values read back in their order (from a snapshot), adding their bytes as
    /// [`Interned::intern`] counts them.
    fn from_values(values: Vec<T>, heap: impl Fn(&T) -> usize, bytes: &mut usize) -> Self {
        let mut index = HashMap::with_capacity(values.len());
        for (i, value) in values.iter().enumerate() {
            let mut h = std::hash::DefaultHasher::new();
            value.hash(&mut h);
            index.entry(h.finish()).or_insert(i as u32);
            *bytes += heap(value) + std::mem::size_of::<T>() + 20;
        }
        Interned { values, index }
    }

    /// Whether each distinct value passes.
    fn passing(&self, passes: impl Fn(&T) -> bool) -> Vec<bool> {
        self.values.iter().map(passes).collect()
    }
}

/// One vector as the copy holds it: its 8-bit codes and what bounds their error, computed from
/// its f32 values alone — so a row encoded when the vector is written, stored as text and read
/// back ([`QuantizedRow::to_text`], [`QuantizedRow::from_text`]) is bit for bit the row the copy
/// would compute from the f32 values, and a copy built from stored rows gives the same candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedRow {
    /// `s / 127`: code × step = the reconstructed component.
    step: f32,
    /// The exact f32 norm, computed as the exact scorer computes it.
    norm: f32,
    /// The norm in f64 (bounds the scorers' rounding even when the f32 one underflows).
    norm64: f64,
    /// `‖e‖∞` and `‖e‖₂` of the reconstruction error, rounded up.
    error_max: f32,
    error_len: f32,
    codes: Vec<i8>,
}

/// Bytes of a stored row before its codes: step, norm, norm64, error_max, error_len.
const ROW_HEADER: usize = 4 + 4 + 8 + 4 + 4;

impl QuantizedRow {
    /// Encodes `values`: codes scaled by the largest component (all zero for a zero or
    /// non-finite scale), the norms, and the reconstruction error's size.
    pub fn encode(values: &[f32]) -> Self {
        let scale = values.iter().fold(0f32, |m, v| m.max(v.abs()));
        let usable = scale > 0.0 && scale.is_finite();
        let step = if usable { scale / CODE_MAX } else { 0.0 };
        let (mut error_max, mut error_sq) = (0f64, 0f64);
        let codes = values
            .iter()
            .map(|&v| {
                let code = if usable { (v / scale * CODE_MAX).round() as i8 } else { 0 };
                let e = (f64::from(v) - f64::from(code) * f64::from(step)).abs();
                error_max = error_max.max(e);
                error_sq += e * e;
                code
            })
            .collect();
        QuantizedRow {
            step,
            norm: norm_like_exact(values),
            norm64: values.iter().map(|v| f64::from(*v) * f64::from(*v)).sum::<f64>().sqrt(),
            error_max: round_up(error_max),
            error_len: round_up(error_sq.sqrt()),
            codes,
        }
    }

    pub fn dims(&self) -> usize {
        self.codes.len()
    }

    /// Bytes of a stored row's text for `dims` (what [`QuantizedRow::to_text`] returns).
    pub fn text_len(dims: usize) -> usize {
        (ROW_HEADER + dims).div_ceil(3) * 4
    }

    /// The row as text for storage: base64 of its fields, little-endian, then its codes.
    pub fn to_text(&self) -> String {
        use base64::Engine as _;
        let mut bytes = Vec::with_capacity(ROW_HEADER + self.codes.len());
        bytes.extend_from_slice(&self.step.to_le_bytes());
        bytes.extend_from_slice(&self.norm.to_le_bytes());
        bytes.extend_from_slice(&self.norm64.to_le_bytes());
        bytes.extend_from_slice(&self.error_max.to_le_bytes());
        bytes.extend_from_slice(&self.error_len.to_le_bytes());
        bytes.extend(self.codes.iter().map(|&c| c as u8));
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// A row of `dims` from [`QuantizedRow::to_text`]'s text; `None` for text that is not one (other
    /// dimension, not base64, a code outside `-127..=127`).
    pub fn from_text(dims: usize, text: &str) -> Option<Self> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD.decode(text).ok()?;
        if bytes.len() != ROW_HEADER + dims {
            return None;
        }
        let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let codes: Vec<i8> = bytes[ROW_HEADER..].iter().map(|&b| b as i8).collect();
        if codes.contains(&i8::MIN) {
            return None;
        }
        Some(QuantizedRow {
            step: f32_at(0),
            norm: f32_at(4),
            norm64: f64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")),
            error_max: f32_at(16),
            error_len: f32_at(20),
            codes,
        })
    }
}

/// Vectors of one dimension, quantized; see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedVectors {
    dims: usize,
    keys: Vec<i64>,
    codes: Vec<i8>,
    /// `s / 127` per vector: code × step = the reconstructed component.
    steps: Vec<f32>,
    /// The exact f32 norm, computed as the exact scorer computes it.
    norms: Vec<f32>,
    /// The norm in f64 (bounds the scorers' rounding even when the f32 one underflows).
    norms64: Vec<f64>,
    /// `‖e‖∞` and `‖e‖₂` of the reconstruction error, rounded up.
    error_max: Vec<f32>,
    error_len: Vec<f32>,
    path_of: Vec<u32>,
    language_of: Vec<u32>,
    tags_of: Vec<u32>,
    /// Rows gone since the copy was built: kept in place, never a candidate.
    removed: Vec<bool>,
    removed_count: usize,
    paths: Interned<String>,
    languages: Interned<String>,
    tag_sets: Interned<Vec<String>>,
    /// Which paths passed the last few path filters (prefix, globs).
    path_verdicts: PathVerdicts<(Option<String>, Vec<String>)>,
    bytes: usize,
}

impl QuantizedVectors {
    pub fn new(dims: usize) -> Self {
        Self::with_capacity(dims, 0)
    }

    /// Room for `n` vectors up front: growing by doubling would briefly hold twice the codes.
    pub fn with_capacity(dims: usize, n: usize) -> Self {
        QuantizedVectors {
            dims,
            keys: Vec::with_capacity(n),
            codes: Vec::with_capacity(n.saturating_mul(dims)),
            steps: Vec::with_capacity(n),
            norms: Vec::with_capacity(n),
            norms64: Vec::with_capacity(n),
            error_max: Vec::with_capacity(n),
            error_len: Vec::with_capacity(n),
            path_of: Vec::with_capacity(n),
            language_of: Vec::with_capacity(n),
            tags_of: Vec::with_capacity(n),
            removed: Vec::with_capacity(n),
            removed_count: 0,
            paths: Interned::default(),
            languages: Interned::default(),
            tag_sets: Interned::default(),
            path_verdicts: PathVerdicts::default(),
            bytes: 0,
        }
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Approximate heap bytes held (what a cache budget counts).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes one more vector adds, besides a path, language or tag set not seen before.
    pub fn bytes_per_vector(dims: usize) -> usize {
        dims + 8 + 4 + 4 + 8 + 4 + 4 + 3 * 4 + 1
    }

    /// Adds a vector under `key` (what [`QuantizedVectors::candidates`] returns for it); keys are
    /// pushed in ascending order (the local index pushes rows by `rowid`). Panics if
    /// `values.len() != dims` (callers validate first).
    pub fn push(&mut self, key: i64, values: &[f32], fields: FilterFields) {
        assert_eq!(values.len(), self.dims, "vector of {} dims in a set of {}", values.len(), self.dims);
        self.push_row(key, QuantizedRow::encode(values), fields);
    }

    /// [`QuantizedVectors::push`] for a vector already encoded ([`QuantizedRow::encode`], or read
    /// back from its stored text). Panics if the row is not of `dims`.
    pub fn push_row(&mut self, key: i64, row: QuantizedRow, fields: FilterFields) {
        assert_eq!(row.dims(), self.dims, "row of {} dims in a set of {}", row.dims(), self.dims);
        debug_assert!(self.keys.last().is_none_or(|&last| key > last), "keys pushed out of order");
        let i = self.keys.len();
        self.keys.push(key);
        self.codes.resize(self.codes.len() + self.dims, 0);
        self.steps.push(0.0);
        self.norms.push(0.0);
        self.norms64.push(0.0);
        self.error_max.push(0.0);
        self.error_len.push(0.0);
        self.path_of.push(0);
        self.language_of.push(0);
        self.tags_of.push(0);
        self.removed.push(false);
        self.bytes += Self::bytes_per_vector(self.dims);
        self.set(i, row, fields);
    }

    /// Brings the copy up to date with one changed row: replaces the vector under `key`, or adds
    /// it when `key` is above every key held (a new row). `false` when neither holds — a new key
    /// below the last one, which the copy cannot place (rebuild it instead). Panics if
    /// `values.len() != dims`.
    pub fn upsert(&mut self, key: i64, values: &[f32], fields: FilterFields) -> bool {
        assert_eq!(values.len(), self.dims, "vector of {} dims in a set of {}", values.len(), self.dims);
        self.upsert_row(key, QuantizedRow::encode(values), fields)
    }

    /// [`QuantizedVectors::upsert`] for a vector already encoded. Panics if the row is not of `dims`.
    pub fn upsert_row(&mut self, key: i64, row: QuantizedRow, fields: FilterFields) -> bool {
        assert_eq!(row.dims(), self.dims, "row of {} dims in a set of {}", row.dims(), self.dims);
        match self.keys.binary_search(&key) {
            Ok(i) => {
                if self.removed[i] {
                    self.removed[i] = false;
                    self.removed_count -= 1;
                }
                self.set(i, row, fields);
                true
            }
            Err(i) if i == self.keys.len() => {
                self.push_row(key, row, fields);
                true
            }
            Err(_) => false,
        }
    }

    /// Brings the copy up to date with a row that is gone (or no longer of this dimension).
    pub fn remove(&mut self, key: i64) {
        if let Ok(i) = self.keys.binary_search(&key) {
            if !self.removed[i] {
                self.removed[i] = true;
                self.removed_count += 1;
            }
        }
    }

    /// Vectors removed since the copy was built (their memory is still held).
    pub fn removed(&self) -> usize {
        self.removed_count
    }

    /// Places `row` with `fields` at position `i`.
    fn set(&mut self, i: usize, row: QuantizedRow, fields: FilterFields) {
        let string_heap = |s: &String| s.capacity();
        let (path, b1) = self.paths.intern(fields.path, string_heap);
        let (language, b2) = self.languages.intern(fields.language, string_heap);
        let (tags, b3) = self.tag_sets.intern(fields.tags, |t: &Vec<String>| {
            t.iter().map(|s| s.capacity() + std::mem::size_of::<String>()).sum()
        });
        self.bytes += b1 + b2 + b3;
        self.codes[i * self.dims..(i + 1) * self.dims].copy_from_slice(&row.codes);
        self.steps[i] = row.step;
        self.norms[i] = row.norm;
        self.norms64[i] = row.norm64;
        self.error_max[i] = row.error_max;
        self.error_len[i] = row.error_len;
        self.path_of[i] = path;
        self.language_of[i] = language;
        self.tags_of[i] = tags;
    }

    /// The keys of every vector that passes `filter` and could be in the exact top `top_k` for
    /// `query` (score descending, ties by id ascending). Re-scoring exactly these with their f32
    /// values and keeping the best `top_k` equals a full exact scan. In set order. `None` for a
    /// query whose f32 norm is 0: every exact score is 0 and the top K are the smallest ids, which
    /// the copy does not hold — scan instead.
    pub fn candidates(&self, query: &[f32], top_k: usize, filter: &VectorFilter) -> Option<Vec<i64>> {
        self.candidates_many(&[CandidateQuery { vector: query, top_k, filter }])
            .pop()
            .unwrap_or(Some(Vec::new()))
    }

    /// The indexes of the vectors that pass `filter`.
    fn passing(&self, filter: &VectorFilter) -> Vec<usize> {
        // Globs are matched once per distinct path, not once per vector, and a filter sent again
        // finds its answer remembered (only paths added since are matched).
        let count = self.paths.values.len();
        let paths = if filter.path_prefix.is_none() && filter.path_globs.is_empty() {
            vec![true; count]
        } else {
            let key = (filter.path_prefix.clone(), filter.path_globs.clone());
            let mut globs: Option<PathGlobs> = None;
            self.path_verdicts.all(key, count, |i| {
                let globs = globs.get_or_insert_with(|| filter.globs());
                path_passes(&self.paths.values[i], filter, globs)
            })
        };
        let languages = self.languages.passing(|l| language_passes(l, filter));
        let tags = self.tag_sets.passing(|t| tags_pass(t, filter));
        (0..self.len())
            .filter(|&i| {
                !self.removed[i]
                    && paths[self.path_of[i] as usize]
                    && languages[self.language_of[i] as usize]
                    && tags[self.tags_of[i] as usize]
            })
            .collect()
    }

    /// [`QuantizedVectors::candidates`] of each query, in order, in one pass over the codes:
    /// queries with the same filter read each stored vector once for all of them (the sub-queries
    /// of one search share their filter).
    pub fn candidates_many(&self, queries: &[CandidateQuery<'_>]) -> Vec<Option<Vec<i64>>> {
        let mut out: Vec<Option<Vec<i64>>> = vec![Some(Vec::new()); queries.len()];
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
            let passing = self.passing(filter);
            let mut scoring: Vec<Scoring> = Vec::new();
            for j in members {
                let q = &queries[j];
                if passing.len() <= q.top_k {
                    out[j] = Some(passing.iter().map(|&i| self.keys[i]).collect());
                } else if let Some(mut s) = Scoring::new(j, q, self.dims) {
                    s.bounds.reserve_exact(passing.len());
                    scoring.push(s);
                } else {
                    out[j] = None;
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
                out[s.query] = Some(
                    passing
                        .iter()
                        .zip(&s.bounds)
                        .filter(|(_, b)| b.1 >= threshold)
                        .map(|(&i, _)| self.keys[i])
                        .collect(),
                );
            }
        }
        out
    }

    /// The (lower, upper) bound of stored vector `i`'s exact score for a scored query.
    fn bound(&self, i: usize, s: &Scoring, codes: &[i8]) -> (f64, f64) {
        let n = self.norms[i];
        if n == 0.0 {
            return (0.0, 0.0); // the exact scorer returns 0 for a zero vector
        }
        #[cfg(not(target_arch = "wasm32"))]
        let acc = dot_codes_portable(&s.codes, codes);
        #[cfg(target_arch = "wasm32")]
        let acc = dot_codes_simd(&s.lanes, codes);
        let denom = f64::from(s.qn * n);
        let approx = f64::from(acc) * s.step * f64::from(self.steps[i]) / denom;
        let (e_max, e_len) = (f64::from(self.error_max[i]), f64::from(self.error_len[i]));
        let stored = (s.q1 * e_max).min(s.q2 * e_len);
        let query = s.query_error * (self.norms64[i] + e_len);
        let quantization = (stored + query) * 1.001;
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

/// `x` as an f32 no smaller than it.
fn round_up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) < x {
        f.next_up()
    } else {
        f
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
struct Scoring {
    /// Its index among the queries asked.
    query: usize,
    top_k: usize,
    /// The query's integer codes and their step: `q̃ = codes × step`.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    codes: Vec<i16>,
    #[cfg(target_arch = "wasm32")]
    lanes: QueryLanes,
    step: f64,
    /// `‖q − q̃‖₂`, rounded up.
    query_error: f64,
    qn: f32,
    q1: f64,
    q2: f64,
    /// Rounding of the exact scorer's f32 dot product: relative to Σ|qⱼ||vⱼ| ≤ ‖q‖‖v‖ (a sum of d
    /// products is within d·2⁻²⁴ of it, with room to spare), plus what underflow can lose.
    relative: f64,
    underflow: f64,
    bounds: Vec<(f64, f64)>,
}

impl Scoring {
    /// `None` for a query whose f32 norm is 0 (the exact scorer then scores everything 0).
    fn new(query: usize, q: &CandidateQuery<'_>, dims: usize) -> Option<Self> {
        let qn = norm(q.vector);
        let largest = q.vector.iter().fold(0f64, |m, x| m.max(f64::from(x.abs())));
        if qn == 0.0 || largest == 0.0 {
            return None;
        }
        // |Σ aⱼcⱼ| ≤ dims · code_max · 127 must fit an i32 (exactly, on every target).
        let code_max =
            (i64::from(i32::MAX) / (127 * dims.max(1) as i64)).clamp(1, i64::from(QUERY_CODE_MAX)) as i32;
        let step = largest / f64::from(code_max);
        let mut error_sq = 0f64;
        let codes: Vec<i16> = q
            .vector
            .iter()
            .map(|&x| {
                let code = (f64::from(x) / step).round().clamp(-f64::from(code_max), f64::from(code_max));
                let e = f64::from(x) - code * step;
                error_sq += e * e;
                code as i16
            })
            .collect();
        let d = dims as f64;
        Some(Scoring {
            query,
            top_k: q.top_k,
            #[cfg(target_arch = "wasm32")]
            lanes: QueryLanes::new(&codes),
            codes,
            step,
            query_error: error_sq.sqrt() * (1.0 + 1e-9) + f64::MIN_POSITIVE,
            qn,
            q1: q.vector.iter().map(|x| f64::from(x.abs())).sum(),
            q2: q.vector.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt(),
            relative: 3.0 * d * f64::powi(2.0, -24),
            underflow: 4.0 * d * f64::powi(2.0, -149),
            bounds: Vec::new(),
        })
    }
}

/// Independent partial sums in [`dot_codes_portable`]: enough to fill the vector registers, so
/// native builds (opt-level 3) turn the loop into SIMD by themselves.
#[cfg(not(target_arch = "wasm32"))]
const LANES: usize = 16;

/// `Σ aⱼ·cⱼ`, exactly (see [`Scoring::new`] for why it cannot overflow).
#[cfg(not(target_arch = "wasm32"))]
fn dot_codes_portable(query: &[i16], codes: &[i8]) -> i32 {
    let mut acc = [0i32; LANES];
    let (q_blocks, c_blocks) = (query.chunks_exact(LANES), codes.chunks_exact(LANES));
    let mut tail = 0i32;
    for (&q, &c) in q_blocks.remainder().iter().zip(c_blocks.remainder()) {
        tail += i32::from(q) * i32::from(c);
    }
    for (q, c) in q_blocks.zip(c_blocks) {
        for k in 0..LANES {
            acc[k] += i32::from(q[k]) * i32::from(c[k]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// The query as the wasm32 pre-score reads it: eight codes per SIMD128 vector, built once per
/// query rather than once per stored vector.
#[cfg(target_arch = "wasm32")]
struct QueryLanes {
    lanes: Vec<core::arch::wasm32::v128>,
    /// Codes past the last whole group of sixteen.
    rest: Vec<i16>,
}

#[cfg(target_arch = "wasm32")]
impl QueryLanes {
    fn new(codes: &[i16]) -> Self {
        let blocks = codes.chunks_exact(16);
        let rest = blocks.remainder().to_vec();
        let lanes = blocks
            .flat_map(|q| q.chunks_exact(8))
            .map(|q| core::arch::wasm32::i16x8(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]))
            .collect();
        QueryLanes { lanes, rest }
    }
}

/// The same on wasm32, written with SIMD128 explicitly: the worker is built for size (opt-level
/// "s"), where the compiler does not vectorize loops. Every runtime edgerag targets has SIMD128
/// (Workers, Chromium, Firefox, Safari, Node). Sixteen codes a step: widened to two i16x8 and
/// multiplied pairwise into i32 lanes (`i32x4.dot_i16x8_s`).
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
// One 16-byte load per sixteen codes: building the vector lane by lane safely made the scan slower.
#[allow(unsafe_code)]
fn dot_codes_simd(query: &QueryLanes, codes: &[i8]) -> i32 {
    use core::arch::wasm32::{
        i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_add, i32x4_dot_i16x8, i32x4_extract_lane,
        i32x4_splat, v128, v128_load,
    };
    let mut acc = i32x4_splat(0);
    let c_blocks = codes.chunks_exact(16);
    let mut tail = 0i32;
    for (&q, &c) in query.rest.iter().zip(c_blocks.remainder()) {
        tail += i32::from(q) * i32::from(c);
    }
    for (q, c) in query.lanes.chunks_exact(2).zip(c_blocks) {
        // SAFETY: `c` is 16 `i8`s, exactly the 16 bytes read; `v128_load` allows any alignment.
        let codes = unsafe { v128_load(c.as_ptr().cast::<v128>()) };
        acc = i32x4_add(acc, i32x4_dot_i16x8(q[0], i16x8_extend_low_i8x16(codes)));
        acc = i32x4_add(acc, i32x4_dot_i16x8(q[1], i16x8_extend_high_i8x16(codes)));
    }
    i32x4_extract_lane::<0>(acc)
        + i32x4_extract_lane::<1>(acc)
        + i32x4_extract_lane::<2>(acc)
        + i32x4_extract_lane::<3>(acc)
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

    /// The candidates (keys are indexes into `set`) re-scored exactly, and how many there were;
    /// `None` when the copy cannot narrow the query.
    fn via_candidates(
        set: &[(String, Vec<f32>, FilterFields)],
        q: &[f32],
        k: usize,
        f: &VectorFilter,
    ) -> Option<(Vec<(f32, String)>, usize)> {
        let mut qv = QuantizedVectors::new(q.len());
        for (i, (_, v, m)) in set.iter().enumerate() {
            qv.push(i as i64, v, m.clone());
        }
        let keys = qv.candidates(q, k, f)?;
        let n = keys.len();
        let found = keys.into_iter().map(|i| (set[i as usize].0.as_str(), set[i as usize].1.as_slice()));
        Some((rescore(q, k, found), n))
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
        let (got, n) = via_candidates(&set, &q, 10, &VectorFilter::default()).expect("narrowed");
        assert_eq!(got, exact(&set, &q, 10, &VectorFilter::default()));
        assert!((10..=20).contains(&n), "{n} candidates");
    }

    #[test]
    fn a_path_filter_sent_again_sees_the_vectors_added_since() {
        let mut qv = QuantizedVectors::new(2);
        qv.push(1, &[1.0, 0.0], fields("src/a.py", "python", &[]));
        qv.push(2, &[0.9, 0.1], fields("src/b.rs", "rust", &[]));
        let by_glob = VectorFilter { path_globs: vec!["**/*.py".into()], ..Default::default() };
        let by_prefix = VectorFilter { path_prefix: Some("lib/".into()), ..Default::default() };
        let sorted = |mut keys: Vec<i64>| {
            keys.sort_unstable();
            keys
        };
        let ask = |qv: &QuantizedVectors, f: &VectorFilter| {
            sorted(qv.candidates(&[1.0, 0.0], 10, f).unwrap_or_default())
        };
        assert_eq!(ask(&qv, &by_glob), [1]);
        assert_eq!(ask(&qv, &by_prefix), Vec::<i64>::new());
        // New paths after both filters were answered (and remembered), and one more vector of a known path.
        qv.push(3, &[0.8, 0.2], fields("lib/c.py", "python", &[]));
        qv.push(4, &[0.7, 0.3], fields("lib/d.rs", "rust", &[]));
        qv.push(5, &[0.6, 0.4], fields("src/a.py", "python", &[]));
        assert_eq!(ask(&qv, &by_glob), [1, 3, 5]);
        assert_eq!(ask(&qv, &by_prefix), [3, 4]);
        // A clone starts with nothing remembered and answers the same.
        assert_eq!(ask(&qv.clone(), &by_glob), [1, 3, 5]);
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
            assert_eq!(via_candidates(&set, &q, k, &f).expect("narrowed").0, exact(&set, &q, k, &f), "k={k}");
        }
        // All ties at the top resolve by id, exactly as the scan does.
        let (got, _) =
            via_candidates(&set, &[0.5, -0.25, 0.125], 3, &VectorFilter::default()).expect("narrowed");
        assert_eq!(got.iter().map(|(_, id)| id.as_str()).collect::<Vec<_>>(), ["dup00", "dup01", "dup02"]);
        // A zero query scores everything 0 (smallest ids first), which the copy cannot narrow.
        assert!(via_candidates(&set, &[0.0, 0.0, 0.0], 2, &VectorFilter::default()).is_none());
        // Unless no more vectors pass than asked for: then all of them.
        let f = VectorFilter { tag: Some("u".into()), ..VectorFilter::default() };
        assert_eq!(via_candidates(&set, &[0.0, 0.0, 0.0], 2, &f).expect("narrowed").1, 1);
        // Filters apply before top K.
        let f = VectorFilter { tag: Some("u".into()), ..VectorFilter::default() };
        assert_eq!(via_candidates(&set, &q, 5, &f).expect("narrowed").0, vec![(1.0, "best".to_string())]);
        let f = VectorFilter {
            path_prefix: Some("x/".into()),
            languages: vec!["markdown".into()],
            ..VectorFilter::default()
        };
        assert_eq!(via_candidates(&set, &q, 3, &f).expect("narrowed").0, exact(&set, &q, 3, &f));
    }

    #[test]
    fn about_a_quarter_of_the_memory_of_f32() {
        let mut qv = QuantizedVectors::new(384);
        for i in 0..100 {
            // Chunks of a few files: each path, language and tag set is held once.
            qv.push(i, &[0.1; 384], fields(&format!("src/file{}.rs", i % 10), "rust", &["gen"]));
        }
        assert_eq!(qv.len(), 100);
        assert_eq!((qv.paths.values.len(), qv.languages.values.len(), qv.tag_sets.values.len()), (10, 1, 1));
        let per_vector = qv.bytes() / 100;
        assert!(per_vector < 384 * 4 * 3 / 10, "{per_vector} bytes a vector");
        assert!(per_vector >= 384, "the codes alone are {} bytes", 384);
    }

    /// Whether `v`'s exact score for `q` lies within the bound the copy gives it.
    fn bound_holds(v: &[f32], q: &[f32]) -> bool {
        let mut qv = QuantizedVectors::new(v.len());
        qv.push(0, v, fields("a", "rust", &[]));
        let filter = VectorFilter::default();
        let s = Scoring::new(0, &CandidateQuery { vector: q, top_k: 1, filter: &filter }, v.len())
            .expect("a non-zero query");
        let (low, high) = qv.bound(0, &s, &qv.codes);
        let exact = f64::from(cosine_with_norm(q, norm(q), v));
        low <= exact && exact <= high
    }

    #[test]
    fn the_bound_holds_when_every_error_points_the_same_way() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for dims in [8, 24, 384] {
            // The stored codes' error along the query: the query is that error (plus a little).
            let v: Vec<f32> = (0..dims).map(|_| next() - 0.5).collect();
            let scale = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let error: Vec<f32> =
                v.iter().map(|x| x - (x / scale * CODE_MAX).round() * (scale / CODE_MAX)).collect();
            let q: Vec<f32> = error.iter().zip(&v).map(|(e, x)| e * 1000.0 + x * 1e-3).collect();
            assert!(bound_holds(&v, &q), "stored error, {dims} dims");
            // The query's codes' error along a vector the codes hold exactly: every query component
            // just under half a step past a code, the same sign as the vector's.
            let v: Vec<f32> = (0..dims).map(|j| if j % 2 == 0 { 127.0 } else { -47.0 }).collect();
            let mut q: Vec<f32> = (0..dims)
                .map(|_| (next() * 30000.0).floor() + 0.4999)
                .zip(&v)
                .map(|(m, x)| m.copysign(*x))
                .collect();
            q[0] = 32767.0;
            assert!(bound_holds(&v, &q), "query error, {dims} dims");
        }
    }

    #[test]
    fn wide_vectors_score_without_overflow() {
        // 4,096 dims of the largest codes: the query's codes shrink so the integer sum fits.
        let dims = 4096;
        let set: Vec<(String, Vec<f32>, FilterFields)> = (0..40)
            .map(|i| {
                let v: Vec<f32> = (0..dims).map(|j| if (i + j) % 3 == 0 { -1.0 } else { 1.0 }).collect();
                (format!("w{i:02}"), v, fields("a", "rust", &[]))
            })
            .collect();
        let q = vec![1.0f32; dims];
        let f = VectorFilter::default();
        let (got, _) = via_candidates(&set, &q, 5, &f).expect("narrowed");
        assert_eq!(got, exact(&set, &q, 5, &f));
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
            glob in prop::option::of(0usize..3),
        ) {
            let langs = ["rust", "go", "python", "markdown"];
            let globs = ["*.x", "d1/**", "d2/*.y"];
            let mut set: Vec<(String, Vec<f32>, FilterFields)> = Vec::new();
            for (i, (v, l, p, t)) in raw.iter().enumerate() {
                // Every `dup_every`-th vector repeats the previous one: ties.
                let values = if i > 0 && i % dup_every == 0 { set[i - 1].1.clone() } else { v[..dims].to_vec() };
                let tags: &[&str] = if *t { &["gen"] } else { &[] };
                set.push((format!("id{:03}", (i * 7919) % 1000), values, fields(&format!("d{p}/f.{}", if i % 2 == 0 { "x" } else { "y" }), langs[*l as usize], tags)));
            }
            set.dedup_by(|a, b| a.0 == b.0);
            let f = VectorFilter {
                languages: lang.map(|l| vec![langs[l as usize].to_string()]).unwrap_or_default(),
                path_prefix: prefix.map(|p| format!("d{p}/")),
                tag: tag.then(|| "gen".to_string()),
                path_globs: glob.map(|g| vec![globs[g].to_string()]).unwrap_or_default(),
            };
            let query = &q[..dims];
            let want = exact(&set, query, k, &f);
            match via_candidates(&set, query, k, &f) {
                Some((got, _)) => prop_assert_eq!(got, want),
                // Only a query whose f32 norm is 0 (every exact score is 0) is left to the scan.
                None => prop_assert_eq!(norm(query), 0.0),
            }
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
                qv.push(i as i64, &v[..dims], fields("src/f.x", langs[*l as usize], &[]));
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

        #[test]
        fn a_stored_row_reads_back_bit_for_bit(values in prop::collection::vec(component(), 1..40)) {
            let row = QuantizedRow::encode(&values);
            let text = row.to_text();
            prop_assert_eq!(text.len(), QuantizedRow::text_len(values.len()));
            let back = QuantizedRow::from_text(values.len(), &text).expect("a stored row");
            // Bit for bit, not merely equal as numbers (a norm of -0.0 would compare equal to 0.0).
            prop_assert_eq!(back.step.to_bits(), row.step.to_bits());
            prop_assert_eq!(back.norm.to_bits(), row.norm.to_bits());
            prop_assert_eq!(back.norm64.to_bits(), row.norm64.to_bits());
            prop_assert_eq!(back.error_max.to_bits(), row.error_max.to_bits());
            prop_assert_eq!(back.error_len.to_bits(), row.error_len.to_bits());
            prop_assert_eq!(&back, &row);
            prop_assert!(QuantizedRow::from_text(values.len() + 1, &text).is_none());
        }
    }

    #[test]
    fn a_copy_built_from_stored_rows_is_the_copy_built_from_values() {
        let dims = 12;
        let vector = |i: usize| -> Vec<f32> {
            (0..dims)
                .map(|j| ((i * 31 + j * 17) % 23) as f32 / 7.0 - 1.5 + if j == i % dims { 40.0 } else { 0.0 })
                .collect()
        };
        let mut from_values = QuantizedVectors::new(dims);
        let mut from_text = QuantizedVectors::new(dims);
        for i in 0..50 {
            let f = fields(&format!("src/{}.rs", i % 4), "rust", &[]);
            from_values.push(i as i64, &vector(i), f.clone());
            let text = QuantizedRow::encode(&vector(i)).to_text();
            from_text.push_row(i as i64, QuantizedRow::from_text(dims, &text).expect("row"), f);
        }
        // Replacing and appending alike.
        from_values.upsert(7, &vector(70), fields("src/x.rs", "go", &["t"]));
        from_text.upsert_row(7, QuantizedRow::encode(&vector(70)), fields("src/x.rs", "go", &["t"]));
        from_values.upsert(60, &vector(60), fields("src/y.rs", "go", &[]));
        from_text.upsert_row(60, QuantizedRow::encode(&vector(60)), fields("src/y.rs", "go", &[]));
        assert_eq!(from_values, from_text);
        let q: Vec<f32> = (0..dims).map(|j| j as f32 - 5.0).collect();
        let got = from_text.candidates(&q, 5, &VectorFilter::default()).expect("narrowed");
        assert!(!got.is_empty());
        assert_eq!(Some(got), from_values.candidates(&q, 5, &VectorFilter::default()));
    }

    #[test]
    fn text_that_is_not_a_stored_row_is_refused() {
        let row = QuantizedRow::encode(&[0.5, -1.0, 0.25]);
        let text = row.to_text();
        assert_eq!(QuantizedRow::from_text(3, &text), Some(row.clone()));
        assert_eq!(QuantizedRow::from_text(2, &text), None, "another dimension");
        assert_eq!(QuantizedRow::from_text(3, "not base64!"), None);
        // A code of -128 is never written (codes span -127..=127).
        use base64::Engine as _;
        let mut bytes = base64::engine::general_purpose::STANDARD.decode(&text).expect("base64");
        *bytes.last_mut().expect("codes") = 0x80;
        let bad = base64::engine::general_purpose::STANDARD.encode(bytes);
        assert_eq!(QuantizedRow::from_text(3, &bad), None);
    }
}
