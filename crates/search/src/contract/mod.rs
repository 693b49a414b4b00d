//! The search API's contract as the pipeline sees it. The types — the four search tools' typed
//! requests ([`request`]) and the v4 response — live in the API contract crate
//! ([`edgerag_api::search`]), where the worker, the CLI and the schema generator read them too;
//! here are what builds a response from the pipeline's candidates ([`response`]) and the schema
//! of the one search type that is not part of a request or answer, the profile ([`schema`]). The
//! stages never parse JSON themselves.
pub use edgerag_api::search::request;
pub mod response;
pub mod schema;
