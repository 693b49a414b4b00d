//! JSON sizes and batches for the statements that carry rows as JSON arrays (read back in D1 with
//! `json_each`): the worker's store and the wasm memory harness measure and cut them alike.

/// The length of `value`'s JSON, counted as it is written, not kept.
pub fn json_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// `rows` packed into JSON arrays of at most `max_bytes` each, in order (a row larger than
/// `max_bytes` goes alone).
pub fn json_batches<T: serde::Serialize>(rows: impl IntoIterator<Item = T>, max_bytes: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::from("[");
    for row in rows {
        // Rows are values and tuples of strings and numbers: serializing them cannot fail.
        let row = serde_json::to_string(&row).unwrap_or_else(|_| "null".into());
        if current.len() > 1 && current.len() + row.len() + 2 > max_bytes {
            current.push(']');
            out.push(std::mem::replace(&mut current, String::from("[")));
        }
        if current.len() > 1 {
            current.push(',');
        }
        current.push_str(&row);
    }
    if current.len() > 1 {
        current.push(']');
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_is_the_length_of_the_json() {
        let value = serde_json::json!({"a": [1, 2, "x\"y"], "b": null});
        assert_eq!(json_len(&value), serde_json::to_string(&value).expect("a value serializes").len());
    }

    #[test]
    fn batches_hold_every_row_in_order_within_the_size() {
        let rows: Vec<(u32, String)> = (0..100).map(|i| (i, "x".repeat(i as usize % 7))).collect();
        let batches = json_batches(&rows, 64);
        assert!(batches.len() > 1);
        let mut back: Vec<(u32, String)> = Vec::new();
        for b in &batches {
            assert!(b.len() <= 64, "{b}");
            back.extend(serde_json::from_str::<Vec<(u32, String)>>(b).expect("a batch is a JSON array"));
        }
        assert_eq!(back, rows);
        assert_eq!(json_batches(["a".repeat(100)], 10).len(), 1, "a row over the size goes alone");
        assert!(json_batches(Vec::<u32>::new(), 10).is_empty());
    }
}
