//! JSON Schemas of the search API, generated from the Rust types (the same way the worker's API
//! schemas are): `schemas/search-*.schema.json`. The test fails when a committed schema is stale;
//! regenerate with `UPDATE_SCHEMAS=1 cargo test -p edgerag-search schemas`. The MCP endpoint
//! serves the request schemas as the tools' `inputSchema`.
use schemars::{schema_for, Schema};

use crate::profile::Profile;
use crate::request::{GlobalSearchRequest, SearchMode, SearchRequest, SimpleSearchRequest};
use crate::response::SearchResponse;

/// `(file stem, schema)` for every search contract.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        ("search-request", schema_for!(SearchRequest)),
        ("search-global-request", schema_for!(GlobalSearchRequest)),
        ("search-simple-request", schema_for!(SimpleSearchRequest)),
        ("search-response", schema_for!(SearchResponse)),
        ("search-profile", schema_for!(Profile)),
    ]
}

/// The request schema of one tool (MCP `inputSchema`).
pub fn request_schema(mode: SearchMode) -> Schema {
    match mode {
        SearchMode::Repo => schema_for!(SearchRequest),
        SearchMode::Global => schema_for!(GlobalSearchRequest),
        SearchMode::Simple | SearchMode::SimpleGlobal => schema_for!(SimpleSearchRequest),
    }
}

/// The exact bytes written to `schemas/<stem>.schema.json`.
pub fn render(schema: &Schema) -> String {
    let mut out = serde_json::to_string_pretty(schema).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn schemas_are_fresh() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
        let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
        let mut stale = Vec::new();
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
            "stale or missing JSON Schemas {stale:?}: run `UPDATE_SCHEMAS=1 cargo test -p edgerag-search schemas`"
        );
    }

    #[test]
    fn requests_reject_unknown_fields() {
        for (stem, schema) in all() {
            if stem.ends_with("-request") {
                assert_eq!(schema.get("additionalProperties"), Some(&serde_json::json!(false)), "{stem}");
            }
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
