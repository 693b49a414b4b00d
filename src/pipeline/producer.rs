//! Sending stage messages: ranges of staged files grouped into messages, messages grouped into
//! `sendBatch` calls (≤ 100 messages each).
use worker::Env;

use super::messages::{Stage, StageMessage};
use crate::store::staging::StagedRef;

/// Largest total file size one chunk/embed/index message covers (bounds a stage's memory).
pub const MAX_BYTES_PER_MESSAGE: i64 = 2 * 1024 * 1024;

/// Split staged rows (any order) into `(from_seq, to_seq)` ranges of at most `max_files` rows and
/// about `max_bytes` bytes. Ranges may include seqs of other requests; stages only act on rows in
/// the status they consume, so that is harmless.
pub fn ranges(refs: &[StagedRef], max_files: usize, max_bytes: i64) -> Vec<(i64, i64)> {
    let mut seqs: Vec<(i64, i64)> = refs.iter().map(|r| (r.seq, r.size.max(0))).collect();
    seqs.sort_unstable();
    seqs.dedup_by_key(|(seq, _)| *seq);
    let mut out = Vec::new();
    let mut current: Option<(i64, i64, usize, i64)> = None; // from, to, files, bytes
    for (seq, size) in seqs {
        current = match current {
            Some((from, to, files, bytes))
                if files < max_files && (bytes + size <= max_bytes || files == 0) =>
            {
                let _ = to;
                Some((from, seq, files + 1, bytes + size))
            }
            Some((from, to, _, _)) => {
                out.push((from, to));
                Some((seq, seq, 1, size))
            }
            None => Some((seq, seq, 1, size)),
        };
    }
    if let Some((from, to, _, _)) = current {
        out.push((from, to));
    }
    out
}

/// Messages for staged rows, by the stage each row waits for: `pending` → chunk, `chunked` →
/// embed, `embedded` (e.g. deletions) → index; `done` rows need nothing.
pub fn messages_for(job_id: &str, refs: &[StagedRef], max_files: usize) -> Vec<StageMessage> {
    let with =
        |status: &str| -> Vec<StagedRef> { refs.iter().filter(|r| r.status == status).cloned().collect() };
    let (pending, chunked, embedded) = (with("pending"), with("chunked"), with("embedded"));
    let mut out = Vec::new();
    for (from, to) in ranges(&pending, max_files, MAX_BYTES_PER_MESSAGE) {
        out.push(StageMessage::range(Stage::Chunk, job_id, from, to));
    }
    for (from, to) in ranges(&chunked, max_files, MAX_BYTES_PER_MESSAGE) {
        out.push(StageMessage::range(Stage::Embed, job_id, from, to));
    }
    // Deletions carry no content: many per message.
    for (from, to) in ranges(&embedded, max_files * 4, i64::MAX) {
        out.push(StageMessage::range(Stage::Index, job_id, from, to));
    }
    out
}

/// Send messages to their stages' queues. With `DELIVER_TWICE` every message is sent twice (fault
/// injection: the pipeline must not care).
pub async fn send(env: &Env, messages: &[StageMessage], deliver_twice: bool) -> worker::Result<()> {
    for stage in [Stage::Fetch, Stage::Chunk, Stage::Embed, Stage::Index] {
        let mut batch: Vec<&StageMessage> = messages.iter().filter(|m| m.stage() == stage).collect();
        if batch.is_empty() {
            continue;
        }
        if deliver_twice {
            batch = batch.iter().flat_map(|m| [*m, *m]).collect();
        }
        let queue = env.queue(stage.binding())?;
        for group in batch.chunks(100) {
            let owned: Vec<StageMessage> = group.iter().map(|m| (*m).clone()).collect();
            let sizes: Vec<usize> =
                owned.iter().map(|m| serde_json::to_string(m).map_or(0, |j| j.len())).collect();
            crate::ledger::queue_send(&sizes);
            queue.send_batch(owned).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(seq: i64, status: &str, size: i64) -> StagedRef {
        StagedRef { seq, status: status.into(), size }
    }

    #[test]
    fn groups_by_count_and_bytes() {
        let refs: Vec<StagedRef> = (1..=7).map(|s| r(s, "pending", 10)).collect();
        assert_eq!(ranges(&refs, 3, 1000), [(1, 3), (4, 6), (7, 7)]);
        assert_eq!(ranges(&refs, 10, 25), [(1, 2), (3, 4), (5, 6), (7, 7)]);
        // A file over the byte budget still gets a message of its own.
        assert_eq!(ranges(&[r(4, "pending", 5000), r(2, "pending", 1)], 10, 100), [(2, 2), (4, 4)]);
        assert!(ranges(&[], 3, 10).is_empty());
    }

    #[test]
    fn routes_by_status() {
        let refs = [
            r(1, "pending", 1),
            r(2, "done", 1),
            r(3, "embedded", 0),
            r(4, "pending", 1),
            r(5, "chunked", 9),
        ];
        let msgs = messages_for("j", &refs, 25);
        assert_eq!(
            msgs,
            [
                StageMessage::range(Stage::Chunk, "j", 1, 4),
                StageMessage::range(Stage::Embed, "j", 5, 5),
                StageMessage::range(Stage::Index, "j", 3, 3)
            ]
        );
    }
}
