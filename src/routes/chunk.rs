//! `POST /v1/chunk`: stateless chunking with the core (the same options and output as the CLI).
use worker::{Request, Response};

use crate::api::{ChunkRequest, ChunkResponse, ChunkedFile, ErrorDetail, FileInput};
use crate::config::Config;
use crate::error::ApiError;
use crate::http::{parse_json, read_body, reply, ApiResult};

/// Most files in one request.
pub const MAX_FILES: usize = 1000;

pub async fn post(req: &mut Request, cfg: &Config) -> ApiResult<Response> {
    let body = read_body(req, cfg.max_upload_bytes).await?;
    let request: ChunkRequest = parse_json(req, &body, false)?;
    reply(200, &chunk(request)?)
}

pub fn chunk(request: ChunkRequest) -> ApiResult<ChunkResponse> {
    let config =
        edgerag_core::options::options_from_value(request.options.unwrap_or(serde_json::Value::Null))
            .map_err(|e| ApiError::bad_request(e.code(), e.to_string()))?;
    let files = match (request.content, request.files) {
        (Some(content), None) => {
            vec![FileInput { path: request.path.unwrap_or_else(|| "input.txt".into()), content }]
        }
        (None, Some(files)) if request.path.is_none() => files,
        _ => {
            return Err(ApiError::bad_request(
                "INVALID_REQUEST",
                "give either `content` (with an optional `path`) or `files`",
            ))
        }
    };
    if files.len() > MAX_FILES {
        return Err(ApiError::bad_request(
            "TOO_MANY_FILES",
            format!("at most {MAX_FILES} files per request"),
        ));
    }
    let mut out = Vec::with_capacity(files.len());
    let mut total = 0;
    for file in files {
        let language = config.language.unwrap_or_else(|| edgerag_core::Language::detect(&file.path));
        let (chunks, error) = match edgerag_core::chunk_bytes(&file.path, file.content.as_bytes(), &config) {
            Ok(chunks) => (chunks, None),
            Err(e) => (Vec::new(), Some(ErrorDetail { code: e.code().into(), message: e.to_string() })),
        };
        total += chunks.len();
        out.push(ChunkedFile { path: file.path, language: language.as_str().into(), chunks, error });
    }
    Ok(ChunkResponse { files: out, chunk_count: total })
}
