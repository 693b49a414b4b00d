use serde::{Deserialize, Serialize};

use crate::lang::Language;

/// Bumped whenever chunk boundaries or ids can change for the same input; stored with each chunk
/// so re-indexing can tell old chunks from new ones.
pub const CHUNK_SCHEMA_VERSION: u32 = 1;

/// One retrievable unit of a file. JSON field names are camelCase and stable (they are the API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Chunk {
    /// BLAKE3 of content + path + start line + end line, 64 hex characters (`ids::chunk_id`).
    pub id: String,
    /// BLAKE3 of the content only.
    pub text_hash: String,
    pub path: String,
    pub language: Language,
    #[serde(rename = "type")]
    pub chunk_type: ChunkType,
    pub text: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    /// 1-based, inclusive.
    pub end_line: u32,
    /// Byte offset of the first byte of `text` in the file.
    pub start_byte: usize,
    /// Byte offset one past the last byte of `text` in the file.
    pub end_byte: usize,
    /// 0-based position within the file.
    pub chunk_index: u32,
    pub token_count: u32,
    /// At most 20, most relevant first.
    pub keywords: Vec<String>,
    pub metadata: ChunkMetadata,
    /// Set by the store that persists the chunk (ISO-8601); `None` from the pure chunker so that
    /// chunking stays deterministic.
    #[serde(default)]
    pub updated_at: Option<String>,
    pub version: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChunkMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading_level: Option<u8>,
    /// Headings from the document root down to this chunk's own heading.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heading_path: Vec<String>,
    /// Heading text (Markdown) or definition name (code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol_name: Option<String>,
    /// Enclosing definition when a large definition was split at its children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_symbol: Option<String>,
    /// See [`crate::ids::span_hash`].
    pub span_hash: String,
    /// Lines at the start of this chunk repeated from the previous chunk (0 for the first chunk).
    pub overlap_lines: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Id of the code-graph node the chunk belongs to: the innermost symbol whose span holds the
    /// chunk (else the file's module node). Set by [`crate::graph::chunk_with_graph`] only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol_id: Option<String>,
    /// Why the file was cut by a cheaper chunker than its language's usual one (absent when it
    /// was not). The same on every chunk of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<ChunkFallback>,
}

/// Why a file of a language with a tree-sitter grammar was chunked without its syntax tree.
/// Serialized as a stable code: `PARSE_OVER_BUDGET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChunkFallback {
    /// The parse stopped at its budget of operations: the syntax tree would have been too large
    /// for the memory budget (about 5 KB of tree per 100 operations: a file of hundreds of
    /// thousands of tokens, such as a large table of literals), or the grammar's error recovery
    /// ran away on hostile input. The file is cut by the grammar-free declaration heuristics
    /// (else by lines) and has no code graph.
    ParseOverBudget,
}

impl ChunkFallback {
    /// The stable code (as serialized), also a job's warning for the file.
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkFallback::ParseOverBudget => "PARSE_OVER_BUDGET",
        }
    }
}

/// What a chunk holds. Serialized in kebab-case: `code-function`, `markdown-section`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ChunkType {
    MarkdownSection,
    CodeFunction,
    CodeMethod,
    CodeClass,
    CodeInterface,
    CodeEnum,
    CodeType,
    CodeStruct,
    CodeTrait,
    CodeImpl,
    CodeModule,
    CodeBlock,
    TextBlock,
    // A per-node plan's chunk: a symbol's rendered doc, or its snippet and summary, with what it
    // uses and what uses it (see `graph::plan`). A plain comment: a doc comment would turn the
    // schema's `enum` into a `oneOf`.
    SymbolPlan,
}

impl ChunkType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkType::MarkdownSection => "markdown-section",
            ChunkType::CodeFunction => "code-function",
            ChunkType::CodeMethod => "code-method",
            ChunkType::CodeClass => "code-class",
            ChunkType::CodeInterface => "code-interface",
            ChunkType::CodeEnum => "code-enum",
            ChunkType::CodeType => "code-type",
            ChunkType::CodeStruct => "code-struct",
            ChunkType::CodeTrait => "code-trait",
            ChunkType::CodeImpl => "code-impl",
            ChunkType::CodeModule => "code-module",
            ChunkType::CodeBlock => "code-block",
            ChunkType::TextBlock => "text-block",
            ChunkType::SymbolPlan => "symbol-plan",
        }
    }

    /// True for chunks that hold one named definition.
    pub fn is_definition(self) -> bool {
        !matches!(
            self,
            ChunkType::MarkdownSection | ChunkType::CodeBlock | ChunkType::TextBlock | ChunkType::SymbolPlan
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{ChunkFallback, ChunkMetadata};

    #[test]
    fn a_fallback_is_a_stable_code_and_absent_when_there_is_none() {
        let mut metadata = ChunkMetadata { span_hash: "0123456789abcdef".into(), ..ChunkMetadata::default() };
        let plain = serde_json::to_string(&metadata).expect("json");
        assert_eq!(plain, r#"{"spanHash":"0123456789abcdef","overlapLines":0}"#);
        metadata.fallback = Some(ChunkFallback::ParseOverBudget);
        let json = serde_json::to_string(&metadata).expect("json");
        assert_eq!(
            json,
            r#"{"spanHash":"0123456789abcdef","overlapLines":0,"fallback":"PARSE_OVER_BUDGET"}"#
        );
        assert_eq!(serde_json::from_str::<ChunkMetadata>(&json).expect("read back"), metadata);
        assert_eq!(serde_json::from_str::<ChunkMetadata>(&plain).expect("stored before").fallback, None);
        let code = serde_json::to_value(ChunkFallback::ParseOverBudget).expect("a code");
        assert_eq!(code, ChunkFallback::ParseOverBudget.as_str(), "the code is the serialized name");
    }
}
