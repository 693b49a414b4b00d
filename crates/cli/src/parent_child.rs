//! `edgerag chunk --parent-child`: prose cut into parents and children by the core's parent/child
//! chunker, printed as JSONL — each parent (`"level": "parent"`) followed by its children
//! (`"level": "child"`, with `parentId` and `order`), with char, byte and line spans.
//!
//! Sentences are embedded by `--embedder`: `hash` (the core's deterministic hashing embedder —
//! reproducible, but not semantic, so its cliffs follow shared words only) or the base URL of an
//! OpenAI-compatible embeddings server (e.g. the local `edgerag-embed-server`), with an in-memory
//! cache so a sentence repeated across files is embedded once per run.
use std::io::{self, BufWriter, Write};
use std::time::Duration;

use edgerag_core::chunk::parent_child::{
    chunk_document, ChildChunk, ParentChildConfig, ParentChildDocument, ParentChunk,
};
use edgerag_core::embed::{
    openai, EmbedError, Embedder, EmbedderInfo, HashingEmbedder, InMemoryEmbeddingCache,
};
use edgerag_core::Language;
use serde::Serialize;

use crate::walk::{walk, Entry};
use crate::{Failure, Outcome};

/// Where sentence vectors come from.
pub enum EmbedderChoice {
    Hash,
    Url { base: String, model: String, dims: usize },
}

impl EmbedderChoice {
    pub fn parse(spec: &str, model: &str, dims: usize) -> Result<EmbedderChoice, String> {
        if spec == "hash" {
            Ok(EmbedderChoice::Hash)
        } else if spec.starts_with("http://") || spec.starts_with("https://") {
            Ok(EmbedderChoice::Url { base: spec.to_string(), model: model.to_string(), dims })
        } else {
            Err(format!("--embedder must be `hash` or an http(s) URL, got {spec:?}"))
        }
    }
}

/// An OpenAI-compatible embeddings server over blocking HTTP.
struct HttpEmbedder {
    config: openai::OpenAiConfig,
    agent: ureq::Agent,
}

#[async_trait::async_trait(?Send)]
impl Embedder for HttpEmbedder {
    fn info(&self) -> EmbedderInfo {
        EmbedderInfo {
            provider: "openai".into(),
            model: self.config.model.clone(),
            dims: self.config.dims,
            max_batch: self.config.max_batch,
            max_input_chars: self.config.max_input_chars,
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut req = self.agent.post(&openai::embeddings_url(&self.config.base_url));
        for (name, value) in openai::request_headers(&self.config) {
            req = req.set(name, &value);
        }
        let body = openai::request_body(&self.config, texts).to_string();
        let (status, text) = match req.send_string(&body) {
            Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
            Err(ureq::Error::Status(status, r)) => (status, r.into_string().unwrap_or_default()),
            Err(e) => return Err(EmbedError::Backend { status: 0, message: e.to_string() }),
        };
        openai::parse_response(status, &text, texts.len(), self.config.dims)
    }
}

/// Polls a future whose work is synchronous (the blocking embedders above) to completion.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

/// A parent line of the output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ParentLine<'a> {
    level: &'static str,
    path: &'a str,
    #[serde(flatten)]
    parent: &'a ParentChunk,
    chars: usize,
}

/// A child line of the output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChildLine<'a> {
    level: &'static str,
    path: &'a str,
    #[serde(flatten)]
    child: &'a ChildChunk,
    chars: usize,
}

/// One JSON line per parent, then one per child of it.
fn write_document(out: &mut impl Write, path: &str, doc: &ParentChildDocument) -> io::Result<()> {
    let mut children = doc.children.iter().peekable();
    for p in &doc.parents {
        let line = ParentLine { level: "parent", path, parent: p, chars: p.end_char - p.start_char };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")?;
        while let Some(c) = children.next_if(|c| c.parent_id == p.id) {
            let line = ChildLine { level: "child", path, child: c, chars: c.end_char - c.start_char };
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Chunks every file under `paths` (walk order) into parents and children and prints them.
pub fn run(
    paths: &[String],
    choice: EmbedderChoice,
    config: &ParentChildConfig,
    max_file_bytes: usize,
) -> Outcome {
    config.validate().map_err(|e| Failure::Usage(e.to_string()))?;
    let embedder: Box<dyn Embedder> = match choice {
        EmbedderChoice::Hash => Box::new(HashingEmbedder::new(384)),
        EmbedderChoice::Url { base, model, dims } => Box::new(HttpEmbedder {
            config: openai::OpenAiConfig {
                base_url: base,
                model,
                dims,
                api_key: std::env::var("EMBED_API_KEY").ok(),
                send_dimensions: false,
                max_batch: config.embedding_batch_size,
                timeout_ms: openai::DEFAULT_TIMEOUT_MS,
                max_input_chars: None,
            },
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_millis(openai::DEFAULT_TIMEOUT_MS))
                .build(),
        }),
    };
    let cache = InMemoryEmbeddingCache::new();
    let mut out = BufWriter::new(io::stdout());
    let mut failure: Option<Failure> = None;
    walk(paths, max_file_bytes, &mut |entry| {
        if failure.is_some() {
            return;
        }
        match entry {
            Entry::Skipped { path, code, message } => {
                eprintln!("edgerag chunk: skipped {path}: {code}: {message}")
            }
            Entry::File { path, text } => {
                let language = Language::detect(&path);
                match block_on(chunk_document(&path, &text, language, config, &embedder, &cache)) {
                    Ok((doc, _)) => {
                        if let Err(e) = write_document(&mut out, &path, &doc) {
                            failure = Some(write_failure(e));
                        }
                    }
                    Err(e) => failure = Some(Failure::Failed(format!("{path}: {}: {e}", e.code()))),
                }
            }
        }
    });
    if let Some(f) = failure {
        return match f {
            Failure::Reported => Ok(()),
            f => Err(f),
        };
    }
    match out.flush() {
        Err(e) => match write_failure(e) {
            Failure::Reported => Ok(()),
            f => Err(f),
        },
        Ok(()) => Ok(()),
    }
}

/// A closed pipe (`| head`) is a normal way to stop reading.
fn write_failure(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::Reported
    } else {
        Failure::Failed(format!("cannot write output: {e}"))
    }
}
