use serde::{Deserialize, Serialize};

use crate::lang::Language;

/// Limits and knobs for chunking. `ChunkConfig::default()` is seed 001's configuration:
/// 100 lines, 2000 tokens, 3 overlap lines, 5 docstring lines, Markdown split at H1/H2.
///
/// JSON (the API and the preview) uses camelCase names; every field is optional there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Files larger than this are rejected by [`super::chunk_bytes`] (default 1 MiB).
    pub max_file_bytes: usize,
    /// Force a language instead of detecting it from the path.
    pub language: Option<Language>,
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
        }
    }
}

/// Named configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Seed 001: 100 lines / 2000 tokens / overlap 3.
    Default,
    /// Seed 003: "1.5–2 KB or 150 lines, whichever comes first" (500 tokens ≈ 2 KB).
    Compact,
}

impl Preset {
    pub fn config(self) -> ChunkConfig {
        match self {
            Preset::Default => ChunkConfig::default(),
            Preset::Compact => ChunkConfig { max_lines: 150, max_tokens: 500, ..ChunkConfig::default() },
        }
    }

    pub fn from_name(name: &str) -> Option<Preset> {
        match name {
            "default" | "seed-001" => Some(Preset::Default),
            "compact" | "seed-003" => Some(Preset::Compact),
            _ => None,
        }
    }
}

impl ChunkConfig {
    /// Estimated token count (`ceil(chars / 4)`), the measure behind `max_tokens`.
    pub fn count_tokens(&self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }
}
