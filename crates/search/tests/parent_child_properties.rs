//! Properties of two-stage retrieval over prose parents and children, on random documents
//! chunked by the core with random similarities and random child hits: each parent is returned
//! once, with the score of its best child; a context window contains its matched child, lies in
//! its parent and stays within the window size (or is the child alone); and size normalization
//! removes the size bias on a constructed case.
#![allow(clippy::unwrap_used)]
use std::collections::{HashMap, HashSet};

use edgerag_core::chunk::parent_child::{prepare, ParentChildConfig, ParentChildDocument};
use edgerag_core::Language;
use edgerag_search::parent_child::prose::{parents_for_hits, ChildHit};
use proptest::prelude::*;

const WORDS: &[&str] =
    &["queue", "retry", "garden", "river", "index", "vector", "the", "of", "and", "dragon"];

fn document() -> impl Strategy<Value = String> {
    let sentence =
        prop::collection::vec(prop::sample::select(WORDS), 2..16).prop_map(|w| format!("{}.", w.join(" ")));
    let paragraph = prop::collection::vec(sentence, 1..14).prop_map(|s| s.join(" "));
    let block = prop_oneof![
        5 => paragraph,
        1 => (1usize..3, prop::sample::select(WORDS)).prop_map(|(l, w)| format!("{} {w}", "#".repeat(l))),
    ];
    prop::collection::vec(block, 1..24).prop_map(|b| b.join("\n\n"))
}

fn chunked(text: &str, seed: &[f32]) -> ParentChildDocument {
    let config = ParentChildConfig::default();
    let p = prepare(text, Language::Markdown, &config);
    let n = p.unit_count().saturating_sub(1);
    let sims: Vec<f32> = (0..n).map(|i| seed[i % seed.len()]).collect();
    p.assemble("doc.md", &sims, &config)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn each_parent_is_returned_once_with_its_best_child_and_windows_contain_the_match(
        text in document(),
        seed in prop::collection::vec(-0.2f32..1.0, 1..16),
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0.0f32..1.0), 1..40),
        window in 200usize..1600,
        normalize in any::<bool>(),
    ) {
        let d = chunked(&text, &seed);
        prop_assume!(!d.children.is_empty());
        let hits: Vec<ChildHit> = picks
            .iter()
            .map(|(i, s)| ChildHit { child_id: i.get(&d.children).id.clone(), score: *s })
            .collect();
        let out = parents_for_hits(&hits, &d.parents, &d.children, normalize, window).unwrap();

        // Each parent once, and exactly the parents of the hits.
        let ids: Vec<&str> = out.iter().map(|h| h.parent_id.as_str()).collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        prop_assert_eq!(unique.len(), ids.len());
        let child = |id: &str| d.children.iter().find(|c| c.id == id).unwrap();
        let expected: HashSet<&str> = hits.iter().map(|h| child(&h.child_id).parent_id.as_str()).collect();
        prop_assert_eq!(&unique, &expected);

        // Its score is its best child's.
        let mut best: HashMap<&str, f32> = HashMap::new();
        for h in &hits {
            let e = best.entry(child(&h.child_id).parent_id.as_str()).or_insert(f32::MIN);
            *e = e.max(h.score);
        }
        for h in &out {
            prop_assert_eq!(h.raw_score, best[h.parent_id.as_str()]);
            let parent = d.parents.iter().find(|p| p.id == h.parent_id).unwrap();
            let matched = child(&h.matched_child_id);
            prop_assert_eq!(&matched.parent_id, &h.parent_id);
            // The returned text is the parent's span start_char..end_char and contains the match.
            let span: String = parent.text.chars().skip(h.start_char).take(h.end_char - h.start_char).collect();
            prop_assert_eq!(&span, &h.text);
            prop_assert!(h.start_char <= matched.start_char && matched.end_char <= h.end_char);
            prop_assert!(h.text.contains(&matched.text));
            if h.is_context_window {
                prop_assert!(h.parent_chars > window);
                let chars = h.text.chars().count();
                prop_assert!(chars <= window || h.text == matched.text, "window of {chars} chars");
            } else {
                prop_assert_eq!(&h.text, &parent.text);
            }
        }
        if normalize {
            prop_assert!(out.windows(2).all(|w| w[0].score >= w[1].score));
        }
    }
}

/// A constructed case of size bias: raw scores that grow with the square root of the parent's
/// size (a bigger parent matches more by chance). Normalization makes them equal, and a smaller
/// parent with the better raw match then ranks first.
#[test]
fn normalization_removes_the_size_bias() {
    let mut text = String::new();
    for (i, n) in [2usize, 5, 9].iter().enumerate() {
        text.push_str(&format!("# Part {i}\n\n{}\n\n", "Words about one single topic here. ".repeat(*n)));
    }
    let d = chunked(&text, &[1.0]);
    assert_eq!(d.parents.len(), 3);
    let sizes: Vec<usize> = d.parents.iter().map(|p| p.end_char - p.start_char).collect();
    let avg = sizes.iter().sum::<usize>() as f32 / 3.0;
    let first_child = |pid: &str| d.children.iter().find(|c| c.parent_id == pid).unwrap().id.clone();
    let hits: Vec<ChildHit> = d
        .parents
        .iter()
        .zip(&sizes)
        .map(|(p, s)| ChildHit { child_id: first_child(&p.id), score: 0.5 * (*s as f32 / avg).sqrt() })
        .collect();
    let raw = parents_for_hits(&hits, &d.parents, &d.children, false, 100_000).unwrap();
    assert_eq!(raw[0].parent_id, d.parents[2].id, "without normalization the largest parent wins");
    let normalized = parents_for_hits(&hits, &d.parents, &d.children, true, 100_000).unwrap();
    for h in &normalized {
        assert!((h.score - 0.5).abs() < 1e-4, "size bias left: {} for {} chars", h.score, h.parent_chars);
    }
    // A slightly better raw match in the smallest parent now wins.
    let mut hits = hits;
    hits[0].score *= 1.05;
    let normalized = parents_for_hits(&hits, &d.parents, &d.children, true, 100_000).unwrap();
    assert_eq!(normalized[0].parent_id, d.parents[0].id);
}
