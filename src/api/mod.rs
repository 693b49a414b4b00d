//! The HTTP API's request and response types are the contract crate's ([`edgerag_api`]),
//! re-exported here so the worker names them `crate::api::…`; [`schema`] writes their JSON
//! Schemas to `schemas/` and checks them.
pub mod schema;

pub use edgerag_api::*;
