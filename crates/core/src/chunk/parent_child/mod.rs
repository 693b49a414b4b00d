//! Parent/child chunking of prose: "retrieve small, return big".
//!
//! A document is cut into **parents** — natural blocks (Markdown sections with their heading
//! path, plain-text paragraph groups) sized between `minParentSize` and `maxParentSize` and never
//! crossing a chapter — and each parent into **children** at semantic cliffs (sentences whose
//! neighbours' embeddings are dissimilar), sized around `targetChildSize` and never over
//! `maxChildSize`. Children are what is embedded and searched; parents are what is returned.
//!
//! One file per job: [`sentences`] (units), [`cliffs`] (similarities, cliffs, children),
//! [`parents`] (structure and sizes), `assemble` (ids, offsets, lines). Everything is pure and
//! synchronous given the neighbour similarities; [`chunk_document`] is the async driver that
//! embeds the sentences through the [`Embedder`] port — in batches of `embeddingBatchSize`,
//! through an [`EmbeddingCache`] keyed by the sentence's content hash, so the same sentence is
//! never embedded twice — and then assembles.
//!
//! Guarantees (checked by property tests): parents tile the document (after a byte order mark)
//! and children tile their parent exactly; no parent crosses a chapter; child order is 0..n;
//! every child is at most `maxChildSize` chars; every parent is within bounds except a chapter
//! smaller than `minParentSize` (see [`parents`] for the condition on the configuration).
use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::embed::{embed_cached, EmbedError, EmbedStats, Embedder, EmbedderInfo, EmbeddingCache};
use crate::lang::Language;

mod assemble;
pub mod cliffs;
pub mod parents;
pub mod sentences;

/// The parameters of parent/child chunking. JSON names are camelCase; every field is optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ParentChildConfig {
    /// A boundary between two sentences whose cosine similarity is below this is a cliff
    /// (default 0.3; -1..=1).
    pub similarity_threshold: f32,
    /// Preferred child size in chars (default 250).
    pub target_child_size: usize,
    /// Children under this many chars join a neighbour when they fit (default 100).
    pub min_child_size: usize,
    /// Hard upper bound of a child in chars (default 400).
    pub max_child_size: usize,
    /// Parents under this many chars merge with a neighbour of the same chapter (default 150).
    pub min_parent_size: usize,
    /// Parents over this many chars are split (default 1500).
    pub max_parent_size: usize,
    /// Markdown headings of this level or above start a chapter (default 1).
    pub chapter_heading_depth: u8,
    /// Sentences per embedding call (default 32).
    pub embedding_batch_size: usize,
    /// Quiet time after the last edit of a document before it is re-chunked (default 3000 ms).
    pub debounce_delay_ms: u64,
}

impl Default for ParentChildConfig {
    fn default() -> Self {
        ParentChildConfig {
            similarity_threshold: 0.3,
            target_child_size: 250,
            min_child_size: 100,
            max_child_size: 400,
            min_parent_size: 150,
            max_parent_size: 1500,
            chapter_heading_depth: 1,
            embedding_batch_size: 32,
            debounce_delay_ms: 3000,
        }
    }
}

/// Queue delays are limited to 12 hours.
const MAX_DEBOUNCE_MS: u64 = 12 * 60 * 60 * 1000;

impl ParentChildConfig {
    /// Parses JSON and checks it ([`ParentChildConfig::validate`]).
    pub fn from_json(value: &serde_json::Value) -> Result<Self, ParentChildError> {
        let config: ParentChildConfig = serde_json::from_value(value.clone()).map_err(|e| {
            ParentChildError::InvalidConfig { field: "chunking".into(), message: e.to_string() }
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Rejects values the chunker cannot honour, naming the field.
    pub fn validate(&self) -> Result<(), ParentChildError> {
        let bad = |field: &str, message: String| {
            Err(ParentChildError::InvalidConfig { field: field.into(), message })
        };
        if !self.similarity_threshold.is_finite() || !(-1.0..=1.0).contains(&self.similarity_threshold) {
            return bad(
                "similarityThreshold",
                format!("must be within -1..=1, got {}", self.similarity_threshold),
            );
        }
        if self.max_child_size == 0 {
            return bad("maxChildSize", "must be at least 1".into());
        }
        if self.min_child_size > self.target_child_size || self.target_child_size > self.max_child_size {
            return bad(
                "targetChildSize",
                format!(
                    "must satisfy minChildSize ≤ targetChildSize ≤ maxChildSize, got {} ≤ {} ≤ {}",
                    self.min_child_size, self.target_child_size, self.max_child_size
                ),
            );
        }
        if self.min_parent_size > self.max_parent_size {
            return bad(
                "minParentSize",
                format!("must be ≤ maxParentSize, got {} > {}", self.min_parent_size, self.max_parent_size),
            );
        }
        if self.max_child_size > self.max_parent_size {
            return bad(
                "maxChildSize",
                format!("must be ≤ maxParentSize, got {} > {}", self.max_child_size, self.max_parent_size),
            );
        }
        if !(1..=6).contains(&self.chapter_heading_depth) {
            return bad(
                "chapterHeadingDepth",
                format!("must be within 1..=6, got {}", self.chapter_heading_depth),
            );
        }
        if self.embedding_batch_size == 0 {
            return bad("embeddingBatchSize", "must be at least 1".into());
        }
        if self.debounce_delay_ms > MAX_DEBOUNCE_MS {
            return bad(
                "debounceDelayMs",
                format!("must be at most {MAX_DEBOUNCE_MS}, got {}", self.debounce_delay_ms),
            );
        }
        Ok(())
    }
}

/// Why a document was not chunked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParentChildError {
    #[error("invalid chunking configuration: {field} {message}")]
    InvalidConfig { field: String, message: String },
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl ParentChildError {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ParentChildError::InvalidConfig { .. } => "INVALID_CHUNKING_CONFIG",
            ParentChildError::Embed(e) => e.code(),
        }
    }
}

/// A parent: a natural block of the document, returned whole (or as a window) by search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ParentChunk {
    /// BLAKE3 of path + text + occurrence of that text in the document: unchanged parents keep
    /// their id when other parts of the document are edited.
    pub id: String,
    /// 0-based position in the document.
    pub order: u32,
    /// 0-based chapter; a parent never spans two.
    pub chapter: u32,
    /// Headings in force at the parent's start, outermost first.
    pub heading_path: Vec<String>,
    pub text: String,
    /// BLAKE3 of `text`.
    pub content_hash: String,
    /// Byte span in the document.
    pub start_byte: usize,
    pub end_byte: usize,
    /// Char (Unicode scalar value) span in the document.
    pub start_char: usize,
    pub end_char: usize,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub child_count: u32,
}

/// A child: a run of sentences of one parent, the unit that is embedded and searched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChildChunk {
    pub id: String,
    pub parent_id: String,
    /// 0-based position in the parent; the children of a parent are numbered 0..n.
    pub order: u32,
    pub text: String,
    pub content_hash: String,
    /// Char span in the parent's text: the children's texts concatenate to the parent's.
    pub start_char: usize,
    pub end_char: usize,
    /// 1-based, inclusive, in the document.
    pub start_line: u32,
    pub end_line: u32,
}

/// All parents of a document in order, and all children in (parent, order) order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ParentChildDocument {
    pub parents: Vec<ParentChunk>,
    pub children: Vec<ChildChunk>,
}

/// A document cut into sentence units and read for structure — everything before embeddings.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    body: &'a str,
    bom: usize,
    units: Vec<Range<usize>>,
    sizes: Vec<usize>,
    structure: parents::Structure,
}

/// Step 1 (pure): the sentence units of `text` and its structure. Markdown is read as Markdown,
/// every other language as plain text.
pub fn prepare<'a>(text: &'a str, language: Language, config: &ParentChildConfig) -> Prepared<'a> {
    let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let body = &text[bom..];
    let units = sentences::split(body, config.max_child_size);
    let sizes =
        units.iter().map(|u| crate::chunk::config::count_chars(&body.as_bytes()[u.clone()])).collect();
    let language = if language == Language::Markdown { Language::Markdown } else { Language::Text };
    let structure = parents::structure(body, language, &units, config.chapter_heading_depth);
    Prepared { body, bom, units, sizes, structure }
}

impl<'a> Prepared<'a> {
    pub fn unit_count(&self) -> usize {
        self.units.len()
    }

    /// What is embedded for each unit: its text without surrounding whitespace (`None` for a
    /// whitespace-only unit, which is not embedded).
    pub fn embedding_texts(&self) -> Vec<Option<&'a str>> {
        self.units
            .iter()
            .map(|u| {
                let t = self.body[u.clone()].trim();
                (!t.is_empty()).then_some(t)
            })
            .collect()
    }

    /// Step 2 (pure): parents and children, given the similarity of each unit to the next
    /// (`unit_count() - 1` values, see [`cliffs::neighbour_similarities`]).
    pub fn assemble(&self, path: &str, sims: &[f32], config: &ParentChildConfig) -> ParentChildDocument {
        if self.units.is_empty() {
            return ParentChildDocument::default();
        }
        debug_assert_eq!(sims.len() + 1, self.units.len());
        let spans = parents::parents(&self.sizes, sims, &self.structure, config);
        let layout = assemble::Layout {
            path,
            body: self.body,
            bom: self.bom,
            units: &self.units,
            sizes: &self.sizes,
            structure: &self.structure,
        };
        assemble::build(&layout, &spans, sims, config)
    }
}

/// Caps an embedder's batch size at `embeddingBatchSize`.
struct Batched<'a, E: ?Sized> {
    inner: &'a E,
    max_batch: usize,
}

#[async_trait::async_trait(?Send)]
impl<E: Embedder + ?Sized> Embedder for Batched<'_, E> {
    fn info(&self) -> EmbedderInfo {
        let info = self.inner.info();
        EmbedderInfo { max_batch: info.max_batch.min(self.max_batch).max(1), ..info }
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed(texts).await
    }
}

/// Chunks a document: units, embeddings of the distinct unit texts not yet in `cache` (in batches
/// of `embeddingBatchSize`), neighbour similarities, parents and children.
pub async fn chunk_document<E, C>(
    path: &str,
    text: &str,
    language: Language,
    config: &ParentChildConfig,
    embedder: &E,
    cache: &C,
) -> Result<(ParentChildDocument, EmbedStats), ParentChildError>
where
    E: Embedder + ?Sized,
    C: EmbeddingCache + ?Sized,
{
    config.validate()?;
    let prepared = prepare(text, language, config);
    let texts = prepared.embedding_texts();
    let mut distinct: Vec<String> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for t in texts.iter().flatten() {
        index.entry(t).or_insert_with(|| {
            distinct.push(t.to_string());
            distinct.len() - 1
        });
    }
    let batched = Batched { inner: embedder, max_batch: config.embedding_batch_size };
    let (vectors, stats) = embed_cached(&batched, cache, &distinct).await?;
    let per_unit: Vec<Option<&[f32]>> =
        texts.iter().map(|t| t.map(|t| vectors[index[t]].as_slice())).collect();
    let sims = cliffs::neighbour_similarities(&per_unit);
    Ok((prepared.assemble(path, &sims, config), stats))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::embed::{HashingEmbedder, InMemoryEmbeddingCache};
    use crate::vector::testing::block_on;

    #[test]
    fn invalid_configs_are_named() {
        let err = ParentChildConfig::from_json(&serde_json::json!({ "maxChildSize": 50 })).unwrap_err();
        assert_eq!(err.code(), "INVALID_CHUNKING_CONFIG");
        assert!(err.to_string().contains("targetChildSize"), "{err}");
        let err =
            ParentChildConfig::from_json(&serde_json::json!({ "similarityThreshold": 2.0 })).unwrap_err();
        assert!(err.to_string().contains("similarityThreshold"));
        let err = ParentChildConfig::from_json(&serde_json::json!({ "minParentSize": 2000 })).unwrap_err();
        assert!(err.to_string().contains("minParentSize"));
        let err = ParentChildConfig::from_json(&serde_json::json!({ "embeddingBatchSize": 0 })).unwrap_err();
        assert!(err.to_string().contains("embeddingBatchSize"));
        let err = ParentChildConfig::from_json(&serde_json::json!({ "bogus": 1 })).unwrap_err();
        assert!(err.to_string().contains("bogus"));
        let ok = ParentChildConfig::from_json(&serde_json::json!({ "targetChildSize": 300 })).unwrap();
        assert_eq!(ok.target_child_size, 300);
        assert_eq!(ok.max_parent_size, 1500);
    }

    #[test]
    fn batches_and_cache() {
        let text = (0..70).map(|i| format!("Sentence number {i} is here.")).collect::<Vec<_>>().join(" ");
        let e = HashingEmbedder::new(32).with_max_batch(100);
        let cache = InMemoryEmbeddingCache::new();
        let config = ParentChildConfig::default();
        let (doc, stats) =
            block_on(chunk_document("a.txt", &text, Language::Text, &config, &e, &cache)).unwrap();
        assert_eq!(stats.embedded, 70);
        assert_eq!(e.calls(), 3, "70 sentences in batches of 32");
        assert!(!doc.children.is_empty());
        let (again, stats) =
            block_on(chunk_document("b.txt", &text, Language::Text, &config, &e, &cache)).unwrap();
        assert_eq!(stats.embedded, 0);
        assert_eq!(e.texts_embedded(), 70);
        assert_eq!(again.children.len(), doc.children.len());
    }

    #[test]
    fn empty_and_whitespace_documents_have_no_parents() {
        let e = HashingEmbedder::new(8);
        let cache = InMemoryEmbeddingCache::new();
        for text in ["", "  \n\n\t"] {
            let (doc, _) =
                block_on(chunk_document("a.md", text, Language::Markdown, &Default::default(), &e, &cache))
                    .unwrap();
            assert!(doc.parents.is_empty() && doc.children.is_empty());
        }
        assert_eq!(e.calls(), 0);
    }
}
