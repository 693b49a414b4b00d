//! The edgerag Cloudflare Worker (placeholder until the worker issue lands).

pub mod embed;
pub mod vector;
