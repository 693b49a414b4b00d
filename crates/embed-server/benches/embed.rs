//! Throughput of the local embedding model: texts/s at batches of 1, 8 and 32 chunks of ≈ 250
//! word pieces (a typical code/doc chunk, just under the model's 256 limit), the server's fused
//! encoder side by side with candle's `BertModel` (the previous server path, `reference`) in the
//! same run.
//!
//! `scripts/bench/embed-server.sh` (runs this with the optimized `embed-server` profile, beside
//! an onnxruntime anchor). Skips with a message when the model files are missing
//! (scripts/setup.d/40-model.sh).
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use divan::counter::ItemsCount;
use divan::Bencher;
use edgerag_embed_server::reference::CandleBert;
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
    goals();
}

/// The goals beside the figures, in the same run: the server path against the previous one at
/// batch 32 (rounds alternating, best of each), and how far its vectors are from that path's
/// exact f32 ones on the same texts. (Against the independent numpy reference, the onnxruntime
/// step of `scripts/bench/embed-server.sh` asks the running server, and `tests/model.rs` checks it.)
fn goals() {
    let input = texts(32);
    let (mut ours, mut previous) = (Duration::MAX, Duration::MAX);
    let mut worst = f32::INFINITY;
    for _ in 0..2 {
        let t = Instant::now();
        let a = model().embed(&input).map(|e| e.vectors).unwrap_or_default();
        ours = ours.min(t.elapsed());
        let t = Instant::now();
        let b = reference().embed(&input).unwrap_or_default();
        previous = previous.min(t.elapsed());
        if a.len() != input.len() || b.len() != input.len() {
            println!("goals: an embedding call failed; no figures");
            return;
        }
        for (x, y) in a.iter().zip(&b) {
            worst = worst.min(x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>());
        }
    }
    let rate = |d: Duration| input.len() as f64 / d.as_secs_f64();
    let ratio = rate(ours) / rate(previous);
    let verdict = |ok: bool| if ok { "met" } else { "NOT MET" };
    println!(
        "goal ≥ 2× the previous server path (candle BertModel), batch 32 of ≈ 250 tokens: {} ({ratio:.2}×: {:.1} vs {:.1} texts/s)",
        verdict(ratio >= 2.0),
        rate(ours),
        rate(previous)
    );
    println!(
        "goal cosine ≥ 0.99 against the exact f32 path on the same texts: {} (worst {worst:.6})",
        verdict(worst >= 0.99)
    );
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

fn reference() -> &'static CandleBert {
    static M: OnceLock<CandleBert> = OnceLock::new();
    M.get_or_init(|| match CandleBert::load(&default_model_dir()) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    })
}

fn texts(n: usize) -> Vec<String> {
    // ≈ 181 words + punctuation ≈ 250 word pieces (checked below; a few run past the model's
    // 256 limit and are cut to it).
    let texts: Vec<String> = (0..n).map(|i| chunk_text(i, 181)).collect();
    for t in &texts {
        let tokens = model().count_tokens(t).unwrap_or(0);
        assert!((230..=320).contains(&tokens), "bench chunk has {tokens} tokens");
    }
    texts
}

/// The server's path (`MiniLm::embed`: fused encoder over packed sequences).
#[divan::bench(args = [1, 8, 32], sample_count = 5, sample_size = 1)]
fn server_encoder_250_tokens(bencher: Bencher, batch: usize) {
    let input = texts(batch);
    bencher
        .counter(ItemsCount::new(batch))
        .bench(|| model().embed(&input).map(|e| e.vectors.len()).unwrap_or(0));
}

/// The previous server path: candle's `BertModel` over padded groups of 16 (exact-erf GELU).
#[divan::bench(args = [1, 8, 32], sample_count = 3, sample_size = 1)]
fn candle_bert_reference_250_tokens(bencher: Bencher, batch: usize) {
    let input = texts(batch);
    bencher.counter(ItemsCount::new(batch)).bench(|| reference().embed(&input).map(|v| v.len()).unwrap_or(0));
}
