//! Prose retrieval benchmark: flat Markdown chunks vs parent/child (with and without size
//! normalization), on the Markdown documentation of packages installed on this machine (crates
//! in the cargo registry) — nothing is copied into the repository.
//!
//! Queries: in each document, up to two sections (H2/H3) give a query each — the first prose
//! sentence of the section, which is then blanked (removed) from the indexed copy; the target is
//! that section. A hit is a returned text overlapping the target section. Retrieval is dense only
//! (cosine over all chunks / children) so the chunking is what differs; parent/child returns each
//! parent once (best child), a window of 1000 chars for larger parents.
//!
//! Reported: Recall@1, Recall@5, MRR@10 and the tokens (chars / 4) of the top 5 results.
//!
//!   cargo bench -p edgerag-search --bench prose_retrieval -- [--embed-url URL --model M --dims N]
//!       [--docs 300] [--queries 400]
//!
//! Without `--embed-url` the core's hashing embedder is used: deterministic and offline, but
//! lexical (shared words and trigrams), not semantic — the report names the embedder.
#![allow(clippy::unwrap_used)]
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use edgerag_core::chunk::parent_child::{chunk_document, ParentChildConfig, ParentChildDocument};
use edgerag_core::embed::{
    embed_cached, openai, EmbedError, Embedder, EmbedderInfo, HashingEmbedder, InMemoryEmbeddingCache,
};
use edgerag_core::{chunk_text, Chunk, ChunkConfig, Language};
use edgerag_search::memory::block_on;
use edgerag_search::parent_child::prose::{parents_for_hits, ChildHit};

struct Http {
    config: openai::OpenAiConfig,
}

#[async_trait::async_trait(?Send)]
impl Embedder for Http {
    fn info(&self) -> EmbedderInfo {
        EmbedderInfo {
            provider: "openai".into(),
            model: self.config.model.clone(),
            dims: self.config.dims,
            max_batch: 32,
            max_input_chars: Some(2000),
        }
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = openai::request_body(&self.config, texts).to_string();
        let r = ureq::post(&openai::embeddings_url(&self.config.base_url))
            .set("content-type", "application/json")
            .send_string(&body);
        let (status, text) = match r {
            Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
            Err(ureq::Error::Status(s, r)) => (s, r.into_string().unwrap_or_default()),
            Err(e) => return Err(EmbedError::Backend { status: 0, message: e.to_string() }),
        };
        openai::parse_response(status, &text, texts.len(), self.config.dims)
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(kind) = e.file_type() else { continue };
        let p = e.path();
        if kind.is_dir() && depth < 4 {
            walk(&p, out, depth + 1);
        } else if kind.is_file() && p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// ATX headings of level 2–3 outside fenced code: (byte offset of the line, level).
fn headings(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut fence = false;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
        } else if !fence && t.starts_with('#') {
            let level = t.chars().take_while(|c| *c == '#').count();
            if t[level..].starts_with(' ') {
                out.push((at, level));
            }
        }
        at += line.len();
    }
    out
}

/// The first prose sentence of `body`: 40–220 chars, mostly letters, not markup.
fn first_sentence(body: &str) -> Option<(usize, usize)> {
    let mut fence = false;
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
        }
        let markup = t.starts_with(['#', '|', '-', '*', '>', '`', '<', '[', '!', '=']) || t.contains("](");
        if !fence && !markup && !t.is_empty() {
            let end = t.find(". ").map_or(t.len(), |k| k + 1);
            let s = &t[..end];
            let letters = s.chars().filter(|c| c.is_alphabetic() || *c == ' ').count();
            if (40..=220).contains(&s.len()) && letters * 10 >= s.chars().count() * 8 {
                let start = at + line.find(s).unwrap();
                return Some((start, start + s.len()));
            }
        }
        at += line.len();
    }
    None
}

struct Query {
    doc: usize,
    text: String,
    /// Byte span of the target section in the indexed (blanked) copy.
    target: (usize, usize),
}

/// The indexed copy of a document (query sentences removed) and its queries.
fn make_queries(text: &str, doc: usize) -> (String, Vec<Query>) {
    let hs = headings(text);
    let mut picks: Vec<(usize, usize, usize)> = Vec::new(); // heading index, sentence span
    for (i, &(start, _)) in hs.iter().enumerate() {
        if picks.len() == 2 {
            break;
        }
        // The sentence comes from the section's own text (before any subsection).
        let own_end = hs.get(i + 1).map_or(text.len(), |(s, _)| *s);
        let body_start = start + text[start..].find('\n').map_or(text.len() - start, |k| k + 1);
        if body_start >= own_end {
            continue;
        }
        if let Some((a, b)) = first_sentence(&text[body_start..own_end]) {
            picks.push((i, body_start + a, body_start + b));
        }
    }
    let mut blanked = String::with_capacity(text.len());
    let mut last = 0;
    let mut sentences = Vec::new();
    for &(_, a, b) in &picks {
        blanked.push_str(&text[last..a]);
        sentences.push(text[a..b].to_string());
        last = b;
    }
    blanked.push_str(&text[last..]);
    let hs2 = headings(&blanked);
    let queries = picks
        .iter()
        .zip(sentences)
        .map(|(&(i, _, _), sentence)| {
            let (start, level) = hs2[i];
            let end = hs2[i + 1..].iter().find(|(_, l)| *l <= level).map_or(blanked.len(), |(s, _)| *s);
            Query { doc, text: sentence, target: (start, end) }
        })
        .collect();
    (blanked, queries)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>()
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let n = dot(&v, &v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

#[derive(Default)]
struct Score {
    r1: f32,
    r5: f32,
    mrr: f32,
    tokens: f32,
    n: usize,
}

impl Score {
    fn add(&mut self, rank: Option<usize>, tokens: usize) {
        self.n += 1;
        if let Some(r) = rank {
            self.r1 += f32::from(r == 0);
            self.r5 += f32::from(r < 5);
            self.mrr += 1.0 / (r as f32 + 1.0);
        }
        self.tokens += tokens as f32;
    }
    fn row(&self, name: &str) -> String {
        let n = self.n.max(1) as f32;
        format!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.0} |",
            self.r1 / n,
            self.r5 / n,
            self.mrr / n,
            self.tokens / n
        )
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut url, mut model, mut dims, mut max_docs, mut max_queries) =
        (None, "all-MiniLM-L6-v2".to_string(), 384usize, 300usize, 400usize);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_default();
        match a.as_str() {
            "--embed-url" => url = Some(val()),
            "--model" => model = val(),
            "--dims" => dims = val().parse().unwrap(),
            "--docs" => max_docs = val().parse().unwrap(),
            "--queries" => max_queries = val().parse().unwrap(),
            _ => {}
        }
    }
    let embedder: Box<dyn Embedder> = match &url {
        Some(u) => Box::new(Http {
            config: openai::OpenAiConfig {
                base_url: u.clone(),
                model: model.clone(),
                dims,
                api_key: None,
                send_dimensions: false,
                max_batch: 32,
                timeout_ms: 60_000,
                max_input_chars: Some(2000),
            },
        }),
        None => Box::new(HashingEmbedder::new(dims)),
    };
    let info = embedder.info();
    let cache = InMemoryEmbeddingCache::new();
    let embed = |texts: &[String]| -> Vec<Vec<f32>> {
        block_on(embed_cached(&embedder, &cache, texts)).unwrap().0.into_iter().map(unit).collect()
    };

    // Corpus: distinct Markdown documents of 2–100 KB with at least one query.
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap();
    let mut paths = Vec::new();
    walk(&home.join("registry/src"), &mut paths, 0);
    let mut seen = HashSet::new();
    let mut docs: Vec<(String, String)> = Vec::new();
    let mut queries: Vec<Query> = Vec::new();
    for p in paths {
        if docs.len() >= max_docs || queries.len() >= max_queries {
            break;
        }
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        if !(2_000..=100_000).contains(&text.len()) || !seen.insert(blake3::hash(text.as_bytes())) {
            continue;
        }
        let (blanked, qs) = make_queries(&text, docs.len());
        if qs.is_empty() {
            continue;
        }
        queries.extend(qs);
        docs.push((p.to_string_lossy().into_owned(), blanked));
    }
    let corpus_bytes: usize = docs.iter().map(|(_, t)| t.len()).sum();
    eprintln!(
        "{} documents ({corpus_bytes} bytes), {} queries, embedder {}",
        docs.len(),
        queries.len(),
        info.model
    );

    // Flat: edgerag's Markdown sections (default limits), each embedded whole.
    let flat: Vec<(usize, Chunk)> = docs
        .iter()
        .enumerate()
        .flat_map(|(d, (path, text))| {
            chunk_text(path, text, &ChunkConfig::default()).into_iter().map(move |c| (d, c))
        })
        .collect();
    let flat_vectors = embed(&flat.iter().map(|(_, c)| c.text.clone()).collect::<Vec<_>>());

    // Parent/child.
    let config = ParentChildConfig::default();
    let pc: Vec<ParentChildDocument> = docs
        .iter()
        .map(|(path, text)| {
            block_on(chunk_document(path, text, Language::Markdown, &config, &embedder, &cache)).unwrap().0
        })
        .collect();
    let children: Vec<(usize, usize)> =
        pc.iter().enumerate().flat_map(|(d, doc)| (0..doc.children.len()).map(move |i| (d, i))).collect();
    let child_vectors =
        embed(&children.iter().map(|&(d, i)| pc[d].children[i].text.clone()).collect::<Vec<_>>());
    let query_vectors = embed(&queries.iter().map(|q| q.text.clone()).collect::<Vec<_>>());

    let overlaps = |q: &Query, d: usize, a: usize, b: usize| d == q.doc && a < q.target.1 && q.target.0 < b;
    let mut flat_score = Score::default();
    let mut pc_scores = [Score::default(), Score::default()];
    for (q, qv) in queries.iter().zip(&query_vectors) {
        let mut ranked: Vec<(f32, usize)> =
            flat_vectors.iter().enumerate().map(|(i, v)| (dot(qv, v), i)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let top: Vec<&(usize, Chunk)> = ranked.iter().take(10).map(|(_, i)| &flat[*i]).collect();
        let rank = top.iter().position(|(d, c)| overlaps(q, *d, c.start_byte, c.end_byte));
        let tokens = top.iter().take(5).map(|(_, c)| c.text.chars().count().div_ceil(4)).sum();
        flat_score.add(rank, tokens);

        let mut ranked: Vec<(f32, usize)> =
            child_vectors.iter().enumerate().map(|(i, v)| (dot(qv, v), i)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (k, normalize) in [false, true].into_iter().enumerate() {
            // Children of the top 50 hits, grouped per document (parent ids are per document).
            let mut results: Vec<(f32, usize, usize, usize, usize)> = Vec::new(); // score, doc, start, end, tokens
            for d in ranked.iter().take(50).map(|(_, i)| children[*i].0).collect::<HashSet<_>>() {
                let hits: Vec<ChildHit> = ranked
                    .iter()
                    .take(50)
                    .filter(|(_, i)| children[*i].0 == d)
                    .map(|(s, i)| ChildHit { child_id: pc[d].children[children[*i].1].id.clone(), score: *s })
                    .collect();
                for h in parents_for_hits(&hits, &pc[d].parents, &pc[d].children, false, 1000).unwrap() {
                    let parent = pc[d].parents.iter().find(|p| p.id == h.parent_id).unwrap();
                    let byte =
                        |c: usize| parent.text.char_indices().nth(c).map_or(parent.text.len(), |(b, _)| b);
                    let (a, b) =
                        (parent.start_byte + byte(h.start_char), parent.start_byte + byte(h.end_char));
                    results.push((h.score, d, a, b, h.text.chars().count().div_ceil(4)));
                }
            }
            if normalize {
                let avg =
                    results.iter().map(|r| (r.3 - r.2) as f32).sum::<f32>() / results.len().max(1) as f32;
                for r in &mut results {
                    r.0 *= (avg / (r.3 - r.2).max(1) as f32).sqrt();
                }
            }
            results.sort_by(|a, b| b.0.total_cmp(&a.0));
            results.truncate(10);
            let rank = results.iter().position(|r| overlaps(q, r.1, r.2, r.3));
            pc_scores[k].add(rank, results.iter().take(5).map(|r| r.4).sum());
        }
    }
    println!(
        "Prose retrieval: {} documents ({:.1} MB), {} queries, embedder {} ({} dims), dense only\n",
        docs.len(),
        corpus_bytes as f64 / 1e6,
        queries.len(),
        info.model,
        info.dims
    );
    println!("| chunking | R@1 | R@5 | MRR@10 | tokens (top 5) |\n|---|---|---|---|---|");
    println!("{}", flat_score.row(&format!("flat Markdown sections ({} chunks)", flat.len())));
    println!("{}", pc_scores[0].row(&format!("parent/child ({} children)", children.len())));
    println!("{}", pc_scores[1].row("parent/child + size normalization"));
}
