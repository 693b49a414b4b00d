//! The one generator of the committed JSON Schemas in `schemas/`: the worker's API types, the core
//! types they embed (`edgerag-core` with its `schemars` feature) and the search contracts
//! ([`edgerag_search::schema::all`]). The test below fails when a committed schema is stale or a
//! file in `schemas/` is no longer generated; regenerate every schema with
//! `UPDATE_SCHEMAS=1 cargo test -p edgerag-worker --no-default-features --lib schemas`.
use schemars::{schema_for, Schema};

use super::*;

/// `(file stem, schema)` for every request and response of the worker's API.
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
    ]
    .into_iter()
    .chain(edgerag_search::schema::all())
    .collect()
}

/// The MCP `outputSchema` of a tool: its answer's type, or the error body every tool answers
/// with when it fails (`structuredContent` is one of the two), generated like the files in
/// `schemas/` and sharing one `$defs`.
pub fn tool_output_schema(tool: edgerag_search::mcp::Tool) -> serde_json::Value {
    use edgerag_search::mcp::Tool;
    use schemars::generate::SchemaSettings;
    let mut g = SchemaSettings::draft2020_12().into_generator();
    let answers: Vec<Schema> = match tool {
        Tool::Search(_) => vec![g.subschema_for::<edgerag_search::SearchResponse>()],
        Tool::IndexStatus => {
            vec![g.subschema_for::<RepoStatusResponse>(), g.subschema_for::<ReposResponse>()]
        }
        Tool::FindSymbol => vec![g.subschema_for::<SymbolsResponse>()],
        Tool::SymbolReferences => vec![g.subschema_for::<ReferencesResponse>()],
        Tool::ReadFileRange => vec![g.subschema_for::<FileLinesResponse>()],
        Tool::ListFiles => vec![g.subschema_for::<ListFilesResponse>()],
        Tool::Outline => vec![g.subschema_for::<OutlineResponse>()],
        Tool::Grep => vec![g.subschema_for::<GrepResponse>()],
        Tool::Map => vec![g.subschema_for::<MapResponse>()],
        Tool::Impact => vec![g.subschema_for::<ImpactResponse>()],
    };
    let error = g.subschema_for::<ErrorBody>();
    let mut any_of: Vec<serde_json::Value> = answers.into_iter().map(serde_json::Value::from).collect();
    any_of.push(error.into());
    serde_json::json!({
        "type": "object",
        "anyOf": any_of,
        "$defs": g.take_definitions(true),
    })
}

/// The exact bytes written to `schemas/<stem>.schema.json`.
pub fn render(schema: &Schema) -> String {
    let mut out = serde_json::to_string_pretty(schema).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use edgerag_core::options::ChunkOptionsSchema;
    use edgerag_core::{Chunk, ChunkConfig, ChunkMetadata, ChunkType};
    use schemars::JsonSchema;
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    fn props<T: JsonSchema>() -> BTreeSet<String> {
        let schema = schema_for!(T);
        schema.get("properties").unwrap().as_object().unwrap().keys().cloned().collect()
    }

    fn keys(value: &serde_json::Value) -> BTreeSet<String> {
        value.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn schemas_are_fresh() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
        let mut stale = Vec::new();
        let generated: BTreeSet<String> =
            all().iter().map(|(stem, _)| format!("{stem}.schema.json")).collect();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if !generated.contains(&name) {
                if update {
                    std::fs::remove_file(dir.join(&name)).unwrap();
                } else {
                    stale.push(format!("{name} (no longer generated)"));
                }
            }
        }
        for (stem, schema) in all() {
            let path = dir.join(format!("{stem}.schema.json"));
            let want = render(&schema);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &want).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "stale or missing JSON Schemas {stale:?}: run \
             `UPDATE_SCHEMAS=1 cargo test -p edgerag-worker --no-default-features --lib schemas`"
        );
    }

    /// Every `$ref` of a tool's output schema resolves inside it (MCP clients must not fetch).
    #[test]
    fn tool_output_schemas_are_self_contained_objects() {
        fn refs(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(o) => {
                    if let Some(r) = o.get("$ref").and_then(|r| r.as_str()) {
                        out.push(r.to_string());
                    }
                    o.values().for_each(|x| refs(x, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
                _ => {}
            }
        }
        for tool in edgerag_search::mcp::Tool::ALL {
            let schema = tool_output_schema(tool);
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert!(schema.get("$schema").is_none());
            let mut found = Vec::new();
            refs(&schema, &mut found);
            assert!(!found.is_empty(), "{}", tool.name());
            for r in found {
                let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{r} is not local"));
                assert!(schema["$defs"].get(name).is_some(), "{}: {r} does not resolve", tool.name());
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
}
