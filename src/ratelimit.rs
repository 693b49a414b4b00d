//! Per-key rate limits. In production the Workers Rate Limiting binding `RATE_LIMITER`
//! (`[[unsafe.bindings]] type = "ratelimit"` in `wrangler.toml`; its limit and period are
//! configured there) decides; without it a fixed window counted in the catalog database
//! (`RATE_LIMIT_PER_MINUTE`) does, so a local or single-region deployment is limited too.
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::Env;

use crate::store::{keys, Stores};

/// The binding's name.
pub const RATE_LIMITER: &str = "RATE_LIMITER";
/// The local window.
const WINDOW_SECONDS: u64 = 60;

/// `Ok(None)` when the request may go on, `Ok(Some(seconds))` to answer 429 with that
/// `Retry-After`.
pub async fn check(env: &Env, key_id: &str, per_minute: u64) -> Result<Option<u64>, String> {
    if let Some(binding) = crate::bindings::object(env, RATE_LIMITER) {
        return binding_limit(&binding, key_id).await;
    }
    if per_minute == 0 {
        return Ok(None);
    }
    let now_s = (crate::time::now_ms() / 1000.0) as u64;
    let window_start = now_s - now_s % WINDOW_SECONDS;
    let stores = Stores::from_env(env).map_err(|e| e.to_string())?;
    let count = keys::count_request(stores.catalog(), key_id, window_start as i64)
        .await
        .map_err(|e| e.to_string())?;
    Ok(crate::auth::over_limit(count, per_minute, now_s, WINDOW_SECONDS))
}

/// `await RATE_LIMITER.limit({ key })` → `{ success }`. The binding does not say when its
/// period ends; its periods are 10 or 60 seconds, so 60 is a safe `Retry-After`.
async fn binding_limit(binding: &JsValue, key_id: &str) -> Result<Option<u64>, String> {
    let err = |e: JsValue| format!("rate limiter: {e:?}");
    let limit: js_sys::Function =
        js_sys::Reflect::get(binding, &"limit".into()).map_err(err)?.dyn_into().map_err(err)?;
    let arg = js_sys::Object::new();
    js_sys::Reflect::set(&arg, &"key".into(), &JsValue::from_str(key_id)).map_err(err)?;
    let promise: js_sys::Promise = limit.call1(binding, &arg).map_err(err)?.dyn_into().map_err(err)?;
    let outcome = JsFuture::from(promise).await.map_err(err)?;
    let success = js_sys::Reflect::get(&outcome, &"success".into()).map_err(err)?.as_bool().unwrap_or(true);
    Ok((!success).then_some(WINDOW_SECONDS))
}
