use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::lang::Language;

/// Measures text in tokens for `max_tokens`. The default ([`CharsPerToken`]) estimates
/// `ceil(chars / 4)`; plug a real tokenizer with
/// [`ChunkConfig::with_token_counter`]. Counts must grow with the text (a longer span never counts
/// fewer tokens), since the chunkers search for the largest span that fits.
pub trait TokenCounter: Send + Sync {
    fn count(&self, text: &str) -> usize;
}

/// The default estimate: one token per 4 characters (Unicode scalar values), rounded up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CharsPerToken;

impl TokenCounter for CharsPerToken {
    fn count(&self, text: &str) -> usize {
        count_chars(text.as_bytes()).div_ceil(4)
    }
}

/// Number of chars in UTF-8 bytes (counts non-continuation bytes; vectorizes well).
#[inline]
pub(crate) fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The token counter a config uses: `None` is the built-in [`CharsPerToken`]. Not serialized (a
/// counter is code, not data); two configs compare equal only when they share the same counter.
#[derive(Clone, Default)]
pub struct TokenCounterRef(Option<Arc<dyn TokenCounter>>);

impl TokenCounterRef {
    pub fn custom(&self) -> Option<&dyn TokenCounter> {
        self.0.as_deref()
    }
}

impl PartialEq for TokenCounterRef {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl std::fmt::Debug for TokenCounterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "custom" } else { "chars/4" })
    }
}

/// Limits and knobs for chunking. `ChunkConfig::default()`:
/// 100 lines, 2000 tokens, 3 overlap lines, 5 docstring lines, Markdown split at H1/H2.
///
/// JSON (the API and the preview) uses camelCase names; every field is optional there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// `maxLinesPerChunk` (default 100).
    pub max_lines: usize,
    /// `maxTokensPerChunk` (default 2000). Tokens are estimated as `ceil(chars / 4)`.
    pub max_tokens: usize,
    /// `overlapLines` (default 3): lines repeated from the previous chunk when a unit had to be
    /// cut by size; never into the first chunk.
    pub overlap_lines: usize,
    /// `includeDocstringLines` (default 5): doc comment / decorator lines kept with a definition.
    pub docstring_lines: usize,
    /// Deepest Markdown heading level that starts a chunk (default 2: H1 and H2).
    pub markdown_split_depth: u8,
    /// Files larger than this are rejected by `chunk_bytes` (default 1 MiB).
    pub max_file_bytes: usize,
    /// Force a language instead of detecting it from the path.
    pub language: Option<Language>,
    /// How tokens are counted (default `ceil(chars / 4)`); see [`ChunkConfig::with_token_counter`].
    #[serde(skip)]
    pub token_counter: TokenCounterRef,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            max_lines: 100,
            max_tokens: 2000,
            overlap_lines: 3,
            docstring_lines: 5,
            markdown_split_depth: 2,
            max_file_bytes: 1024 * 1024,
            language: None,
            token_counter: TokenCounterRef::default(),
        }
    }
}

/// Named configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// 100 lines / 2000 tokens / 3 overlap lines: [`ChunkConfig::default`].
    Default,
    /// Small chunks for small context windows: about 1.5–2 KB or 150 lines, whichever comes first
    /// (500 tokens ≈ 2 KB).
    Compact,
}

impl Preset {
    pub fn config(self) -> ChunkConfig {
        match self {
            Preset::Default => ChunkConfig::default(),
            Preset::Compact => ChunkConfig { max_lines: 150, max_tokens: 500, ..ChunkConfig::default() },
        }
    }

    /// The preset a name stands for.
    pub fn from_name(name: &str) -> Option<Preset> {
        match name {
            "default" => Some(Preset::Default),
            "compact" => Some(Preset::Compact),
            _ => None,
        }
    }

    /// The preset's name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::Compact => "compact",
        }
    }
}

impl ChunkConfig {
    /// Token count of `text` under this config's counter (default `ceil(chars / 4)`), the
    /// measure behind `max_tokens` and `token_count`.
    pub fn count_tokens(&self, text: &str) -> usize {
        match self.token_counter.custom() {
            Some(counter) => counter.count(text),
            None => CharsPerToken.count(text),
        }
    }

    /// Use `counter` (e.g. a model's tokenizer) instead of the chars/4 estimate.
    pub fn with_token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.token_counter = TokenCounterRef(Some(counter));
        self
    }

    pub fn with_max_lines(mut self, max_lines: usize) -> Self {
        self.max_lines = max_lines;
        self
    }

    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    pub fn with_overlap_lines(mut self, overlap_lines: usize) -> Self {
        self.overlap_lines = overlap_lines;
        self
    }

    pub fn with_markdown_split_depth(mut self, depth: u8) -> Self {
        self.markdown_split_depth = depth;
        self
    }

    /// `max_lines` as the chunkers apply it (at least 1).
    pub fn line_limit(&self) -> usize {
        self.max_lines.max(1)
    }

    /// `max_tokens` as the chunkers apply it (at least 1).
    pub fn token_limit(&self) -> usize {
        self.max_tokens.max(1)
    }

    /// Overlap as the chunkers apply it: fewer than `max_lines`, so a chunk always adds new lines.
    pub fn overlap_limit(&self) -> usize {
        self.overlap_lines.min(self.line_limit() - 1)
    }
}
