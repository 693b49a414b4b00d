//! `GET /health`.
use worker::{Env, Response};

use crate::api::HealthResponse;
use crate::http::{reply, ApiResult};
use crate::store::Db;

pub async fn get(env: &Env) -> ApiResult<Response> {
    let database = match Db::from_env(env) {
        Ok(db) => db.first::<serde_json::Value>("SELECT 1 AS ok", &[]).await.is_ok(),
        Err(_) => false,
    };
    reply(
        200,
        &HealthResponse {
            status: "ok".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            database,
            embedder: crate::pipeline::embedder_view(env),
            vector_index: crate::pipeline::vector_index_kind(env),
        },
    )
}
