//! Semantic cliffs: where the meaning of neighbouring sentences changes, and the children cut
//! there under the size limits.
//!
//! The requirement reads "cut where similarity drops past the threshold". We read it as an
//! absolute level, not a difference: a cliff is a boundary between two neighbouring sentences
//! whose cosine similarity is *below* `similarityThreshold` (0.3). A drop measured from the
//! previous pair's similarity would make the cut depend on the sentence before the pair, so a
//! paragraph of uniformly unrelated sentences would never be cut.
//!
//! Sizes come after cliffs: a segment over `maxChildSize` is split at its least similar boundary
//! near `targetChildSize` (the max is hard: no child is ever longer), and a segment under
//! `minChildSize` joins the neighbour it is most similar to when the result stays within the max.
use std::ops::Range;

use super::ParentChildConfig;

/// Cosine similarity; 0 when either vector is all zeros (a text without words). Summed in 8
/// fixed lanes (vectorizes; the order is fixed, so every platform gets the same bits).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let mut dot = [0f32; 8];
    let mut na = [0f32; 8];
    let mut nb = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            dot[i] += x[i] * y[i];
            na[i] += x[i] * x[i];
            nb[i] += y[i] * y[i];
        }
    }
    for (i, (x, y)) in ra.iter().zip(rb).enumerate() {
        dot[i] += x * y;
        na[i] += x * x;
        nb[i] += y * y;
    }
    let (dot, na, nb) = (dot.iter().sum::<f32>(), na.iter().sum::<f32>(), nb.iter().sum::<f32>());
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Similarity of each unit to the next (`n - 1` values). A unit without a vector (whitespace
/// only) is treated as similar to both neighbours, so it never causes a cut by itself.
pub fn neighbour_similarities(vectors: &[Option<&[f32]>]) -> Vec<f32> {
    // Each vector's norm once, then one dot product per pair.
    let norms: Vec<f32> = vectors.iter().map(|v| v.map_or(0.0, |v| dot(v, v).sqrt())).collect();
    vectors
        .windows(2)
        .zip(norms.windows(2))
        .map(|(w, n)| match (w[0], w[1]) {
            (Some(a), Some(b)) if n[0] > 0.0 && n[1] > 0.0 => dot(a, b) / (n[0] * n[1]),
            (Some(_), Some(_)) => 0.0,
            _ => 1.0,
        })
        .collect()
}

/// Dot product summed in 8 fixed lanes (vectorizes; same bits on every platform).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    for (i, (x, y)) in ra.iter().zip(rb).enumerate() {
        acc[i] += x * y;
    }
    acc.iter().sum()
}

/// Boundaries `k` (a cut before unit `k`) whose similarity `sims[k - 1]` is below `threshold`.
pub fn cliffs(sims: &[f32], threshold: f32) -> Vec<usize> {
    sims.iter().enumerate().filter(|(_, s)| **s < threshold).map(|(i, _)| i + 1).collect()
}

/// Prefix sums of unit sizes: `prefix[b] - prefix[a]` is the size of units `a..b`.
pub(crate) fn prefix_sums(sizes: &[usize]) -> Vec<usize> {
    let mut prefix = Vec::with_capacity(sizes.len() + 1);
    let mut total = 0;
    prefix.push(0);
    for s in sizes {
        total += s;
        prefix.push(total);
    }
    prefix
}

/// Cuts the run of units `span` (total over `max`) into pieces of at most `max`. Each cut `k` is
/// the one of lowest `cost(k, piece_size)` among those leaving the piece in `min..=max` and the
/// rest at least `min` (ties: the later cut); when none qualifies, the latest cut within `max`;
/// a single unit over `max` stands alone. Returns the pieces.
pub(crate) fn split_run(
    prefix: &[usize],
    span: Range<usize>,
    min: usize,
    max: usize,
    cost: impl Fn(usize, usize) -> f32,
) -> Vec<Range<usize>> {
    let size = |a: usize, b: usize| prefix[b] - prefix[a];
    let mut out = Vec::new();
    let mut pos = span.start;
    while pos < span.end && size(pos, span.end) > max {
        let mut best: Option<(f32, usize)> = None;
        let mut fallback = None;
        for k in pos + 1..span.end {
            let piece = size(pos, k);
            if piece > max {
                break;
            }
            fallback = Some(k);
            if piece >= min && size(k, span.end) >= min {
                let c = cost(k, piece);
                if best.is_none_or(|(bc, _)| c <= bc) {
                    best = Some((c, k));
                }
            }
        }
        let k = best.map(|(_, k)| k).or(fallback).unwrap_or(pos + 1);
        out.push(pos..k);
        pos = k;
    }
    if pos < span.end {
        out.push(pos..span.end);
    }
    out
}

/// The children of one parent whose units have `sizes` (chars) and neighbour similarities
/// `sims`: unit ranges, in order, covering all units.
pub fn children(sizes: &[usize], sims: &[f32], config: &ParentChildConfig) -> Vec<Range<usize>> {
    let n = sizes.len();
    if n == 0 {
        return Vec::new();
    }
    let prefix = prefix_sums(sizes);
    let size = |r: &Range<usize>| prefix[r.end] - prefix[r.start];
    let (min, target, max) = (config.min_child_size, config.target_child_size, config.max_child_size);

    let mut bounds = vec![0];
    bounds.extend(cliffs(sims, config.similarity_threshold));
    bounds.push(n);
    let mut pieces: Vec<Range<usize>> = Vec::with_capacity(bounds.len());
    for w in bounds.windows(2) {
        let seg = w[0]..w[1];
        if size(&seg) > max {
            pieces.extend(split_run(&prefix, seg, min, max, |k, piece| {
                sims[k - 1] + piece.abs_diff(target) as f32 / max as f32
            }));
        } else {
            pieces.push(seg);
        }
    }

    // Small pieces join their more similar neighbour while the result fits.
    let mut i = 0;
    while i < pieces.len() {
        if size(&pieces[i]) >= min || pieces.len() == 1 {
            i += 1;
            continue;
        }
        let prev = (i > 0).then(|| (sims[pieces[i].start - 1], i - 1));
        let next = (i + 1 < pieces.len()).then(|| (sims[pieces[i].end - 1], i + 1));
        let mut options = [prev, next];
        if let [Some(p), Some(n)] = options {
            if n.0 > p.0 {
                options = [Some(n), Some(p)];
            }
        }
        let chosen = options.into_iter().flatten().map(|(_, j)| j).find(|&j| {
            let (a, b) = (i.min(j), i.max(j));
            prefix[pieces[b].end] - prefix[pieces[a].start] <= max
        });
        match chosen {
            Some(j) => {
                let (a, b) = (i.min(j), i.max(j));
                pieces[a] = pieces[a].start..pieces[b].end;
                pieces.remove(b);
                i = a;
            }
            None => i += 1,
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cosine_handles_zero_vectors() {
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-6);
        let sims = neighbour_similarities(&[Some(&[1.0, 0.0][..]), None, Some(&[0.0, 1.0][..])]);
        assert_eq!(sims, [1.0, 1.0]);
    }

    #[test]
    fn a_cliff_is_a_similarity_below_the_threshold() {
        assert_eq!(cliffs(&[0.9, 0.29, 0.3, 0.1], 0.3), [2, 4]);
    }

    #[test]
    fn children_cut_at_cliffs_and_respect_sizes() {
        let config = ParentChildConfig::default();
        // Two topics of 3 × 90-char sentences each; a cliff between them.
        let sizes = [90; 6];
        let sims = [0.9, 0.8, 0.1, 0.85, 0.9];
        assert_eq!(children(&sizes, &sims, &config), [0..3, 3..6]);
        // No cliff at all: cut near the target at the least similar boundary, never over the max.
        let sizes = [60; 20];
        let sims = [0.9; 19];
        let pieces = children(&sizes, &sims, &config);
        assert!(pieces.iter().all(|r| (r.end - r.start) * 60 <= 400));
        assert_eq!(pieces.first().unwrap().start, 0);
        assert_eq!(pieces.last().unwrap().end, 20);
        // A small piece joins its more similar neighbour.
        let sizes = [200, 40, 200];
        let sims = [0.2, 0.1];
        assert_eq!(children(&sizes, &sims, &config), [0..2, 2..3]);
    }

    #[test]
    fn split_run_keeps_pieces_and_rest_in_bounds() {
        let prefix = prefix_sums(&[100; 30]);
        let pieces = split_run(&prefix, 0..30, 150, 1500, |_, _| 0.0);
        assert!(pieces.iter().all(|r| (150..=1500).contains(&((r.end - r.start) * 100))), "{pieces:?}");
        assert_eq!(pieces.iter().map(|r| r.end - r.start).sum::<usize>(), 30);
    }
}
