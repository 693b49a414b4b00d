//! Request / response mapping for the optional model ports (the worker only moves the bytes):
//! chat completions (OpenAI-compatible `POST /chat/completions`, Workers AI text models) for the
//! [`crate::ports::Generator`], and Workers AI's `@cf/baai/bge-reranker-base` for the
//! [`crate::ports::Reranker`]. Configuration comes from worker vars:
//!
//! | var | values | default |
//! | --- | --- | --- |
//! | `GENERATOR` | `workers-ai`, `openai`, `none` | `none` (LLM transformers skipped) |
//! | `GENERATOR_MODEL` | model id | `@cf/meta/llama-3.1-8b-instruct` / `gpt-4o-mini` |
//! | `GENERATOR_BASE_URL` | OpenAI-compatible base URL | `OPENAI_BASE_URL` |
//! | `GENERATOR_API_KEY` (secret) | bearer key | `OPENAI_API_KEY` |
//! | `RERANKER` | `workers-ai`, `none` | `none` |
//! | `RERANKER_MODEL` | model id | `@cf/baai/bge-reranker-base` |
use serde_json::{json, Value};

use crate::error::PortError;
use crate::ports::GenerateRequest;

pub const DEFAULT_WORKERS_AI_TEXT_MODEL: &str = "@cf/meta/llama-3.1-8b-instruct";
pub const DEFAULT_OPENAI_CHAT_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_RERANKER_MODEL: &str = "@cf/baai/bge-reranker-base";

/// Which generator a deployment uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeneratorConfig {
    None,
    WorkersAi { model: String },
    OpenAi { base_url: String, model: String, api_key: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RerankerConfig {
    None,
    WorkersAi { model: String },
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl GeneratorConfig {
    /// Read from vars; an unusable configuration is an error message (logged, generator off).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<GeneratorConfig, String> {
        let kind = non_empty(get("GENERATOR")).map(|k| k.to_ascii_lowercase());
        let model = non_empty(get("GENERATOR_MODEL"));
        match kind.as_deref() {
            None | Some("none") | Some("off") => Ok(GeneratorConfig::None),
            Some("workers-ai") => Ok(GeneratorConfig::WorkersAi {
                model: model.unwrap_or_else(|| DEFAULT_WORKERS_AI_TEXT_MODEL.into()),
            }),
            Some("openai") => {
                let base_url = non_empty(get("GENERATOR_BASE_URL"))
                    .or_else(|| non_empty(get("OPENAI_BASE_URL")))
                    .ok_or("GENERATOR=openai needs GENERATOR_BASE_URL (or OPENAI_BASE_URL)")?;
                Ok(GeneratorConfig::OpenAi {
                    base_url: base_url.trim_end_matches('/').to_string(),
                    model: model.unwrap_or_else(|| DEFAULT_OPENAI_CHAT_MODEL.into()),
                    api_key: non_empty(get("GENERATOR_API_KEY")).or_else(|| non_empty(get("OPENAI_API_KEY"))),
                })
            }
            Some(other) => Err(format!("GENERATOR must be workers-ai, openai or none, not {other:?}")),
        }
    }
}

impl RerankerConfig {
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<RerankerConfig, String> {
        match non_empty(get("RERANKER")).map(|k| k.to_ascii_lowercase()).as_deref() {
            None | Some("none") | Some("off") => Ok(RerankerConfig::None),
            Some("workers-ai") => Ok(RerankerConfig::WorkersAi {
                model: non_empty(get("RERANKER_MODEL")).unwrap_or_else(|| DEFAULT_RERANKER_MODEL.into()),
            }),
            Some(other) => Err(format!("RERANKER must be workers-ai or none, not {other:?}")),
        }
    }
}

fn messages(req: &GenerateRequest) -> Value {
    json!([{ "role": "system", "content": req.system }, { "role": "user", "content": req.prompt }])
}

/// `{base}/chat/completions`.
pub fn chat_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

pub fn openai_chat_body(model: &str, req: &GenerateRequest) -> Value {
    json!({ "model": model, "messages": messages(req), "max_tokens": req.max_tokens, "temperature": req.temperature })
}

/// The first choice's text, or an error naming the status / shape problem.
pub fn parse_openai_chat(status: u16, body: &str) -> Result<String, PortError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| PortError::new("generator", format!("status {status}, body is not JSON: {e}")))?;
    if !(200..300).contains(&status) {
        let msg = v["error"]["message"].as_str().unwrap_or("no message");
        return Err(PortError::new("generator", format!("status {status}: {msg}")));
    }
    v["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| PortError::new("generator", "response has no choices[0].message.content"))
}

/// A chat message. Workers AI inputs are typed structs, not `serde_json::Value`: the binding
/// needs plain JS objects, and `serde_wasm_bindgen` turns `Value` maps into JS `Map`s.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChatInput {
    pub messages: Vec<ChatMessage>,
    pub max_tokens: u32,
    pub temperature: f32,
}

pub fn workers_ai_chat_input(req: &GenerateRequest) -> ChatInput {
    ChatInput {
        messages: vec![
            ChatMessage { role: "system".into(), content: req.system.clone() },
            ChatMessage { role: "user".into(), content: req.prompt.clone() },
        ],
        max_tokens: req.max_tokens,
        temperature: req.temperature,
    }
}

/// Workers AI text models answer `{ "response": "..." }`.
pub fn parse_workers_ai_text(v: &Value) -> Result<String, PortError> {
    v["response"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| PortError::new("generator", "Workers AI response has no `response` text"))
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RerankContext {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RerankInput {
    pub query: String,
    pub contexts: Vec<RerankContext>,
    pub top_k: usize,
}

pub fn workers_ai_rerank_input(query: &str, documents: &[String]) -> RerankInput {
    RerankInput {
        query: query.to_string(),
        contexts: documents.iter().map(|d| RerankContext { text: d.clone() }).collect(),
        top_k: documents.len(),
    }
}

/// `{ "response": [{ "id": index, "score": s }, ...] }` → one score per document, in order.
pub fn parse_workers_ai_rerank(v: &Value, n: usize) -> Result<Vec<f32>, PortError> {
    let items = v["response"]
        .as_array()
        .ok_or_else(|| PortError::new("reranker", "Workers AI response has no `response` list"))?;
    let mut scores = vec![f32::NAN; n];
    for item in items {
        let (Some(id), Some(score)) = (item["id"].as_u64(), item["score"].as_f64()) else {
            return Err(PortError::new("reranker", "a rerank item lacks id / score"));
        };
        if let Some(slot) = scores.get_mut(id as usize) {
            *slot = score as f32;
        }
    }
    if scores.iter().any(|s| s.is_nan()) {
        return Err(PortError::new("reranker", format!("{} scores for {n} documents", items.len())));
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn generator_config() {
        assert_eq!(GeneratorConfig::from_vars(vars(&[])), Ok(GeneratorConfig::None));
        assert_eq!(
            GeneratorConfig::from_vars(vars(&[("GENERATOR", "workers-ai")])),
            Ok(GeneratorConfig::WorkersAi { model: DEFAULT_WORKERS_AI_TEXT_MODEL.into() })
        );
        assert_eq!(
            GeneratorConfig::from_vars(vars(&[
                ("GENERATOR", "openai"),
                ("OPENAI_BASE_URL", "http://x/v1/"),
                ("OPENAI_API_KEY", "k")
            ])),
            Ok(GeneratorConfig::OpenAi {
                base_url: "http://x/v1".into(),
                model: "gpt-4o-mini".into(),
                api_key: Some("k".into())
            })
        );
        assert!(GeneratorConfig::from_vars(vars(&[("GENERATOR", "openai")])).is_err());
        assert!(GeneratorConfig::from_vars(vars(&[("GENERATOR", "skynet")])).is_err());
        assert_eq!(
            RerankerConfig::from_vars(vars(&[("RERANKER", "workers-ai")])),
            Ok(RerankerConfig::WorkersAi { model: DEFAULT_RERANKER_MODEL.into() })
        );
    }

    #[test]
    fn chat_mapping() {
        let req =
            GenerateRequest { system: "s".into(), prompt: "p".into(), max_tokens: 10, temperature: 0.0 };
        let body = openai_chat_body("m", &req);
        assert_eq!(body["messages"][1]["content"], "p");
        assert_eq!(chat_url("http://h/v1/"), "http://h/v1/chat/completions");
        assert_eq!(parse_openai_chat(200, r#"{"choices":[{"message":{"content":"hi"}}]}"#), Ok("hi".into()));
        assert!(parse_openai_chat(429, r#"{"error":{"message":"slow down"}}"#)
            .unwrap_err()
            .message
            .contains("slow down"));
        assert!(parse_openai_chat(200, "nope").is_err());
        assert_eq!(parse_workers_ai_text(&json!({"response": "ok"})), Ok("ok".into()));
        assert_eq!(serde_json::to_value(workers_ai_chat_input(&req)).unwrap()["max_tokens"], 10);
    }

    #[test]
    fn rerank_mapping() {
        let input = workers_ai_rerank_input("q", &["a".into(), "b".into()]);
        assert_eq!(input.contexts[1].text, "b");
        let scores = parse_workers_ai_rerank(
            &json!({"response": [{"id": 1, "score": 0.9}, {"id": 0, "score": 0.1}]}),
            2,
        );
        assert_eq!(scores, Ok(vec![0.1, 0.9]));
        assert!(parse_workers_ai_rerank(&json!({"response": [{"id": 0, "score": 0.1}]}), 2).is_err());
    }
}
