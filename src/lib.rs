//! The edgerag Cloudflare Worker (placeholder until the worker issue lands).
