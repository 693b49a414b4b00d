//! The search API's contract: the typed requests of the four search tools ([`request`]), the v4
//! response ([`response`]) and the JSON Schemas generated from both ([`schema`]). The worker's
//! HTTP and MCP front ends and the schema generator read these types; the stages never parse JSON
//! themselves.
pub mod request;
pub mod response;
pub mod schema;
