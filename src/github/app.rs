//! The GitHub App side: the app's JWT (RS256, signed by WebCrypto with the app's private key) and
//! installation tokens, cached in the isolate until a minute before they expire. Installation
//! tokens fetch the tarballs of the repositories the app is installed on, private ones included,
//! so no personal token is needed.
//!
//! GitHub hands out private keys as PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`); WebCrypto imports PKCS#8
//! only, so [`pkcs8_der`] wraps a PKCS#1 key in the PKCS#8 structure (DER framing, no
//! cryptography). `GITHUB_APP_PRIVATE_KEY` may hold its line breaks as `\n`.
use std::cell::RefCell;
use std::collections::HashMap;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde::Deserialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::Method;

use super::{json, send, GitHubError};
use crate::config::Config;

/// The DER of the PKCS#8 key in `pem` (PKCS#8 as is, PKCS#1 wrapped).
pub fn pkcs8_der(pem: &str) -> Result<Vec<u8>, String> {
    let pem = pem.replace("\\n", "\n");
    let body = |label: &str| -> Option<Vec<u8>> {
        let begin = format!("-----BEGIN {label}-----");
        let end = format!("-----END {label}-----");
        let start = pem.find(&begin)? + begin.len();
        let stop = pem[start..].find(&end)? + start;
        let b64: String = pem[start..stop].chars().filter(|c| !c.is_whitespace()).collect();
        STANDARD.decode(b64).ok()
    };
    if let Some(der) = body("PRIVATE KEY") {
        return Ok(der);
    }
    let pkcs1 = body("RSA PRIVATE KEY").ok_or("GITHUB_APP_PRIVATE_KEY is not a PEM RSA private key")?;
    // PrivateKeyInfo ::= SEQUENCE { version INTEGER 0, algorithm SEQUENCE { rsaEncryption, NULL },
    //                               privateKey OCTET STRING (the PKCS#1 key) }
    const VERSION_AND_ALGORITHM: [u8; 18] = [
        0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05,
        0x00,
    ];
    let mut inner = VERSION_AND_ALGORITHM.to_vec();
    inner.push(0x04);
    inner.extend(der_length(pkcs1.len()));
    inner.extend(pkcs1);
    let mut out = vec![0x30];
    out.extend(der_length(inner.len()));
    out.extend(inner);
    Ok(out)
}

fn der_length(n: usize) -> Vec<u8> {
    if n < 0x80 {
        return vec![n as u8];
    }
    let bytes: Vec<u8> = n.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

/// The JWT's signing input (`header.payload`): issued a minute ago (GitHub's clock may lag),
/// valid nine minutes (GitHub allows ten).
pub fn signing_input(app_id: &str, now_s: i64) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let payload = serde_json::json!({"iat": now_s - 60, "exp": now_s + 540, "iss": app_id});
    format!("{header}.{}", URL_SAFE_NO_PAD.encode(payload.to_string()))
}

fn js_err(context: &str) -> impl Fn(JsValue) -> GitHubError + '_ {
    move |e| GitHubError::Failed(format!("{context}: {e:?}"))
}

/// RSASSA-PKCS1-v1_5 with SHA-256 over `data` (WebCrypto `crypto.subtle`).
async fn sign_rs256(pkcs8: &[u8], data: &[u8]) -> Result<Vec<u8>, GitHubError> {
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into()).map_err(js_err("crypto"))?;
    let subtle = js_sys::Reflect::get(&crypto, &"subtle".into()).map_err(js_err("crypto.subtle"))?;
    let call = |name: &str, args: &js_sys::Array| -> Result<js_sys::Promise, GitHubError> {
        let f: js_sys::Function = js_sys::Reflect::get(&subtle, &name.into())
            .map_err(js_err(name))?
            .dyn_into()
            .map_err(js_err(name))?;
        f.apply(&subtle, args).map_err(js_err(name))?.dyn_into().map_err(js_err(name))
    };
    let algorithm = js_sys::Object::new();
    let set =
        |k: &str, v: &JsValue| js_sys::Reflect::set(&algorithm, &k.into(), v).map_err(js_err("algorithm"));
    set("name", &"RSASSA-PKCS1-v1_5".into())?;
    set("hash", &"SHA-256".into())?;
    let usages = js_sys::Array::of1(&"sign".into());
    let key_data = js_sys::Uint8Array::from(pkcs8);
    let import = call(
        "importKey",
        &js_sys::Array::of5(&"pkcs8".into(), &key_data.buffer(), &algorithm, &JsValue::FALSE, &usages),
    )?;
    let key = JsFuture::from(import).await.map_err(js_err("importing GITHUB_APP_PRIVATE_KEY"))?;
    let signed = call("sign", &js_sys::Array::of3(&algorithm, &key, &js_sys::Uint8Array::from(data)))?;
    let signature = JsFuture::from(signed).await.map_err(js_err("signing the app JWT"))?;
    Ok(js_sys::Uint8Array::new(&signature).to_vec())
}

/// A JWT that authenticates as the app.
pub async fn app_jwt(cfg: &Config) -> Result<String, GitHubError> {
    let Some((app_id, key)) = cfg.github_app() else {
        return Err(GitHubError::Failed("the GitHub App is not configured".into()));
    };
    let der = pkcs8_der(key).map_err(GitHubError::Failed)?;
    let input = signing_input(app_id, now_s());
    let signature = sign_rs256(&der, input.as_bytes()).await?;
    Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

fn now_s() -> i64 {
    (crate::time::now_ms() / 1000.0) as i64
}

thread_local! {
    /// installation id → (token, expiry in epoch seconds), per isolate.
    static TOKENS: RefCell<HashMap<i64, (String, i64)>> = RefCell::new(HashMap::new());
}

#[derive(Deserialize)]
struct TokenAnswer {
    token: String,
    expires_at: String,
}

/// An installation token for `installation`, from the cache while it has more than a minute left.
pub async fn installation_token(cfg: &Config, installation: i64) -> Result<String, GitHubError> {
    let now = now_s();
    let cached = TOKENS
        .with(|t| t.borrow().get(&installation).filter(|(_, exp)| *exp - 60 > now).map(|(t, _)| t.clone()));
    if let Some(token) = cached {
        return Ok(token);
    }
    let jwt = app_jwt(cfg).await?;
    let url = format!("{}/app/installations/{installation}/access_tokens", cfg.github_api_url);
    let answer: TokenAnswer =
        json(send(Method::Post, &url, Some(&jwt), None).await?, "an installation token").await?;
    let expires = crate::time::ms_from_iso(&answer.expires_at).map_or(now + 3000, |ms| (ms / 1000.0) as i64);
    TOKENS.with(|t| t.borrow_mut().insert(installation, (answer.token.clone(), expires)));
    Ok(answer.token)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pkcs1_key_is_wrapped_and_a_pkcs8_key_kept() {
        let pkcs1 = vec![0x30, 0x82, 0x01, 0x00, 7, 7, 7];
        let pem = format!(
            "-----BEGIN RSA PRIVATE KEY-----\\n{}\\n-----END RSA PRIVATE KEY-----\\n",
            STANDARD.encode(&pkcs1)
        );
        let der = pkcs8_der(&pem).unwrap();
        assert_eq!(der[0], 0x30);
        assert_eq!(usize::from(der[1]), der.len() - 2);
        assert!(der.ends_with(&pkcs1));
        assert_eq!(&der[2..5], &[0x02, 0x01, 0x00]);
        let pkcs8 =
            format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----", STANDARD.encode(&der));
        assert_eq!(pkcs8_der(&pkcs8).unwrap(), der);
        assert!(pkcs8_der("not a key").is_err());
        assert_eq!(der_length(300), vec![0x82, 0x01, 0x2c]);
    }

    #[test]
    fn the_jwt_names_the_app_and_lives_under_ten_minutes() {
        let input = signing_input("12345", 1_000_000);
        let (header, payload) = input.split_once('.').unwrap();
        assert_eq!(URL_SAFE_NO_PAD.decode(header).unwrap(), br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert_eq!(claims["iss"], "12345");
        assert!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap() <= 600);
    }
}
