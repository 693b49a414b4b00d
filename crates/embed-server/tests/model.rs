//! Model tests against the real all-MiniLM-L6-v2 weights (`scripts/setup.d/40-model.sh`). They
//! are `#[ignore]`d in the plain workspace run (a debug build of candle is too slow) and run by
//! `scripts/test.d/25-embed.sh` with the optimized `embed-server` profile:
//! `cargo test --profile embed-server --manifest-path crates/embed-server/Cargo.toml -- --include-ignored`.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use edgerag_embed_server::reference::CandleBert;
use edgerag_embed_server::{default_model_dir, MiniLm};

fn model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = default_model_dir();
        MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e} (model dir {})", dir.display()))
    })
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn embed(texts: &[&str]) -> Vec<Vec<f32>> {
    let texts: Vec<String> = texts.iter().map(|s| s.to_string()).collect();
    model().embed(&texts).unwrap().vectors
}

fn reference_python() -> PathBuf {
    let state = std::env::var_os("EDGERAG_STATE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.edgerag"));
    state.join("py/bin/python")
}

/// ≥ 0.99 cosine against an independent numpy implementation of the same model (what
/// sentence-transformers computes: BERT, mean pooling, L2 normalization).
#[test]
#[ignore = "needs the model files; run by scripts/test.d/25-embed.sh"]
fn matches_independent_numpy_reference() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference");
    let out = std::env::temp_dir().join(format!("edgerag-minilm-ref-{}.json", std::process::id()));
    let status = Command::new(reference_python())
        .arg(here.join("minilm_numpy.py"))
        .arg(default_model_dir())
        .arg(here.join("sentences.json"))
        .arg(&out)
        .status()
        .expect("run the numpy reference (scripts/setup.d/40-model.sh creates its venv)");
    assert!(status.success(), "numpy reference failed");
    let reference: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(reference.len() >= 8);

    let texts: Vec<String> = reference.iter().map(|r| r["text"].as_str().unwrap().to_string()).collect();
    let ours = model().embed(&texts).unwrap();
    let mut worst = 1f32;
    for (r, v) in reference.iter().zip(&ours.vectors) {
        let want: Vec<f32> =
            r["embedding"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        assert_eq!(v.len(), 384);
        assert!((dot(v, v) - 1.0).abs() < 1e-4, "not unit length");
        let c = dot(v, &want) / dot(&want, &want).sqrt();
        eprintln!("cosine {c:.6}  {}", r["text"]);
        worst = worst.min(c);
        assert!(c >= 0.99, "cosine {c} < 0.99 for {:?}", r["text"]);
    }
    eprintln!("worst cosine vs numpy reference: {worst:.6}");
}

/// On a small hand-written corpus, each paraphrase's nearest neighbour is its target.
#[test]
#[ignore = "needs the model files; run by scripts/test.d/25-embed.sh"]
fn paraphrase_finds_its_target() {
    let corpus = [
        "To reset your password, open Settings, choose Security and click 'Forgot password'.",
        "The parser reads the TOML configuration file and returns a Config struct or an error.",
        "Our office is closed on public holidays and reopens the next business day at 9am.",
        "Vectors are stored in D1 as little-endian float32 blobs and scanned page by page.",
        "The cat slept on the warm windowsill all afternoon.",
        "Invoices are sent by email at the start of every month.",
        "Rust's borrow checker prevents data races at compile time.",
        "Photosynthesis converts sunlight, water and carbon dioxide into glucose and oxygen.",
        "The queue consumer retries failed messages with exponential backoff before giving up.",
        "Preheat the oven to 200 degrees and bake the bread for forty minutes.",
    ];
    let paraphrases = [
        ("I forgot my login credentials, how can I change them?", 0),
        ("function that loads settings from a .toml file", 1),
        ("When do you open again after a holiday?", 2),
        ("how are embeddings persisted in the database", 3),
        ("A kitten napped in the sunny window.", 4),
        ("When will I receive my monthly bill?", 5),
        ("compile-time guarantees against concurrent memory bugs", 6),
        ("how plants turn light into sugar", 7),
        ("what happens when processing a message fails repeatedly", 8),
        ("baking instructions: temperature and time for a loaf", 9),
    ];
    let docs = embed(&corpus);
    let queries = embed(&paraphrases.iter().map(|p| p.0).collect::<Vec<_>>());
    for ((text, target), q) in paraphrases.iter().zip(&queries) {
        let scores: Vec<f32> = docs.iter().map(|d| dot(q, d)).collect();
        let best = (0..scores.len()).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).unwrap();
        assert_eq!(best, *target, "{text:?} found {:?} (scores {scores:?})", corpus[best]);
    }
}

/// Batching and padding do not change a text's vector; long inputs are truncated and counted.
#[test]
#[ignore = "needs the model files; run by scripts/test.d/25-embed.sh"]
fn batch_equals_single_and_truncation_is_reported() {
    let texts = ["short", "a somewhat longer sentence with more word pieces in it", "mid length text"];
    let batch = embed(&texts);
    for (t, v) in texts.iter().zip(&batch) {
        let single = &embed(&[t])[0];
        assert!(dot(v, single) > 0.9999, "batched vector of {t:?} differs from single");
    }
    let long = "word ".repeat(1000);
    let out = model().embed(&[long.clone(), "short".into()]).unwrap();
    assert_eq!(out.truncated, 1);
    assert!(model().count_tokens(&long).unwrap() > 256);
    assert_eq!(out.vectors.len(), 2);
    assert!(out.tokens <= 256 + 3);
}

/// Real prose and code from this repository, cut at blank lines into chunks of very different
/// lengths (a few words up to past the 256-token limit), plus the reference sentences.
fn real_texts() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<String> =
        serde_json::from_slice(&std::fs::read(root.join("tests/reference/sentences.json")).unwrap()).unwrap();
    for (file, take) in
        [("../../README.md", 24), ("src/encoder.rs", 12), ("src/api.rs", 8), ("../../ARCHITECTURE.md", 12)]
    {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let paragraphs: Vec<&str> = text.split("\n\n").map(str::trim).filter(|p| p.len() > 20).collect();
        // Every k-th paragraph, and every k-th run of three joined (longer chunks).
        let k = (paragraphs.len() / take).max(1);
        for (i, p) in paragraphs.iter().enumerate().step_by(k).take(take) {
            texts.push(if i % 2 == 0 {
                p.to_string()
            } else {
                paragraphs[i..(i + 3).min(paragraphs.len())].join("\n\n")
            });
        }
    }
    texts
}

/// The server's fused encoder (packed sequences, polynomial exp/erf) gives the same vectors as
/// candle's `BertModel` with exact erf (the previous server path) on real texts: every cosine
/// ≥ 0.99 (in practice ≥ 0.9999).
#[test]
#[ignore = "needs the model files; run by scripts/test.d/25-embed.sh"]
fn fused_encoder_matches_candle_bert_on_real_texts() {
    let texts = real_texts();
    assert!(texts.len() >= 60, "only {} texts", texts.len());
    let long = texts.iter().filter(|t| model().count_tokens(t).unwrap() > 256).count();
    assert!(long >= 1, "no text past the 256-token limit");
    let reference = CandleBert::load(&default_model_dir()).unwrap().embed(&texts).unwrap();
    let ours = model().embed(&texts).unwrap();
    assert_eq!(ours.vectors.len(), texts.len());
    let cosines: Vec<f32> = ours.vectors.iter().zip(&reference).map(|(a, b)| dot(a, b)).collect();
    let worst = cosines.iter().copied().fold(f32::MAX, f32::min);
    let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
    eprintln!("fused encoder vs candle BertModel over {} texts ({long} truncated): min cosine {worst:.6}, mean {mean:.6}", texts.len());
    for ((t, c), v) in texts.iter().zip(&cosines).zip(&ours.vectors) {
        assert!((dot(v, v) - 1.0).abs() < 1e-4, "not unit length");
        assert!(*c >= 0.99, "cosine {c} < 0.99 for {t:?}");
    }
}
