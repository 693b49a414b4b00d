//! Parent/child chunking throughput (divan) on real Markdown found on this machine at bench time
//! (cargo registry sources, `node_modules`), never copied into the repo.
//!
//! `cargo bench -p edgerag-core --no-default-features --bench parent_child`
//!
//! - `split_cliffs_assemble`: sentence split + neighbour cosines + cliff detection + parents +
//!   children + ids, with the sentence vectors computed beforehand (embedding excluded; target
//!   ≥ 20 MB/s). Vectors are the hashing embedder's, 384 dims (a MiniLM-sized vector).
//! - `split_only`: the sentence splitter alone; `prepare_only`: splitter + Markdown structure.
//! - `text_splitter_sentences`: the peer, `text-splitter`'s `TextSplitter` packing sentences into
//!   100–400-char chunks (no embeddings, no parents) over the same files.
//! - `edit_rechunk_100kb`: a 100 KB document re-chunked after a one-paragraph edit, with the
//!   vectors of its unchanged sentences cached (what the worker does on an edit, minus I/O).
#![allow(clippy::unwrap_used)]
use std::collections::HashMap;
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use edgerag_core::chunk::parent_child::{cliffs, prepare, sentences, ParentChildConfig};
use edgerag_core::embed::HashingEmbedder;
use edgerag_core::Language;

#[path = "support/sources.rs"]
mod sources;

const CORPUS_BYTES: usize = 2 << 20;
const DIMS: usize = 384;

/// A Markdown file, its units' vectors (precomputed), and its size.
struct Doc {
    path: String,
    text: String,
    vectors: Vec<Option<Vec<f32>>>,
}

fn docs() -> &'static [Doc] {
    static DOCS: OnceLock<Vec<Doc>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let mut paths = Vec::new();
        for root in sources::roots() {
            sources::collect(&root, &|p| p.extension().is_some_and(|x| x == "md"), &mut paths);
        }
        let embedder = HashingEmbedder::new(DIMS);
        let config = ParentChildConfig::default();
        let mut cache: HashMap<String, Vec<f32>> = HashMap::new();
        let mut out = Vec::new();
        let mut total = 0;
        for path in paths {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if text.len() > 1 << 20 {
                continue;
            }
            let vectors = prepare(&text, Language::Markdown, &config)
                .embedding_texts()
                .into_iter()
                .map(|t| t.map(|t| cache.entry(t.to_string()).or_insert_with(|| embedder.vector(t)).clone()))
                .collect();
            total += text.len();
            out.push(Doc { path: path.to_string_lossy().into_owned(), text, vectors });
            if total >= CORPUS_BYTES {
                break;
            }
        }
        assert!(total >= 1 << 20, "need ≥ 1 MB of real Markdown for the benches, found {total} bytes");
        out
    })
}

fn total_bytes() -> usize {
    docs().iter().map(|d| d.text.len()).sum()
}

fn chunk_one(doc: &Doc, config: &ParentChildConfig) -> usize {
    let prepared = prepare(&doc.text, Language::Markdown, config);
    let refs: Vec<Option<&[f32]>> = doc.vectors.iter().map(|v| v.as_deref()).collect();
    let sims = cliffs::neighbour_similarities(&refs);
    prepared.assemble(&doc.path, &sims, config).children.len()
}

#[divan::bench]
fn split_cliffs_assemble(bencher: Bencher) {
    let config = ParentChildConfig::default();
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for doc in docs() {
            black_box(chunk_one(doc, &config));
        }
    });
}

#[divan::bench]
fn split_only(bencher: Bencher) {
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for doc in docs() {
            black_box(sentences::split(&doc.text, 400).len());
        }
    });
}

#[divan::bench]
fn prepare_only(bencher: Bencher) {
    let config = ParentChildConfig::default();
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for doc in docs() {
            black_box(prepare(&doc.text, Language::Markdown, &config).unit_count());
        }
    });
}

#[divan::bench]
fn text_splitter_sentences(bencher: Bencher) {
    let splitter = text_splitter::TextSplitter::new(100..400);
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for doc in docs() {
            black_box(splitter.chunks(&doc.text).count());
        }
    });
}

#[divan::bench]
fn edit_rechunk_100kb(bencher: Bencher) {
    let config = ParentChildConfig::default();
    let embedder = HashingEmbedder::new(DIMS);
    let mut text = String::new();
    for d in docs() {
        if text.len() + d.text.len() > 100_000 {
            continue;
        }
        text.push_str(&d.text);
        text.push('\n');
    }
    let cached: HashMap<String, Vec<f32>> = prepare(&text, Language::Markdown, &config)
        .embedding_texts()
        .into_iter()
        .flatten()
        .map(|t| (t.to_string(), embedder.vector(t)))
        .collect();
    let at = text[text.len() / 2..].find("\n\n").map_or(text.len() / 2, |k| text.len() / 2 + k);
    let edited =
        format!("{}\n\nA new paragraph was typed here. It has two sentences.{}", &text[..at], &text[at..]);
    bencher.counter(BytesCount::new(edited.len())).bench(|| {
        let prepared = prepare(&edited, Language::Markdown, &config);
        // Cached vectors for unchanged sentences; the new ones are the embedding call (excluded).
        let fresh: Vec<Option<Vec<f32>>> = prepared
            .embedding_texts()
            .into_iter()
            .map(|t| t.map(|t| cached.get(t).cloned().unwrap_or_else(|| vec![0.0; DIMS])))
            .collect();
        let refs: Vec<Option<&[f32]>> = fresh.iter().map(|v| v.as_deref()).collect();
        let sims = cliffs::neighbour_similarities(&refs);
        black_box(prepared.assemble("doc.md", &sims, &config).parents.len())
    });
}

fn main() {
    let d = docs();
    println!("corpus: {} Markdown files, {} bytes", d.len(), total_bytes());
    divan::main();
}
