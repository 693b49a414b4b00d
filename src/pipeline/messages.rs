//! Stage messages. Versioned (`v`), tagged by `stage`, a few hundred bytes each: ids and a range of
//! `job_files.seq`, never file contents (a queue message must stay under 128 KB).
use serde::{Deserialize, Serialize};

use crate::bindings;

/// Current message format. A consumer dead-letters versions it does not know.
pub const MESSAGE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "lowercase")]
pub enum StageMessage {
    /// Download the job's GitHub tarball and stage its files.
    Fetch(JobRef),
    /// Chunk the pending files of a range.
    Chunk(SeqRange),
    /// Embed the chunks of the chunked files of a range.
    Embed(SeqRange),
    /// Write the embedded (or deleted) files of a range to D1 and the vector index.
    Index(SeqRange),
    /// Chunk version `version` of an editor-written document, if it is still the latest (sent
    /// delayed, so a burst of edits is chunked once). Travels on the chunk queue.
    Document(DocumentRef),
    /// Page `page` (0-based) of per-node plan run `runId`. Not a job: it names its namespace.
    /// Travels on the embed queue.
    Plan(PlanPage),
    /// The end of a job whose files are all indexed: the code graph's cross-file resolution, its
    /// ranks and the vector snapshot, then the job's completion. A message does what fits its
    /// statement budget and sends the rest on as another. Travels on the index queue.
    Finish(JobEnd),
}

/// What is left of a job's end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobEnd {
    pub v: u32,
    pub job_id: String,
    pub step: EndStep,
    /// The code graph's files up to this path (in path order) are resolved (step `graph`); none
    /// when the resolution starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// The steps of a job's end, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndStep {
    /// The code graph's cross-file resolution and ranks.
    Graph,
    /// The vector index's snapshot of the namespace, for new isolates.
    Vectors,
    /// The job's completion (SUCCEEDED, namespace READY) and what was queued behind it.
    Complete,
}

/// A page of a plan run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanPage {
    pub v: u32,
    pub namespace: String,
    pub run_id: String,
    pub page: i64,
}

/// A document version to chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DocumentRef {
    pub v: u32,
    pub namespace: String,
    pub path: String,
    pub version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobRef {
    pub v: u32,
    pub job_id: String,
}

/// Files `from_seq..=to_seq` of a job (`job_files.seq`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeqRange {
    pub v: u32,
    pub job_id: String,
    pub from_seq: i64,
    pub to_seq: i64,
}

impl StageMessage {
    pub fn fetch(job_id: &str) -> StageMessage {
        StageMessage::Fetch(JobRef { v: MESSAGE_VERSION, job_id: job_id.into() })
    }

    pub fn range(stage: Stage, job_id: &str, from_seq: i64, to_seq: i64) -> StageMessage {
        let r = SeqRange { v: MESSAGE_VERSION, job_id: job_id.into(), from_seq, to_seq };
        match stage {
            Stage::Fetch | Stage::Chunk => StageMessage::Chunk(r),
            Stage::Embed => StageMessage::Embed(r),
            Stage::Index => StageMessage::Index(r),
        }
    }

    pub fn document(namespace: &str, path: &str, version: i64) -> StageMessage {
        StageMessage::Document(DocumentRef {
            v: MESSAGE_VERSION,
            namespace: namespace.into(),
            path: path.into(),
            version,
        })
    }

    pub fn plan(namespace: &str, run_id: &str, page: i64) -> StageMessage {
        StageMessage::Plan(PlanPage {
            v: MESSAGE_VERSION,
            namespace: namespace.into(),
            run_id: run_id.into(),
            page,
        })
    }

    pub fn finish(job_id: &str, step: EndStep, after: Option<String>) -> StageMessage {
        StageMessage::Finish(JobEnd { v: MESSAGE_VERSION, job_id: job_id.into(), step, after })
    }

    /// The queue it travels on.
    pub fn stage(&self) -> Stage {
        match self {
            StageMessage::Fetch(_) => Stage::Fetch,
            StageMessage::Chunk(_) | StageMessage::Document(_) => Stage::Chunk,
            StageMessage::Embed(_) | StageMessage::Plan(_) => Stage::Embed,
            StageMessage::Index(_) | StageMessage::Finish(_) => Stage::Index,
        }
    }

    /// The stage's name in logs and on the job (`finish` for a job's end, else its queue's).
    pub fn name(&self) -> &'static str {
        match self {
            StageMessage::Finish(_) => "finish",
            other => other.stage().as_str(),
        }
    }

    pub fn job_id(&self) -> &str {
        match self {
            StageMessage::Fetch(j) => &j.job_id,
            StageMessage::Chunk(r) | StageMessage::Embed(r) | StageMessage::Index(r) => &r.job_id,
            StageMessage::Finish(e) => &e.job_id,
            // Documents and plan runs are not jobs.
            StageMessage::Document(_) | StageMessage::Plan(_) => "",
        }
    }

    pub fn version(&self) -> u32 {
        match self {
            StageMessage::Fetch(j) => j.v,
            StageMessage::Chunk(r) | StageMessage::Embed(r) | StageMessage::Index(r) => r.v,
            StageMessage::Document(d) => d.v,
            StageMessage::Plan(p) => p.v,
            StageMessage::Finish(e) => e.v,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    Fetch,
    Chunk,
    Embed,
    Index,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Fetch => "fetch",
            Stage::Chunk => "chunk",
            Stage::Embed => "embed",
            Stage::Index => "index",
        }
    }

    /// The producer binding of the stage's queue (see `wrangler.toml`).
    pub fn binding(self) -> &'static str {
        match self {
            Stage::Fetch => bindings::FETCH_QUEUE,
            Stage::Chunk => bindings::CHUNK_QUEUE,
            Stage::Embed => bindings::EMBED_QUEUE,
            Stage::Index => bindings::INDEX_QUEUE,
        }
    }
}

/// What lands in the dead-letter queue when the worker gives up on a message itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetter {
    pub v: u32,
    /// The original message as JSON text (a nested JSON value would travel as a JS `Map`).
    pub message: String,
    pub error: crate::api::JobError,
    pub attempts: u32,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn wire_format_is_stable_and_small() {
        let m = StageMessage::range(Stage::Embed, "job_0123456789abcdef01234567", 12, 40);
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(
            json,
            r#"{"stage":"embed","v":1,"jobId":"job_0123456789abcdef01234567","fromSeq":12,"toSeq":40}"#
        );
        assert_eq!(serde_json::from_str::<StageMessage>(&json).unwrap(), m);
        assert!(json.len() < 200);
        let f = serde_json::to_string(&StageMessage::fetch("job_x")).unwrap();
        assert_eq!(f, r#"{"stage":"fetch","v":1,"jobId":"job_x"}"#);
        assert!(serde_json::from_str::<StageMessage>(r#"{"stage":"embed","v":1,"jobId":"j"}"#).is_err());
        assert!(serde_json::from_str::<StageMessage>(r#"{"stage":"nope","v":1,"jobId":"j"}"#).is_err());
        let d = serde_json::to_string(&StageMessage::document("repo:o/n", "a.md", 3)).unwrap();
        assert_eq!(d, r#"{"stage":"document","v":1,"namespace":"repo:o/n","path":"a.md","version":3}"#);
        assert_eq!(serde_json::from_str::<StageMessage>(&d).unwrap().stage(), Stage::Chunk);
        let p = serde_json::to_string(&StageMessage::plan("repo:o/n", "plan_1", 2)).unwrap();
        assert_eq!(p, r#"{"stage":"plan","v":1,"namespace":"repo:o/n","runId":"plan_1","page":2}"#);
        let back = serde_json::from_str::<StageMessage>(&p).unwrap();
        assert_eq!((back.stage(), back.job_id()), (Stage::Embed, ""));
        let e =
            serde_json::to_string(&StageMessage::finish("job_x", EndStep::Graph, Some("src/a.rs".into())))
                .unwrap();
        assert_eq!(e, r#"{"stage":"finish","v":1,"jobId":"job_x","step":"graph","after":"src/a.rs"}"#);
        let back = serde_json::from_str::<StageMessage>(&e).unwrap();
        assert_eq!((back.stage(), back.name(), back.job_id()), (Stage::Index, "finish", "job_x"));
        let start = StageMessage::finish("job_x", EndStep::Vectors, None);
        assert_eq!(
            serde_json::to_string(&start).unwrap(),
            r#"{"stage":"finish","v":1,"jobId":"job_x","step":"vectors"}"#
        );
        assert!(EndStep::Graph < EndStep::Vectors && EndStep::Vectors < EndStep::Complete);
    }
}
