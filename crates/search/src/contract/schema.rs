//! The JSON Schema of a search profile (the server's `SEARCH_PROFILES` configuration), generated
//! from [`Profile`]. The requests' and the response's schemas are the API contract's
//! ([`edgerag_api::schema`]); the worker's schema generator (`src/api/schema.rs`) writes them all
//! to `schemas/` and checks they are fresh; the MCP endpoint serves the request schemas as the
//! tools' `inputSchema`.
use schemars::{schema_for, Schema};

pub use edgerag_api::schema::request_schema;

use crate::profile::Profile;

/// `(file stem, schema)` of the search crate's own types.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![("search-profile", schema_for!(Profile))]
}
