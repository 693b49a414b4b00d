//! Deterministic identities. Every id is BLAKE3, hex-encoded, so the same input gives the same id
//! on native, worker and browser builds.

/// `id` of a chunk: BLAKE3 over content, path, start line and end line (64 hex chars — exactly the
/// Vectorize id limit of 64 bytes). Fields are length-prefixed so no two inputs can collide by
/// shifting bytes between fields.
pub fn chunk_id(content: &str, path: &str, start_line: u32, end_line: u32) -> String {
    let mut h = blake3::Hasher::new();
    h.update(&(content.len() as u64).to_le_bytes());
    h.update(content.as_bytes());
    h.update(&(path.len() as u64).to_le_bytes());
    h.update(path.as_bytes());
    h.update(&start_line.to_le_bytes());
    h.update(&end_line.to_le_bytes());
    h.finalize().to_hex().to_string()
}

/// `id` of the `repeat`-th chunk of a file (0-based) with the same content on the same lines as an
/// earlier one: a long line cut into identical pieces (minified or generated files) would
/// otherwise give two chunks one id, and the second would overwrite the first wherever ids are
/// keys (D1 rows, vectors). `repeat` 0 is [`chunk_id`], so every other id is unchanged.
pub fn repeated_chunk_id(content: &str, path: &str, start_line: u32, end_line: u32, repeat: u32) -> String {
    if repeat == 0 {
        return chunk_id(content, path, start_line, end_line);
    }
    let mut h = blake3::Hasher::new();
    h.update(chunk_id(content, path, start_line, end_line).as_bytes());
    h.update(b"repeat");
    h.update(&repeat.to_le_bytes());
    h.finalize().to_hex().to_string()
}

/// `text_hash` of a chunk: BLAKE3 of the content only (change detection, embedding cache key).
pub fn text_hash(content: &str) -> String {
    blake3::hash(content.as_bytes()).to_hex().to_string()
}

/// `span_hash`: a short (16 hex chars) stable handle for a location (path + line span), used to
/// tag neighbours (`neighborOfSpanHash`) independently of the content.
pub fn span_hash(path: &str, start_line: u32, end_line: u32) -> String {
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(&start_line.to_le_bytes());
    h.update(&end_line.to_le_bytes());
    h.finalize().to_hex()[..16].to_string()
}

/// Hash of a whole file's bytes (incremental re-indexing skips files whose hash is unchanged).
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_field_separated() {
        assert_eq!(chunk_id("a", "b", 1, 2), chunk_id("a", "b", 1, 2));
        assert_ne!(chunk_id("ab", "", 1, 2), chunk_id("a", "b", 1, 2));
        assert_ne!(chunk_id("a", "b", 1, 2), chunk_id("a", "b", 1, 3));
        assert_eq!(chunk_id("a", "b", 1, 2).len(), 64);
        assert_eq!(repeated_chunk_id("a", "b", 1, 2, 0), chunk_id("a", "b", 1, 2));
        assert_ne!(repeated_chunk_id("a", "b", 1, 2, 1), chunk_id("a", "b", 1, 2));
        assert_ne!(repeated_chunk_id("a", "b", 1, 2, 1), repeated_chunk_id("a", "b", 1, 2, 2));
        assert_eq!(repeated_chunk_id("a", "b", 1, 2, 1).len(), 64);
        assert_eq!(span_hash("p", 1, 2).len(), 16);
        // BLAKE3 of the empty string is a published constant.
        assert_eq!(text_hash(""), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
    }
}
