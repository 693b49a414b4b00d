//! Sealing the GitHub user tokens a grant keeps: AES-256-GCM (RustCrypto's `aes-gcm`) under a
//! key derived from the GitHub client secret (HMAC-SHA256 over a fixed label), a random 96-bit
//! nonce per token, stored as hex `nonce || ciphertext`. Rotating the client secret makes the
//! stored tokens unreadable: those users sign in again.
use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The sealing key for `client_secret`.
pub fn key(client_secret: &str) -> [u8; 32] {
    // HMAC accepts keys of any length.
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(client_secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(b"edgerag: sealed GitHub user tokens, v1");
    mac.finalize().into_bytes().into()
}

/// `plaintext` sealed under `key` with `nonce` (which must never repeat under one key: take it
/// from the CSPRNG). `None` only for inputs over GCM's ~64 GiB limit.
pub fn seal(key: &[u8; 32], nonce: [u8; 12], plaintext: &str) -> Option<String> {
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(key));
    let sealed = cipher.encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes()).ok()?;
    Some(format!("{}{}", hex::encode(nonce), hex::encode(sealed)))
}

/// The plaintext, or `None` when `sealed` was not sealed under `key` (or was altered).
pub fn open(key: &[u8; 32], sealed: &str) -> Option<String> {
    let bytes = hex::decode(sealed).ok()?;
    if bytes.len() < 12 + 16 {
        return None;
    }
    let (nonce, ciphertext) = bytes.split_at(12);
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(key));
    let plain = cipher.decrypt(Nonce::from_slice(nonce), ciphertext).ok()?;
    String::from_utf8(plain).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_token_opens_only_under_its_key_and_unaltered() {
        let k = key("client-secret");
        let sealed = seal(&k, [7; 12], "gho_user_token").unwrap_or_default();
        assert!(!sealed.contains("gho_user_token"));
        assert_eq!(open(&k, &sealed).as_deref(), Some("gho_user_token"));
        assert_eq!(open(&key("rotated"), &sealed), None);
        let mut altered = sealed.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'0' { b'1' } else { b'0' };
        assert_eq!(open(&k, &String::from_utf8(altered).unwrap_or_default()), None);
        assert_eq!(open(&k, "zz"), None);
    }
}
