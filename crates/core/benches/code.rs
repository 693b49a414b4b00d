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
//! `EDGERAG_BENCH_BYTES` (default 1.5 MB). Families with less than 1 MB on the machine are skipped
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
#![allow(unsafe_code)] // the counting allocator below
#![allow(clippy::unwrap_used)]
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use edgerag_core::chunk::code;
use edgerag_core::{chunk_text, ChunkConfig, Language};

struct PeakAlloc;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let live = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

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

fn available() -> Vec<&'static str> {
    FAMILIES.iter().copied().filter(|f| corpus(f).bytes >= MIN_CORPUS).collect()
}

fn main() {
    for family in FAMILIES {
        let c = corpus(family);
        let note = if c.bytes < MIN_CORPUS { " — under 1 MB, skipped" } else { "" };
        eprintln!("{family}: {} files, {:.2} MB{note}", c.files.len(), c.bytes as f64 / 1e6);
    }
    // Peak heap while chunking about 1 MB of code (the largest families' files, one at a time,
    // plus one ~1 MB concatenation to see the parse tree of a single big file).
    if let Some(family) = available().first() {
        let c = corpus(family);
        let mut big = String::new();
        for (_, text) in &c.files {
            if big.len() >= 1 << 20 {
                break;
            }
            big.push_str(text);
            big.push('\n');
        }
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let chunks =
            chunk_text("big", &big, &ChunkConfig { language: Some(c.language), ..ChunkConfig::default() });
        let peak = PEAK.load(Ordering::Relaxed) - before;
        eprintln!(
            "peak heap chunking one {:.2} MB {family} file: {:.1} MB ({} chunks)",
            big.len() as f64 / 1e6,
            peak as f64 / 1e6,
            chunks.len()
        );
    }
    divan::main();
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
