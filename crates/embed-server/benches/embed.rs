//! Throughput of the local embedding model: texts/s at batches of 1, 8 and 32 chunks of ≈ 200
//! word pieces (the size of a typical code/doc chunk after truncation).
//!
//! `scripts/bench/embed-server.sh` (runs this with the optimized `embed-server` profile).
//! Skips with a message when the model files are missing (scripts/setup.d/40-model.sh).
use std::sync::OnceLock;

use divan::counter::ItemsCount;
use divan::Bencher;
use edgerag_embed_server::{default_model_dir, MiniLm};

fn main() {
    if MiniLm::load(&default_model_dir()).is_err() {
        eprintln!(
            "model files missing under {}: run scripts/setup.d/40-model.sh",
            default_model_dir().display()
        );
        return;
    }
    divan::main();
}

fn model() -> &'static MiniLm {
    static M: OnceLock<MiniLm> = OnceLock::new();
    M.get_or_init(|| match MiniLm::load(&default_model_dir()) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    })
}

const WORDS: &[&str] = &[
    "the",
    "index",
    "stores",
    "vectors",
    "for",
    "each",
    "chunk",
    "query",
    "returns",
    "nearest",
    "neighbours",
    "parse",
    "config",
    "file",
    "error",
    "handler",
    "retry",
    "queue",
    "message",
    "batch",
    "worker",
    "request",
    "response",
    "token",
    "embedding",
    "model",
    "cosine",
    "similarity",
    "function",
    "struct",
    "impl",
    "async",
    "await",
    "let",
    "mut",
    "self",
    "return",
    "match",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "fn",
    "pub",
];

/// A deterministic text of about `tokens` word pieces.
fn chunk_text(seed: usize, tokens: usize) -> String {
    let mut x = seed as u64 * 0x9E37_79B9_7F4A_7C15 + 1;
    let mut words = Vec::new();
    for i in 0..tokens {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        words.push(WORDS[(x % WORDS.len() as u64) as usize]);
        if i % 12 == 11 {
            words.push(";");
        }
    }
    words.join(" ")
}

fn texts(n: usize) -> Vec<String> {
    // ≈ 145 words + punctuation ≈ 200 word pieces (checked below).
    (0..n).map(|i| chunk_text(i, 145)).collect()
}

#[divan::bench(args = [1, 8, 32], sample_count = 5, sample_size = 1)]
fn embed_200_token_chunks(bencher: Bencher, batch: usize) {
    let m = model();
    let input = texts(batch);
    let tokens = m.count_tokens(&input[0]).unwrap_or(0);
    assert!((170..=240).contains(&tokens), "bench chunk has {tokens} tokens");
    bencher.counter(ItemsCount::new(batch)).bench(|| m.embed(&input).map(|e| e.vectors.len()).unwrap_or(0));
}
