//! A small blocking client for the edgerag HTTP API (ureq). Errors keep the server's stable code.
use std::time::Duration;

use serde_json::Value;

#[derive(Debug)]
pub enum ClientError {
    /// The server answered with an error status and (usually) `{error: {code, message}}`.
    Api { status: u16, code: String, message: String },
    /// No answer: connection refused, timeout, bad URL.
    Transport(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Api { status, code, message } => write!(f, "{status} {code}: {message}"),
            ClientError::Transport(m) => write!(f, "{m}"),
        }
    }
}

impl ClientError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            ClientError::Transport(_) => None,
        }
    }
}

pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    pub fn new(server: &str, token: Option<String>) -> Client {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(Duration::from_secs(300))
            .build();
        Client { base: server.trim_end_matches('/').to_string(), token, agent }
    }

    pub fn server(&self) -> &str {
        &self.base
    }

    fn request(&self, method: &str, path: &str) -> ureq::Request {
        let mut req = self.agent.request(method, &format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            req = req.set("authorization", &format!("Bearer {token}"));
        }
        req
    }

    pub fn get(&self, path: &str) -> Result<Value, ClientError> {
        finish(self.request("GET", path).call())
    }

    pub fn send(&self, method: &str, path: &str, body: &Value) -> Result<Value, ClientError> {
        finish(self.request(method, path).send_json(body))
    }
}

fn finish(result: Result<ureq::Response, ureq::Error>) -> Result<Value, ClientError> {
    match result {
        Ok(response) => response
            .into_json::<Value>()
            .map_err(|e| ClientError::Transport(format!("invalid JSON from the server: {e}"))),
        Err(ureq::Error::Status(status, response)) => {
            let body: Value = response.into_json().unwrap_or(Value::Null);
            let code = body["error"]["code"].as_str().unwrap_or("HTTP_ERROR").to_string();
            let message = body["error"]["message"].as_str().unwrap_or("(no message)").to_string();
            Err(ClientError::Api { status, code, message })
        }
        Err(ureq::Error::Transport(t)) => Err(ClientError::Transport(t.to_string())),
    }
}

/// `--server`, else `$EDGERAG_URL` (as `edgerag search`), else `$EDGERAG_SERVER`, else the local
/// dev server.
pub fn default_server() -> String {
    std::env::var("EDGERAG_URL")
        .or_else(|_| std::env::var("EDGERAG_SERVER"))
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "http://127.0.0.1:8787".into())
}

/// `--token`, else `$EDGERAG_TOKEN`.
pub fn default_token() -> Option<String> {
    std::env::var("EDGERAG_TOKEN").ok().filter(|t| !t.is_empty())
}

/// Split `owner/name`.
pub fn parse_repo(value: &str) -> Result<(String, String), String> {
    match value.split_once('/') {
        Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => Ok((o.into(), n.into())),
        _ => Err(format!("--repo must be owner/name, got {value:?}")),
    }
}

/// A one-line progress bar on stderr (`\r`-redrawn).
pub fn progress(label: &str, done: u64, total: u64, extra: &str) {
    use std::io::Write;
    let width = 30usize;
    let filled =
        if total == 0 { width } else { ((done as f64 / total as f64) * width as f64).round() as usize };
    let bar: String = "#".repeat(filled.min(width)) + &"-".repeat(width - filled.min(width));
    let mut err = std::io::stderr();
    let _ = write!(err, "\r{label:<10} [{bar}] {done}/{total} {extra}\x1b[K");
    let _ = err.flush();
}
