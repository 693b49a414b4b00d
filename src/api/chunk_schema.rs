//! JSON Schema mirrors of the core's chunk types. The core stays free of schema machinery; these
//! mirrors describe the exact JSON the core serializes, and the tests below fail when the core's
//! types change shape without the mirror (and the committed schema) following.
#![allow(dead_code)] // the structs exist only to derive their schemas

use std::borrow::Cow;

use edgerag_core::Language;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

/// A language name as the core serializes it (`rust`, `typescript`, `markdown`, ...).
pub struct LanguageSchema;

impl JsonSchema for LanguageSchema {
    fn schema_name() -> Cow<'static, str> {
        "Language".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = Language::ALL.iter().map(|l| l.as_str()).collect();
        json_schema!({ "type": "string", "enum": names })
    }
}

/// Every chunk type name (kebab-case).
pub const CHUNK_TYPES: &[&str] = &[
    "markdown-section",
    "code-function",
    "code-method",
    "code-class",
    "code-interface",
    "code-enum",
    "code-type",
    "code-struct",
    "code-trait",
    "code-impl",
    "code-module",
    "code-block",
    "text-block",
];

pub struct ChunkTypeSchema;

impl JsonSchema for ChunkTypeSchema {
    fn schema_name() -> Cow<'static, str> {
        "ChunkType".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": CHUNK_TYPES })
    }
}

/// One chunk (`edgerag_core::Chunk`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "Chunk")]
pub struct ChunkSchema {
    /// BLAKE3 of content + path + start line + end line (64 hex chars).
    id: String,
    /// BLAKE3 of the content only.
    text_hash: String,
    path: String,
    language: LanguageSchema,
    #[serde(rename = "type")]
    chunk_type: ChunkTypeSchema,
    text: String,
    /// 1-based, inclusive.
    start_line: u32,
    end_line: u32,
    start_byte: u64,
    end_byte: u64,
    /// 0-based within the file.
    chunk_index: u32,
    token_count: u32,
    /// At most 20, most relevant first.
    keywords: Vec<String>,
    metadata: ChunkMetadataSchema,
    updated_at: Option<String>,
    version: u32,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "ChunkMetadata")]
pub struct ChunkMetadataSchema {
    #[serde(default)]
    heading_level: Option<u8>,
    #[serde(default)]
    heading_path: Vec<String>,
    #[serde(default)]
    symbol_name: Option<String>,
    #[serde(default)]
    parent_symbol: Option<String>,
    span_hash: String,
    overlap_lines: u32,
    #[serde(default)]
    summary: Option<String>,
}

/// `preset` names accepted by `edgerag_core::options`.
pub struct PresetSchema;

impl JsonSchema for PresetSchema {
    fn schema_name() -> Cow<'static, str> {
        "Preset".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": ["default", "seed-001", "compact", "seed-003"] })
    }
}

/// Chunking options: a preset plus `ChunkConfig` overrides (every field optional).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "ChunkOptions")]
pub struct ChunkOptionsSchema {
    #[serde(default)]
    preset: Option<PresetSchema>,
    /// `maxLinesPerChunk` (default 100).
    #[serde(default)]
    max_lines: Option<u64>,
    /// `maxTokensPerChunk` (default 2000).
    #[serde(default)]
    max_tokens: Option<u64>,
    /// Default 3.
    #[serde(default)]
    overlap_lines: Option<u64>,
    /// Default 5.
    #[serde(default)]
    docstring_lines: Option<u64>,
    /// Deepest Markdown heading level that starts a chunk (default 2).
    #[serde(default)]
    markdown_split_depth: Option<u8>,
    /// Default 1 MiB.
    #[serde(default)]
    max_file_bytes: Option<u64>,
    #[serde(default)]
    language: Option<LanguageSchema>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use edgerag_core::{ChunkConfig, ChunkType};
    use std::collections::BTreeSet;

    fn props<T: JsonSchema>() -> BTreeSet<String> {
        let schema = schemars::schema_for!(T);
        schema.get("properties").unwrap().as_object().unwrap().keys().cloned().collect()
    }

    fn keys(value: &serde_json::Value) -> BTreeSet<String> {
        value.as_object().unwrap().keys().cloned().collect()
    }

    /// A chunk with every optional field set serializes to exactly the mirrored fields.
    #[test]
    fn chunk_mirror_matches_the_core() {
        let text = "/// Adds.\nfn add(a: i32) -> i32 { a }\n";
        let mut chunk = edgerag_core::chunk_text("src/lib.rs", text, &ChunkConfig::default()).remove(0);
        chunk.updated_at = Some("2025-01-01T00:00:00.000Z".into());
        chunk.metadata.heading_level = Some(1);
        chunk.metadata.heading_path = vec!["A".into()];
        chunk.metadata.symbol_name = Some("add".into());
        chunk.metadata.parent_symbol = Some("m".into());
        chunk.metadata.summary = Some("s".into());
        let json = serde_json::to_value(&chunk).unwrap();
        assert_eq!(keys(&json), props::<ChunkSchema>());
        assert_eq!(keys(&json["metadata"]), props::<ChunkMetadataSchema>());
    }

    #[test]
    fn options_mirror_matches_the_core() {
        let mut want = keys(&serde_json::to_value(ChunkConfig::default()).unwrap());
        want.insert("preset".into());
        assert_eq!(want, props::<ChunkOptionsSchema>());
        for preset in ["default", "seed-001", "compact", "seed-003"] {
            let json = format!(r#"{{"preset":"{preset}"}}"#);
            assert!(edgerag_core::options::parse_options(&json).is_ok(), "{preset}");
        }
    }

    #[test]
    fn chunk_type_names_are_the_cores() {
        // Exhaustive: adding a ChunkType variant breaks this test until CHUNK_TYPES lists it.
        fn name(t: ChunkType) -> &'static str {
            match t {
                ChunkType::MarkdownSection
                | ChunkType::CodeFunction
                | ChunkType::CodeMethod
                | ChunkType::CodeClass
                | ChunkType::CodeInterface
                | ChunkType::CodeEnum
                | ChunkType::CodeType
                | ChunkType::CodeStruct
                | ChunkType::CodeTrait
                | ChunkType::CodeImpl
                | ChunkType::CodeModule
                | ChunkType::CodeBlock
                | ChunkType::TextBlock => t.as_str(),
            }
        }
        for n in CHUNK_TYPES {
            let t: ChunkType = serde_json::from_value(serde_json::json!(n)).unwrap();
            assert_eq!(name(t), *n);
        }
    }
}
