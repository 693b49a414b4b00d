//! The committed JSON Schemas in `schemas/` are generated from the API types. The test below
//! fails when a committed schema is stale; regenerate with
//! `UPDATE_SCHEMAS=1 cargo test -p edgerag-worker --no-default-features --lib schemas`.
use schemars::{schema_for, Schema};

use super::*;

/// `(file stem, schema)` for every request and response of the worker's API.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        ("error", schema_for!(ErrorBody)),
        ("health-response", schema_for!(HealthResponse)),
        ("chunk-request", schema_for!(ChunkRequest)),
        ("chunk-response", schema_for!(ChunkResponse)),
        ("index-request", schema_for!(IndexRequest)),
        ("upload-request", schema_for!(UploadRequest)),
        ("delete-files-request", schema_for!(DeleteFilesRequest)),
        ("job-accepted", schema_for!(JobAccepted)),
        ("job", schema_for!(JobView)),
        ("repos-response", schema_for!(ReposResponse)),
        ("repo-status", schema_for!(RepoStatusResponse)),
        ("files-response", schema_for!(FilesResponse)),
        ("delete-repo-response", schema_for!(DeleteRepoResponse)),
    ]
}

/// The exact bytes written to `schemas/<stem>.schema.json`.
pub fn render(schema: &Schema) -> String {
    let mut out = serde_json::to_string_pretty(schema).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn schemas_are_fresh() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
        let mut stale = Vec::new();
        for (stem, schema) in all() {
            let path = dir.join(format!("{stem}.schema.json"));
            let want = render(&schema);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &want).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "stale or missing JSON Schemas {stale:?}: run \
             `UPDATE_SCHEMAS=1 cargo test -p edgerag-worker --no-default-features --lib schemas`"
        );
    }

    #[test]
    fn requests_reject_unknown_fields() {
        for (stem, schema) in all() {
            if stem.ends_with("-request") {
                assert_eq!(schema.get("additionalProperties"), Some(&serde_json::json!(false)), "{stem}");
            }
        }
    }
}
