//! Vectors as little-endian f32 bytes (the D1 `local_vectors.vector` and `embedding_cache.vector`
//! blobs) and as hex (how the local index reads blobs back cheaply: `SELECT hex(vector)` crosses
//! the JS boundary as one string instead of an array of numbers).
use super::VectorError;

pub fn encode_f32_le(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

pub fn decode_f32_le(bytes: &[u8]) -> Result<Vec<f32>, VectorError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(VectorError::Backend(format!("vector blob of {} bytes is not f32s", bytes.len())));
    }
    Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Upper-case hex of the little-endian bytes (what SQLite's `hex()` gives for the blob).
pub fn encode_f32_hex(values: &[f32]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(values.len() * 8);
    for b in encode_f32_le(values) {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    out
}

/// Decodes SQLite `hex(blob)` output into `out` (cleared first), reusing its allocation.
pub fn decode_f32_hex_into(hex: &str, out: &mut Vec<f32>) -> Result<(), VectorError> {
    let h = hex.as_bytes();
    if !h.len().is_multiple_of(8) {
        return Err(VectorError::Backend(format!("hex vector of {} chars is not f32s", h.len())));
    }
    out.clear();
    out.reserve(h.len() / 8);
    for c in h.chunks_exact(8) {
        let mut b = [0u8; 4];
        for (i, pair) in c.chunks_exact(2).enumerate() {
            b[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        out.push(f32::from_le_bytes(b));
    }
    Ok(())
}

pub fn decode_f32_hex(hex: &str) -> Result<Vec<f32>, VectorError> {
    let mut out = Vec::new();
    decode_f32_hex_into(hex, &mut out)?;
    Ok(out)
}

fn nibble(c: u8) -> Result<u8, VectorError> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err(VectorError::Backend(format!("bad hex digit {:?} in vector", c as char))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_exactly() {
        let v = vec![0.0, -1.5, f32::MIN_POSITIVE, 3.25e-7, f32::MAX];
        assert_eq!(decode_f32_le(&encode_f32_le(&v)).unwrap(), v);
        assert_eq!(decode_f32_hex(&encode_f32_hex(&v)).unwrap(), v);
        assert_eq!(decode_f32_hex(&encode_f32_hex(&v).to_lowercase()).unwrap(), v);
        assert_eq!(encode_f32_le(&[1.0]), [0, 0, 0x80, 0x3f]);
        assert_eq!(encode_f32_hex(&[1.0]), "0000803F");
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode_f32_le(&[1, 2, 3]).is_err());
        assert!(decode_f32_hex("0000803").is_err());
        assert!(decode_f32_hex("0000803G").is_err());
    }
}
