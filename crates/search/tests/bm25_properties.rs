//! The in-memory BM25 index against a direct evaluation of FTS5's `bm25()` formula per document
//! (no postings, no accumulators): the same documents, ids and scores — bit for bit — for random
//! corpora, queries with prefix phrases, replaced and removed documents, with and without filters.
use edgerag_core::Language;
use edgerag_search::bm25::{for_each_token, Bm25Index, DocInput, Phrase};
use edgerag_search::filters::SearchFilters;
use edgerag_search::query::{BM25_B, BM25_K1, BM25_WEIGHTS};
use proptest::prelude::*;

const WORDS: [&str; 12] =
    ["retry", "retries", "backoff", "parse", "parser", "value", "valid", "key", "id", "idx", "net", "x"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS.to_vec()), 0..12).prop_map(|w| w.join(" "))
}

/// (id, search text, path, symbol)
fn docs() -> impl Strategy<Value = Vec<(String, String, String, String)>> {
    prop::collection::vec((0u8..40, text(), text(), text()), 1..40)
        .prop_map(|v| v.into_iter().map(|(id, a, b, c)| (format!("c{id:02}"), a, b, c)).collect())
}

fn phrases() -> impl Strategy<Value = Vec<Phrase>> {
    prop::collection::vec((prop::sample::select(WORDS.to_vec()), any::<bool>(), 1usize..4), 1..5).prop_map(
        |v| {
            v.into_iter()
                .map(|(w, prefix, cut)| Phrase {
                    token: if prefix { w[..cut.min(w.len())].to_string() } else { w.to_string() },
                    prefix,
                })
                .collect()
        },
    )
}

/// Even-numbered chunks are Python files, odd ones Rust.
fn language(id: &str) -> Language {
    if id.bytes().last().is_some_and(|b| b % 2 == 0) {
        Language::Python
    } else {
        Language::Rust
    }
}

fn path(id: &str) -> String {
    format!("src/{id}.{}", if language(id) == Language::Python { "py" } else { "rs" })
}

/// FTS5's `bm25()` for one document, from its columns' tokens (statistics over every live
/// document; then only those `keep` accepts are ranked).
fn direct(
    live: &[(String, String, String, String)],
    phrases: &[Phrase],
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, f64)> {
    let counts = |doc: &(String, String, String, String), p: &Phrase| -> f64 {
        let mut f = 0.0;
        for (col, text) in [&doc.1, &doc.2, &doc.3].into_iter().enumerate() {
            for_each_token(text, |t| {
                if t == p.token || (p.prefix && t.starts_with(&p.token)) {
                    f += BM25_WEIGHTS[col];
                }
            });
        }
        f
    };
    let len = |doc: &(String, String, String, String)| {
        let mut n = 0;
        for text in [&doc.1, &doc.2, &doc.3] {
            for_each_token(text, |_| n += 1);
        }
        n as f64
    };
    let n = live.len() as f64;
    let avgdl = live.iter().map(len).sum::<f64>() / n;
    let idfs: Vec<f64> = phrases
        .iter()
        .map(|p| {
            let hits = live.iter().filter(|d| counts(d, p) > 0.0).count() as f64;
            let idf = ((n - hits + 0.5) / (hits + 0.5)).ln();
            if idf <= 0.0 {
                1e-6
            } else {
                idf
            }
        })
        .collect();
    let mut out: Vec<(String, f64)> = live
        .iter()
        .filter(|d| phrases.iter().any(|p| counts(d, p) > 0.0) && keep(&d.0))
        .map(|d| {
            let mut score = 0.0;
            for (p, idf) in phrases.iter().zip(&idfs) {
                let f = counts(d, p);
                score +=
                    idf * ((f * (BM25_K1 + 1.0)) / (f + BM25_K1 * (1.0 - BM25_B + BM25_B * len(d) / avgdl)));
            }
            (d.0.clone(), score)
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_index_scores_exactly_as_the_formula(docs in docs(), phrases in phrases(), removed in prop::collection::vec(0u8..40, 0..6), limit in 1usize..30, filter in 0u8..3) {
        let mut index = Bm25Index::new();
        for d in &docs {
            let p = path(&d.0);
            index.insert(DocInput { id: &d.0, row: 0, columns: [&d.1, &d.2, &d.3], path: &p, language: language(&d.0), tags: &[] });
        }
        // Last write of an id wins; then some ids are removed.
        let mut live: Vec<(String, String, String, String)> = Vec::new();
        for d in &docs {
            live.retain(|l| l.0 != d.0);
            live.push(d.clone());
        }
        for r in removed {
            let id = format!("c{r:02}");
            index.remove(&id);
            live.retain(|l| l.0 != id);
        }
        prop_assume!(!live.is_empty());
        // No filter, a language, a path glob (the last two keep about half of the documents).
        let filters = match filter {
            0 => SearchFilters::default(),
            1 => SearchFilters { languages: vec![Language::Python], ..Default::default() },
            _ => SearchFilters { paths: vec!["**/*.rs".into()], ..Default::default() },
        };
        let matcher = filters.matcher();
        let got: Vec<(String, f64)> = index
            .search(&phrases, &matcher, limit)
            .into_iter()
            .map(|h| (h.id.to_string(), h.score))
            .collect();
        let mut want = direct(&live, &phrases, |id| matcher.matches(&path(id), language(id), &[]));
        want.truncate(limit);
        prop_assert_eq!(got, want);
    }
}
