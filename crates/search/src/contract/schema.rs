//! JSON Schemas of the search API, generated from the Rust types. The worker's schema generator
//! (`src/api/schema.rs`) writes them to `schemas/search-*.schema.json` with the rest of the API and
//! checks they are fresh; the MCP endpoint serves the request schemas as the tools' `inputSchema`.
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

#[cfg(test)]
mod tests {
    use super::*;

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
