//! Secrets from the runtime's CSPRNG (`crypto.getRandomValues`): key secrets, sign-in codes and
//! tokens, nonces.
use wasm_bindgen::{JsCast, JsValue};

use crate::error::ApiError;

/// `n` random bytes.
pub fn bytes(n: u32) -> Result<Vec<u8>, ApiError> {
    let fail = |e: JsValue| ApiError::internal("random bytes", format!("{e:?}"));
    let buf = js_sys::Uint8Array::new_with_length(n);
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into()).map_err(fail)?;
    let fill: js_sys::Function =
        js_sys::Reflect::get(&crypto, &"getRandomValues".into()).map_err(fail)?.dyn_into().map_err(fail)?;
    fill.call1(&crypto, &buf).map_err(fail)?;
    Ok(buf.to_vec())
}

/// `n` random bytes as hex.
pub fn hex(n: u32) -> Result<String, ApiError> {
    Ok(::hex::encode(bytes(n)?))
}
