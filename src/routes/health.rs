//! `GET /health`.
use worker::{Env, Response};

use crate::api::HealthResponse;
use crate::http::{reply, ApiResult};
use crate::store::Stores;

pub async fn get(env: &Env) -> ApiResult<Response> {
    // Every database must answer.
    let database = match Stores::from_env(env) {
        Ok(stores) => {
            let mut ok = true;
            for db in stores.databases() {
                ok &= db.first::<serde_json::Value>("SELECT 1 AS ok", &[]).await.is_ok();
            }
            ok
        }
        Err(_) => false,
    };
    reply(
        200,
        &HealthResponse {
            status: "ok".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            database,
            embedder: crate::embed::embedder_view(env),
            vector_index: crate::vector::kind_label(env),
        },
    )
}
