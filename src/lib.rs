//! The edgerag Cloudflare Worker: the HTTP API (`/v1/*`, `/health`), the queue consumer that runs
//! the ingestion stages (fetch → chunk → embed → index), and the D1 / Vectorize / Workers AI glue.
//! Static assets (the preview page) are served by the platform; `wrangler.toml` routes only the
//! API paths to this code.
//!
//! | module | job |
//! | --- | --- |
//! | [`routes`] | HTTP routing and handlers |
//! | [`api`] | request / response types (→ `schemas/`) |
//! | [`ingest`] | paths, ignore rules, tar.gz reading |
//! | [`pipeline`] | queue stages, staging, job completion |
//! | [`store`] | typed D1 access |
//! | `embed`, `vector` | embedders and vector indexes (the ports' adapters) |

pub mod api;
pub mod config;
pub mod embed;
pub mod error;
pub mod http;
pub mod ingest;
pub mod log;
pub mod pipeline;
pub mod routes;
pub mod search;
pub mod store;
pub mod time;
pub mod vector;

use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> Result<Response> {
    if let Some(response) = vector::test_routes::handle(&mut req, &env).await {
        return response;
    }
    Ok(routes::handle(req, env).await)
}
