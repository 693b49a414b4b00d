//! edgerag-api: the contract of edgerag's HTTP API (and of the MCP tools, which take the same
//! arguments and give the same answers) in one place. Every request and response is one typed
//! definition here, with its JSON Schema ([`schema`], written to `schemas/` by the worker) and its
//! parser (serde, plus the search requests' aliases in [`search::request`]).
//!
//! ```text
//! edgerag-core ◀── edgerag-api ◀── edgerag-search ◀── worker (src/)
//!                        ▲
//!                        └──────── edgerag-cli
//! ```
//!
//! The worker answers with these types, the search crate parses the tools' arguments into them,
//! and the CLI builds its requests from them and reads the answers into them. Pure serde +
//! schemars: no I/O, builds natively and for wasm32-unknown-unknown.
//!
//! Requests reject unknown fields. Answers are read tolerantly (a field added by a newer server
//! is ignored), while their schemas still list every field (`additionalProperties: false`).
//!
//! ```
//! use edgerag_api::{GrepRequest, GrepResponse};
//!
//! let request = GrepRequest { pattern: "fn main".into(), ..Default::default() };
//! assert_eq!(serde_json::to_value(&request).unwrap(), serde_json::json!({"pattern": "fn main", "regex": false}));
//! let answer: GrepResponse = serde_json::from_str(
//!     r#"{"matches": [], "filesScanned": 3, "usedIndex": true, "limitReached": false,
//!         "truncated": false, "addedLater": 1}"#,
//! )
//! .unwrap();
//! assert_eq!(answer.files_scanned, 3);
//! ```
pub mod error;
pub mod navigation;
pub mod plans;
pub mod repo;
pub mod routes;
pub mod schema;
pub mod search;
pub mod tools;

pub use error::{ErrorBody, ErrorDetail};
pub use navigation::{Direction, LinesQuery, ReferencesQuery, SymbolQuery};
pub use plans::*;
pub use routes::*;
pub use tools::*;
