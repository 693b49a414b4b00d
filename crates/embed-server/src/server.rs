//! A small HTTP/1.1 server on `tiny_http`: a few handler threads share one model behind a mutex
//! (inference already uses every core), so `/health` answers while a batch is being embedded.
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};
use tiny_http::{Header, Method, Request, Response, Server};

use crate::api::{self, ApiError};
use crate::{MiniLm, MODEL_ALIASES, MODEL_NAME};

/// Handler threads.
const THREADS: usize = 4;

pub struct Served {
    model: Mutex<MiniLm>,
    dims: usize,
    max_seq_length: usize,
}

impl Served {
    pub fn new(model: MiniLm) -> Self {
        let dims = model.dims();
        let max_seq_length = model.max_seq_length();
        Served { model: Mutex::new(model), dims, max_seq_length }
    }
}

/// Serves until the process is stopped.
pub fn serve(addr: &str, model: MiniLm) -> std::io::Result<()> {
    let server = Server::http(addr).map_err(std::io::Error::other)?;
    log(json!({"event": "listening", "addr": addr, "model": MODEL_NAME}));
    let server = Arc::new(server);
    let served = Arc::new(Served::new(model));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let server = Arc::clone(&server);
            let served = Arc::clone(&served);
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    handle(&served, request);
                }
            })
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    Ok(())
}

fn log(mut line: Value) {
    line["service"] = json!("edgerag-embed-server");
    eprintln!("{line}");
}

fn json_response(status: u16, body: &Value) -> Response<std::io::Cursor<Vec<u8>>> {
    let mut response = Response::from_data(body.to_string().into_bytes()).with_status_code(status);
    if let Ok(h) = Header::from_bytes("content-type", "application/json") {
        response.add_header(h);
    }
    response
}

fn handle(served: &Served, mut request: Request) {
    let started = Instant::now();
    let method = request.method().clone();
    let url = request.url().split('?').next().unwrap_or("").to_string();
    let (status, body, count) = match (&method, url.as_str()) {
        (Method::Get, "/health") | (Method::Get, "/v1/health") => (
            200,
            json!({"status": "ok", "model": MODEL_NAME, "dims": served.dims, "maxSeqLength": served.max_seq_length}),
            0,
        ),
        (Method::Get, "/v1/models") => (
            200,
            json!({"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "owned_by": "edgerag"}]}),
            0,
        ),
        (Method::Post, "/v1/embeddings") | (Method::Post, "/embeddings") => {
            match embeddings(served, &mut request) {
                Ok((body, n)) => (200, body, n),
                Err(e) => (e.status, e.body(), 0),
            }
        }
        (_, "/health" | "/v1/health" | "/v1/models" | "/v1/embeddings" | "/embeddings") => {
            let e = ApiError::new(405, "method_not_allowed", format!("{method} is not allowed on {url}"));
            (e.status, e.body(), 0)
        }
        _ => {
            let e = ApiError::new(404, "not_found", format!("no route {url}"));
            (e.status, e.body(), 0)
        }
    };
    if url != "/health" {
        log(json!({
            "event": "request", "method": method.to_string(), "path": url, "status": status,
            "inputs": count, "ms": started.elapsed().as_secs_f64() * 1000.0,
        }));
    }
    let _ = request.respond(json_response(status, &body));
}

fn embeddings(served: &Served, request: &mut Request) -> Result<(Value, usize), ApiError> {
    if request.body_length().is_some_and(|n| n > api::MAX_BODY_BYTES) {
        return Err(ApiError::new(413, "body_too_large", format!("body over {} bytes", api::MAX_BODY_BYTES)));
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(api::MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| ApiError::new(400, "unreadable_body", e.to_string()))?;
    if body.len() > api::MAX_BODY_BYTES {
        return Err(ApiError::new(413, "body_too_large", format!("body over {} bytes", api::MAX_BODY_BYTES)));
    }
    let parsed = api::parse_request(&body, MODEL_NAME, MODEL_ALIASES, served.dims)?;
    let model =
        served.model.lock().map_err(|_| ApiError::new(500, "model_poisoned", "model lock poisoned"))?;
    let out =
        model.embed(&parsed.texts).map_err(|e| ApiError::new(500, "inference_failed", e.to_string()))?;
    drop(model);
    if out.truncated > 0 {
        log(
            json!({"event": "inputs_truncated", "count": out.truncated, "maxSeqLength": served.max_seq_length}),
        );
    }
    Ok((api::response_body(MODEL_NAME, &out.vectors, out.tokens), parsed.texts.len()))
}
