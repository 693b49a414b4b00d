//! JSON Schemas of every request and response, generated from the types of this crate (and the
//! core types they embed, `edgerag-core` with its `schemars` feature). The worker writes them to
//! `schemas/` with the search profile's schema and fails a test when a committed one is stale
//! (`src/api/schema.rs`).
use schemars::{schema_for, Schema};

use crate::search::request::{GlobalSearchRequest, SearchMode, SearchRequest, SimpleSearchRequest};
use crate::search::response::SearchResponse;
use crate::*;

/// `(file stem, schema)` for every request and response of the HTTP API (the search
/// tools' included).
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        ("error", schema_for!(ErrorBody)),
        ("health-response", schema_for!(HealthResponse)),
        ("chunk-request", schema_for!(ChunkRequest)),
        ("chunk-response", schema_for!(ChunkResponse)),
        ("index-request", schema_for!(IndexRequest)),
        ("upload-request", schema_for!(UploadRequest)),
        ("delete-files-request", schema_for!(DeleteFilesRequest)),
        ("job-accepted", schema_for!(JobAccepted)),
        ("job", schema_for!(JobView)),
        ("webhook-response", schema_for!(WebhookResponse)),
        ("who-am-i", schema_for!(WhoAmI)),
        ("repos-response", schema_for!(ReposResponse)),
        ("repo-status", schema_for!(RepoStatusResponse)),
        ("files-response", schema_for!(FilesResponse)),
        ("delete-repo-response", schema_for!(DeleteRepoResponse)),
        ("symbol-query", schema_for!(SymbolQuery)),
        ("symbols-response", schema_for!(SymbolsResponse)),
        ("symbol-response", schema_for!(SymbolResponse)),
        ("references-query", schema_for!(ReferencesQuery)),
        ("references-response", schema_for!(ReferencesResponse)),
        ("lines-query", schema_for!(LinesQuery)),
        ("file-lines-response", schema_for!(FileLinesResponse)),
        ("put-document-request", schema_for!(PutDocumentRequest)),
        ("document-accepted", schema_for!(DocumentAccepted)),
        ("document", schema_for!(DocumentView)),
        ("delete-document-response", schema_for!(DeletedDocument)),
        ("repo-settings", schema_for!(RepoSettings)),
        ("plan-request", schema_for!(PlanRequest)),
        ("plan-run-response", schema_for!(PlanRunResponse)),
        ("list-files-query", schema_for!(ListFilesQuery)),
        ("list-files-response", schema_for!(ListFilesResponse)),
        ("outline-query", schema_for!(OutlineQuery)),
        ("outline-response", schema_for!(OutlineResponse)),
        ("grep-request", schema_for!(GrepRequest)),
        ("grep-response", schema_for!(GrepResponse)),
        ("map-request", schema_for!(MapRequest)),
        ("map-response", schema_for!(MapResponse)),
        ("impact-request", schema_for!(ImpactRequest)),
        ("impact-response", schema_for!(ImpactResponse)),
        ("search-request", schema_for!(SearchRequest)),
        ("search-global-request", schema_for!(GlobalSearchRequest)),
        ("search-simple-request", schema_for!(SimpleSearchRequest)),
        ("search-response", schema_for!(SearchResponse)),
    ]
}

/// The request schema of one search tool (MCP `inputSchema`).
pub fn request_schema(mode: SearchMode) -> Schema {
    match mode {
        SearchMode::Repo => schema_for!(SearchRequest),
        SearchMode::Global => schema_for!(GlobalSearchRequest),
        SearchMode::Simple | SearchMode::SimpleGlobal => schema_for!(SimpleSearchRequest),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use edgerag_core::options::ChunkOptionsSchema;
    use edgerag_core::{Chunk, ChunkConfig, ChunkMetadata, ChunkType};
    use schemars::JsonSchema;
    use std::collections::BTreeSet;

    fn props<T: JsonSchema>() -> BTreeSet<String> {
        let schema = schema_for!(T);
        schema.get("properties").unwrap().as_object().unwrap().keys().cloned().collect()
    }

    fn keys(value: &serde_json::Value) -> BTreeSet<String> {
        value.as_object().unwrap().keys().cloned().collect()
    }

    /// A client reads the answer of a newer server that added a field; the schema still lists
    /// every field.
    #[test]
    fn answers_ignore_unknown_fields_and_their_schemas_do_not() {
        let body: ErrorBody = serde_json::from_value(
            serde_json::json!({"error": {"code": "X", "message": "m", "hint": "h"}, "more": 1}),
        )
        .unwrap();
        assert_eq!(body.error.code, "X");
        let files: FilesResponse =
            serde_json::from_value(serde_json::json!({"namespace": "repo:a/b", "files": [], "next": null}))
                .unwrap();
        assert!(files.files.is_empty());
        for (stem, schema) in all() {
            if !stem.ends_with("-request") && stem != "search-response" {
                assert_eq!(schema.get("additionalProperties"), Some(&serde_json::json!(false)), "{stem}");
            }
        }
    }

    #[test]
    fn requests_reject_unknown_fields() {
        for (stem, schema) in all() {
            if stem.ends_with("-request") {
                assert_eq!(schema.get("additionalProperties"), Some(&serde_json::json!(false)), "{stem}");
            }
        }
    }

    /// A chunk with every optional field set serializes to exactly the fields its schema lists.
    #[test]
    fn chunk_schema_lists_every_serialized_field() {
        let text = "/// Adds.\nfn add(a: i32) -> i32 { a }\n";
        let mut chunk = edgerag_core::chunk_text("src/lib.rs", text, &ChunkConfig::default()).remove(0);
        chunk.updated_at = Some("2025-01-01T00:00:00.000Z".into());
        chunk.metadata.heading_level = Some(1);
        chunk.metadata.heading_path = vec!["A".into()];
        chunk.metadata.symbol_name = Some("add".into());
        chunk.metadata.parent_symbol = Some("m".into());
        chunk.metadata.summary = Some("s".into());
        chunk.metadata.symbol_id = Some("0".repeat(64));
        chunk.metadata.fallback = Some(edgerag_core::chunk::ChunkFallback::ParseOverBudget);
        let json = serde_json::to_value(&chunk).unwrap();
        assert_eq!(keys(&json), props::<Chunk>());
        assert_eq!(keys(&json["metadata"]), props::<ChunkMetadata>());
    }

    #[test]
    fn options_schema_is_the_config_plus_a_preset_and_every_preset_parses() {
        let mut want = keys(&serde_json::to_value(ChunkConfig::default()).unwrap());
        want.insert("preset".into());
        assert_eq!(want, props::<ChunkOptionsSchema>());
        let schema = serde_json::to_value(schema_for!(ChunkOptionsSchema)).unwrap();
        assert!(schema.get("required").is_none(), "every option is optional: {schema}");
        let preset = &schema["$defs"]["Preset"];
        let presets: Vec<&serde_json::Value> = match preset["oneOf"].as_array() {
            Some(variants) => variants.iter().map(|v| &v["const"]).collect(),
            None => preset["enum"].as_array().unwrap().iter().collect(),
        };
        assert!(presets.len() >= 2, "{preset}");
        for preset in presets {
            assert!(preset.is_string(), "{preset}");
            let json = format!(r#"{{"preset":{preset}}}"#);
            assert!(edgerag_core::options::parse_options(&json).is_ok(), "{preset}");
        }
    }

    #[test]
    fn chunk_type_schema_lists_every_type_name() {
        // Exhaustive: adding a ChunkType variant breaks this test until the list below has it.
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
                | ChunkType::TextBlock
                | ChunkType::SymbolPlan => t.as_str(),
            }
        }
        let all = [
            ChunkType::MarkdownSection,
            ChunkType::CodeFunction,
            ChunkType::CodeMethod,
            ChunkType::CodeClass,
            ChunkType::CodeInterface,
            ChunkType::CodeEnum,
            ChunkType::CodeType,
            ChunkType::CodeStruct,
            ChunkType::CodeTrait,
            ChunkType::CodeImpl,
            ChunkType::CodeModule,
            ChunkType::CodeBlock,
            ChunkType::TextBlock,
            ChunkType::SymbolPlan,
        ];
        let schema = serde_json::to_value(schema_for!(ChunkType)).unwrap();
        let listed: BTreeSet<&str> =
            schema["enum"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        let names: BTreeSet<&str> = all.iter().map(|t| name(*t)).collect();
        assert_eq!(listed, names);
        for n in names {
            let t: ChunkType = serde_json::from_value(serde_json::json!(n)).unwrap();
            assert_eq!(name(t), n);
        }
    }

    #[test]
    fn response_schema_lists_every_v4_field() {
        let schema = serde_json::to_value(schema_for!(SearchResponse)).unwrap();
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        for field in [
            "matches",
            "rerankApplied",
            "augmentedPrompt",
            "instructions",
            "contextMissing",
            "noResults",
            "noResultsReason",
            "appliedModules",
            "warnings",
        ] {
            assert!(required.contains(&field), "{field} missing from {required:?}");
        }
    }
}
