//! The one writer of the committed JSON Schemas in `schemas/`: the API contract's types
//! ([`edgerag_api::schema::all`], the core types they embed included) and the search profile
//! ([`edgerag_search::schema::all`]). The test below fails when a committed schema is stale or a
//! file in `schemas/` is no longer generated; regenerate every schema with
//! `UPDATE_SCHEMAS=1 cargo test -p edgerag-worker --no-default-features --lib schemas`.
use schemars::Schema;

use super::*;

/// `(file stem, schema)` for every file of `schemas/`: the API contract's types and the search
/// profile.
pub fn all() -> Vec<(&'static str, Schema)> {
    edgerag_api::schema::all().into_iter().chain(edgerag_search::schema::all()).collect()
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
    use std::collections::BTreeSet;
    use std::path::PathBuf;

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
}
