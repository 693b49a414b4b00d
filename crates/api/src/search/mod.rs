//! The search tools' contract: the typed requests of the four tools ([`request`], with the
//! aliases each accepts) and the v4 response ([`response`]). The search crate's sanitizer parses
//! a body into the request types and its pipeline builds the response.
pub mod request;
pub mod response;
