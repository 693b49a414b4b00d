//! Text chunker benchmarks (divan) on real files found on this machine at bench time — Markdown
//! and plain text from the cargo registry sources and `node_modules` — never copied into the repo.
//!
//! `cargo bench -p edgerag-core --no-default-features --bench text`
//!
//! - `markdown_corpus` / `lines_corpus`: whole pipeline (`chunk_text`: cut + ids + keywords),
//!   throughput over ≥ 1 MB (target: Markdown ≥ 50 MB/s, lines ≥ 200 MB/s).
//! - `*_cut_only`: the chunker alone (pieces, no bookkeeping), to see where time goes.
//! - `keywords_markdown` / `keywords_code`: keyword extraction alone, over the chunks' spans.
//! - `latency_100kb`: one 100 KB file (target < 10 ms).
//! - Before the benches run, peak heap while chunking a 1 MB file is printed (target < 32 MB).
#![allow(clippy::unwrap_used)]
use std::path::Path;
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use edgerag_core::chunk::{chunk_pieces, lines, markdown};
use edgerag_core::keywords;
use edgerag_core::{chunk_text, ChunkConfig, Language};

#[path = "support/peak_alloc.rs"]
mod peak_alloc;
#[path = "support/sources.rs"]
mod sources;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

const CORPUS_BYTES: usize = 4 << 20;

/// Up to `CORPUS_BYTES` of valid UTF-8 files (< 1 MB each) matching `keep`.
fn corpus(keep: &dyn Fn(&Path) -> bool) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for root in sources::roots() {
        sources::collect(&root, keep, &mut paths);
    }
    let mut files = Vec::new();
    let mut total = 0;
    for path in paths {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        if bytes.len() > 1 << 20 || bytes.contains(&0) {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else { continue };
        total += text.len();
        files.push((path.to_string_lossy().into_owned(), text));
        if total >= CORPUS_BYTES {
            break;
        }
    }
    assert!(total >= 1 << 20, "need ≥ 1 MB of real files for the benches, found {total} bytes");
    files
}

fn markdown_files() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| corpus(&|p| p.extension().is_some_and(|e| e == "md" || e == "markdown")))
}

fn text_files() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| {
        corpus(&|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".txt") || name.starts_with("LICENSE") || name.starts_with("CHANGELOG")
        })
    })
}

fn total_bytes(files: &[(String, String)]) -> usize {
    files.iter().map(|(_, t)| t.len()).sum()
}

/// About `size` bytes of the corpus as one file (whole files concatenated).
fn one_file(files: &[(String, String)], size: usize) -> String {
    let mut text = String::with_capacity(size + 4096);
    for (_, t) in files.iter().cycle() {
        if text.len() + t.len() > size {
            if text.len() > size / 2 {
                break;
            }
            continue;
        }
        text.push_str(t);
        text.push('\n');
    }
    text
}

fn text_config() -> ChunkConfig {
    ChunkConfig { language: Some(Language::Text), ..ChunkConfig::default() }
}

#[divan::bench]
fn markdown_corpus(bencher: Bencher) {
    let files = markdown_files();
    let config = ChunkConfig::default();
    bencher.counter(BytesCount::new(total_bytes(files))).bench(|| {
        for (path, text) in files {
            black_box(chunk_text(path, text, &config));
        }
    });
}

#[divan::bench]
fn markdown_cut_only(bencher: Bencher) {
    let files = markdown_files();
    let config = ChunkConfig::default();
    bencher.counter(BytesCount::new(total_bytes(files))).bench(|| {
        for (_, text) in files {
            black_box(markdown::chunk(text, &config));
        }
    });
}

#[divan::bench]
fn lines_corpus(bencher: Bencher) {
    let files = text_files();
    let config = text_config();
    bencher.counter(BytesCount::new(total_bytes(files))).bench(|| {
        for (path, text) in files {
            black_box(chunk_text(path, text, &config));
        }
    });
}

#[divan::bench]
fn lines_cut_only(bencher: Bencher) {
    let files = text_files();
    let config = text_config();
    bencher.counter(BytesCount::new(total_bytes(files))).bench(|| {
        for (_, text) in files {
            black_box(lines::chunk(text, &config));
        }
    });
}

#[divan::bench]
fn keywords_markdown(bencher: Bencher) {
    let files = markdown_files();
    let config = ChunkConfig::default();
    let pieces: Vec<(&str, Vec<(usize, usize)>)> = files
        .iter()
        .map(|(_, t)| {
            let spans = chunk_pieces(t, Language::Markdown, &config)
                .iter()
                .map(|p| (p.start_byte, p.end_byte))
                .collect();
            (t.as_str(), spans)
        })
        .collect();
    bencher.counter(BytesCount::new(total_bytes(files))).bench(|| {
        for (text, spans) in &pieces {
            for &(a, b) in spans {
                black_box(keywords::extract(&text[a..b], Language::Markdown));
            }
        }
    });
}

/// Keyword extraction alone on code, over pieces of about 2,000 bytes cut at line ends (what
/// `edgerag chunk --max-tokens 500` hands it): Rust from the cargo registry, JavaScript from
/// `node_modules`.
#[divan::bench(args = ["rust", "javascript"])]
fn keywords_code(bencher: Bencher, kind: &str) {
    let (files, language) = match kind {
        "rust" => (rust_files(), Language::Rust),
        _ => (javascript_files(), Language::Javascript),
    };
    let pieces: Vec<&str> = files.iter().flat_map(|(_, t)| pieces_of(t, 2000)).collect();
    bencher.counter(BytesCount::new(total_bytes(files))).bench(|| {
        for piece in &pieces {
            black_box(keywords::extract(piece, language));
        }
    });
}

fn rust_files() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| corpus(&|p| p.extension().is_some_and(|e| e == "rs")))
}

fn javascript_files() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| corpus(&|p| p.extension().is_some_and(|e| e == "js")))
}

/// `text` cut after the last line end within every `size` bytes (a longer line is one piece).
fn pieces_of(text: &str, size: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let window = rest.len().min(size);
        let cut = match rest.as_bytes()[..window].iter().rposition(|&b| b == b'\n') {
            Some(n) if window < rest.len() => n + 1,
            _ if window == rest.len() => window,
            _ => rest.find('\n').map_or(rest.len(), |n| n + 1),
        };
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    pieces
}

#[divan::bench(args = ["markdown", "text"])]
fn latency_100kb(bencher: Bencher, kind: &str) {
    let (text, path, config) = match kind {
        "markdown" => (one_file(markdown_files(), 100_000), "doc.md", ChunkConfig::default()),
        _ => (one_file(text_files(), 100_000), "doc.txt", text_config()),
    };
    bencher.counter(BytesCount::new(text.len())).bench(|| black_box(chunk_text(path, &text, &config)));
}

/// Peak heap while chunking one ~1 MB file (input excluded).
fn report_peak_memory() {
    for (kind, files, path, config) in [
        ("markdown", markdown_files(), "big.md", ChunkConfig::default()),
        ("text", text_files(), "big.txt", text_config()),
    ] {
        let text = one_file(files, 1 << 20);
        let baseline = peak_alloc::start();
        let chunks = black_box(chunk_text(path, &text, &config));
        let peak = peak_alloc::peak_since(baseline);
        println!(
            "peak heap chunking a {:.2} MB {kind} file: {:.2} MB ({} chunks)",
            text.len() as f64 / 1e6,
            peak as f64 / 1e6,
            chunks.len()
        );
    }
    println!(
        "corpus: {:.2} MB Markdown in {} files, {:.2} MB text in {} files",
        total_bytes(markdown_files()) as f64 / 1e6,
        markdown_files().len(),
        total_bytes(text_files()) as f64 / 1e6,
        text_files().len()
    );
}

fn main() {
    report_peak_memory();
    divan::main();
}
