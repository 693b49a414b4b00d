//! Code chunker benchmarks (divan) on real source found on this machine at bench time — never
//! copied into the repo:
//!
//! | family | files |
//! | --- | --- |
//! | rust | `$CARGO_HOME/registry/src/**/*.rs` |
//! | typescript | `node_modules/**/*.ts` (incl. `.d.ts`) |
//! | javascript | `node_modules/**/*.js` |
//! | python | the interpreter's `purelib` and `stdlib` (`python3 -c 'import sysconfig …'`) |
//! | c | `/usr/include/**/*.h` (outside `c++/`) |
//! | cpp | `/usr/include/c++/**/*.h` and `*.tcc` |
//!
//! Each family takes files in path order (skipping files over 256 KB) until it has
//! `EDGERAG_BENCH_BYTES` (default 1.5 MB); `EDGERAG_BENCH_FAMILIES=rust,python` restricts the run. Families with less than 1 MB on the machine are skipped
//! (listed when the bench starts). Per family, all with the same grammar and the same input:
//!
//! - `parse`: bare tree-sitter parse, the bound for any syntax-aware chunker;
//! - `ours`: [`code::chunk`] (parse + units + split + merge → pieces) at the default limits;
//! - `ours_full`: [`chunk_text`] — pieces plus ids, hashes, keywords, token counts;
//! - `text_splitter`: `text-splitter` 0.33.1's `CodeSplitter` (same tree-sitter 0.27, same
//!   grammar) with the same size limit: 2000 tokens × 4 = 8000 chars (it has no line limit).
//!
//! `cargo bench -p edgerag-core --bench code` (targets: `ours` ≥ 80 % of `parse`, ≥ 1.5×
//! `text_splitter`). Before the benches run, the peak heap while chunking ~1 MB of code is printed.
#![allow(clippy::unwrap_used)]
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use edgerag_core::chunk::code;
use edgerag_core::{chunk_text, ChunkConfig, Language};

#[path = "support/peak_alloc.rs"]
mod peak_alloc;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

const FAMILIES: &[&str] = &["rust", "typescript", "javascript", "python", "c", "cpp"];
const MAX_FILE: u64 = 256 * 1024;
const MIN_CORPUS: usize = 1 << 20;

struct Corpus {
    language: Language,
    ts_language: tree_sitter::Language,
    files: Vec<(String, String)>,
    bytes: usize,
}

fn corpus_bytes() -> usize {
    std::env::var("EDGERAG_BENCH_BYTES").ok().and_then(|b| b.parse().ok()).unwrap_or(3 << 19)
}

/// Files under `dir` accepted by `keep`, in path order, until `budget` bytes.
fn collect(
    dir: &Path,
    keep: &dyn Fn(&Path) -> bool,
    budget: usize,
    out: &mut Vec<(String, String)>,
    total: &mut usize,
) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if *total >= budget {
            return;
        }
        let Ok(kind) = e.file_type() else { continue };
        let path = e.path();
        if kind.is_dir() {
            collect(&path, keep, budget, out, total);
        } else if kind.is_file()
            && keep(&path)
            && e.metadata().is_ok_and(|m| m.len() <= MAX_FILE && m.len() > 0)
        {
            if let Ok(text) = std::fs::read_to_string(&path) {
                *total += text.len();
                out.push((path.to_string_lossy().into_owned(), text));
            }
        }
    }
}

fn python_roots() -> Vec<PathBuf> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sysconfig as s; p = s.get_paths(); print(p['purelib']); print(p['stdlib'])"])
        .output();
    match output {
        Ok(o) if o.status.success() => {
            String::from_utf8_lossy(&o.stdout).lines().map(PathBuf::from).collect()
        }
        _ => vec![PathBuf::from("/usr/lib/python3")],
    }
}

type Keep = Box<dyn Fn(&Path) -> bool>;

fn has_ext(path: &Path, exts: &[&str]) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    exts.iter().any(|e| name.ends_with(e))
}

fn load(family: &str) -> Corpus {
    let budget = corpus_bytes();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    let node_modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules");
    let (language, ts_language, roots, keep): (Language, tree_sitter::Language, Vec<PathBuf>, Keep) =
        match family {
            "rust" => (
                Language::Rust,
                tree_sitter_rust::LANGUAGE.into(),
                vec![cargo_home.join("registry/src")],
                Box::new(|p| has_ext(p, &[".rs"])),
            ),
            "typescript" => (
                Language::Typescript,
                tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                vec![node_modules],
                Box::new(|p| has_ext(p, &[".ts"])),
            ),
            "javascript" => (
                Language::Javascript,
                tree_sitter_javascript::LANGUAGE.into(),
                vec![node_modules],
                Box::new(|p| has_ext(p, &[".js"]) && !has_ext(p, &[".min.js"])),
            ),
            "python" => (
                Language::Python,
                tree_sitter_python::LANGUAGE.into(),
                python_roots(),
                Box::new(|p| has_ext(p, &[".py"])),
            ),
            "c" => (
                Language::C,
                tree_sitter_c::LANGUAGE.into(),
                vec![PathBuf::from("/usr/include")],
                Box::new(|p| has_ext(p, &[".h"]) && !p.to_string_lossy().contains("/c++/")),
            ),
            "cpp" => (
                Language::Cpp,
                tree_sitter_cpp::LANGUAGE.into(),
                vec![PathBuf::from("/usr/include/c++")],
                Box::new(|p| has_ext(p, &[".h", ".tcc"])),
            ),
            other => panic!("unknown family {other}"),
        };
    let mut files = Vec::new();
    let mut total = 0;
    for root in roots {
        collect(&root, &*keep, budget, &mut files, &mut total);
    }
    Corpus { language, ts_language, files, bytes: total }
}

fn corpus(family: &str) -> &'static Corpus {
    static CORPORA: OnceLock<Vec<(&'static str, Corpus)>> = OnceLock::new();
    let all = CORPORA.get_or_init(|| FAMILIES.iter().map(|&f| (f, load(f))).collect());
    &all.iter().find(|(f, _)| *f == family).unwrap().1
}

/// Families with at least 1 MB of source here (optionally only those in `EDGERAG_BENCH_FAMILIES`,
/// comma-separated).
fn available() -> Vec<&'static str> {
    let only = std::env::var("EDGERAG_BENCH_FAMILIES").unwrap_or_default();
    FAMILIES
        .iter()
        .copied()
        .filter(|f| only.is_empty() || only.split(',').any(|o| o.trim() == *f))
        .filter(|f| corpus(f).bytes >= MIN_CORPUS)
        .collect()
}

fn main() {
    for family in FAMILIES {
        let c = corpus(family);
        let note = if c.bytes < MIN_CORPUS { " — under 1 MB, skipped" } else { "" };
        eprintln!("{family}: {} files, {:.2} MB{note}", c.files.len(), c.bytes as f64 / 1e6);
    }
    peak_memory();
    if std::env::var_os("EDGERAG_BENCH_NO_TABLE").is_none() {
        interleaved_table();
    }
    divan::main();
}

/// Peak memory while chunking one ~1 MB file: Rust heap (counting allocator) and the process's
/// peak RSS growth (which also sees tree-sitter's C allocations), after resetting the RSS peak.
fn peak_memory() {
    let Some(family) = available().first().copied() else { return };
    let c = corpus(family);
    let mut big = String::new();
    for (_, text) in &c.files {
        if big.len() >= 1 << 20 {
            break;
        }
        big.push_str(text);
        big.push('\n');
    }
    let config =
        ChunkConfig { language: Some(c.language), max_file_bytes: usize::MAX, ..ChunkConfig::default() };
    let rss_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before = proc_status_kb("VmRSS");
    let baseline = peak_alloc::start();
    let chunks = chunk_text("big", &big, &config);
    let heap = peak_alloc::peak_since(baseline);
    let rss = proc_status_kb("VmHWM").zip(rss_before).map(|(hwm, before)| hwm.saturating_sub(before));
    eprintln!(
        "peak memory chunking one {:.2} MB {family} file ({} chunks): Rust heap {:.1} MB, process RSS growth {}",
        big.len() as f64 / 1e6,
        chunks.len(),
        heap as f64 / 1e6,
        match rss {
            Some(kb) if rss_reset => format!("{:.1} MB", kb as f64 / 1e3),
            _ => "n/a".to_string(),
        }
    );
}

fn proc_status_kb(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Parse, ours and text-splitter timed back to back per round (best of 5), so that load on a
/// shared machine hits all three alike; prints MB/s and the two target ratios per family.
fn interleaved_table() {
    let config = config();
    eprintln!("\ninterleaved, best of 5 rounds (MB/s):");
    eprintln!(
        "{:<11} {:>8} {:>8} {:>10} {:>14} {:>13} {:>13}",
        "family", "parse", "ours", "ours_full", "text-splitter", "ours/parse", "ours/splitter"
    );
    for family in available() {
        let c = corpus(family);
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&c.ts_language).unwrap();
        let splitter =
            text_splitter::CodeSplitter::new(c.ts_language.clone(), config.max_tokens * 4).unwrap();
        let full_config = ChunkConfig { language: Some(c.language), ..config.clone() };
        let mut best = [f64::MAX; 4];
        let mut time = |i: usize, run: &mut dyn FnMut()| {
            let start = std::time::Instant::now();
            run();
            best[i] = best[i].min(start.elapsed().as_secs_f64());
        };
        for _ in 0..5 {
            time(0, &mut || c.files.iter().for_each(|(_, t)| drop(black_box(parser.parse(t, None)))));
            time(1, &mut || {
                c.files.iter().for_each(|(_, t)| drop(black_box(code::chunk(t, c.language, &config))))
            });
            time(2, &mut || {
                c.files.iter().for_each(|(p, t)| drop(black_box(chunk_text(p, t, &full_config))))
            });
            time(3, &mut || {
                c.files.iter().for_each(|(_, t)| {
                    black_box(splitter.chunks(t).count());
                })
            });
        }
        let mbps = best.map(|s| c.bytes as f64 / s / 1e6);
        eprintln!(
            "{family:<11} {:>8.2} {:>8.2} {:>10.2} {:>14.2} {:>12.0}% {:>12.2}x",
            mbps[0],
            mbps[1],
            mbps[2],
            mbps[3],
            100.0 * mbps[1] / mbps[0],
            mbps[1] / mbps[3]
        );
    }
    eprintln!();
}

fn config() -> ChunkConfig {
    ChunkConfig::default()
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn parse(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&c.ts_language).unwrap();
    bencher.counter(BytesCount::new(c.bytes)).bench_local(|| {
        for (_, text) in &c.files {
            black_box(parser.parse(text, None));
        }
    });
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn ours(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let config = config();
    bencher.counter(BytesCount::new(c.bytes)).bench_local(|| {
        for (_, text) in &c.files {
            black_box(code::chunk(text, c.language, &config));
        }
    });
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn ours_full(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let config = ChunkConfig { language: Some(c.language), ..config() };
    bencher.counter(BytesCount::new(c.bytes)).bench_local(|| {
        for (path, text) in &c.files {
            black_box(chunk_text(path, text, &config));
        }
    });
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn text_splitter(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let chars = config().max_tokens * 4;
    let splitter = text_splitter::CodeSplitter::new(c.ts_language.clone(), chars).unwrap();
    bencher.counter(BytesCount::new(c.bytes)).bench_local(|| {
        for (_, text) in &c.files {
            black_box(splitter.chunks(text).count());
        }
    });
}
