//! The optional model ports in the worker: a text generator (Workers AI text model or any
//! OpenAI-compatible chat endpoint) for the query transformers / multi-query and the plans'
//! `summarize` stage, and the Workers AI cross-encoder. The mapping lives in `edgerag_search::model_requests` (tested natively); this file only
//! moves bytes. Configuration: `GENERATOR`, `GENERATOR_MODEL`, `GENERATOR_BASE_URL`,
//! `GENERATOR_API_KEY`, `RERANKER`, `RERANKER_MODEL`.
use std::time::Duration;

use edgerag_search::model_requests::{self, GeneratorConfig, RerankerConfig};
use edgerag_search::ports::{GenerateRequest, Generator, Reranker};
use edgerag_search::PortError;
use futures_util::future::{select, Either};
use worker::{Ai, Delay, Env, Fetch, Headers, Method, Request, RequestInit};

use crate::bindings::{self, AI};

const TIMEOUT: Duration = Duration::from_secs(20);

pub struct WorkersAiGenerator {
    ai: Ai,
    model: String,
}

pub struct OpenAiGenerator {
    url: String,
    model: String,
    api_key: Option<String>,
}

pub struct WorkersAiReranker {
    ai: Ai,
    model: String,
}

/// The configured generator; `Err` explains a broken configuration (the search then runs
/// without it and says so).
pub fn generator_from_env(env: &Env) -> Result<Option<Box<dyn Generator>>, String> {
    match GeneratorConfig::from_vars(|n| bindings::var(env, n))? {
        GeneratorConfig::None => Ok(None),
        GeneratorConfig::WorkersAi { model } => {
            let ai = env.ai(AI).map_err(|e| format!("GENERATOR=workers-ai needs the AI binding ({e})"))?;
            Ok(Some(Box::new(WorkersAiGenerator { ai, model })))
        }
        GeneratorConfig::OpenAi { base_url, model, api_key } => {
            Ok(Some(Box::new(OpenAiGenerator { url: model_requests::chat_url(&base_url), model, api_key })))
        }
    }
}

pub fn reranker_from_env(env: &Env) -> Result<Option<Box<dyn Reranker>>, String> {
    match RerankerConfig::from_vars(|n| bindings::var(env, n))? {
        RerankerConfig::None => Ok(None),
        RerankerConfig::WorkersAi { model } => {
            let ai = env.ai(AI).map_err(|e| format!("RERANKER=workers-ai needs the AI binding ({e})"))?;
            Ok(Some(Box::new(WorkersAiReranker { ai, model })))
        }
    }
}

fn failed(backend: &str, e: impl std::fmt::Display) -> PortError {
    PortError::new(backend, e.to_string())
}

#[async_trait::async_trait(?Send)]
impl Generator for WorkersAiGenerator {
    fn name(&self) -> String {
        format!("workers-ai:{}", self.model)
    }

    async fn generate(&self, request: &GenerateRequest) -> Result<String, PortError> {
        crate::ledger::subrequest();
        let out: serde_json::Value = self
            .ai
            .run(&self.model, model_requests::workers_ai_chat_input(request))
            .await
            .map_err(|e| failed("generator", e))?;
        model_requests::parse_workers_ai_text(&out)
    }
}

#[async_trait::async_trait(?Send)]
impl Generator for OpenAiGenerator {
    fn name(&self) -> String {
        format!("openai:{}", self.model)
    }

    async fn generate(&self, request: &GenerateRequest) -> Result<String, PortError> {
        let headers = Headers::new();
        headers.set("content-type", "application/json").map_err(|e| failed("generator", e))?;
        if let Some(key) = &self.api_key {
            headers.set("authorization", &format!("Bearer {key}")).map_err(|e| failed("generator", e))?;
        }
        let body = model_requests::openai_chat_body(&self.model, request).to_string();
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_headers(headers).with_body(Some(body.into()));
        let req = Request::new_with_init(&self.url, &init).map_err(|e| failed("generator", e))?;
        crate::ledger::subrequest();
        let fetch = Fetch::Request(req);
        let send = Box::pin(fetch.send());
        let timeout = Box::pin(Delay::from(TIMEOUT));
        let mut response = match select(send, timeout).await {
            Either::Left((r, _)) => {
                r.map_err(|e| failed("generator", format!("cannot reach {}: {e}", self.url)))?
            }
            Either::Right(_) => return Err(failed("generator", "timed out")),
        };
        let status = response.status_code();
        let text = response.text().await.map_err(|e| failed("generator", e))?;
        model_requests::parse_openai_chat(status, &text)
    }
}

#[async_trait::async_trait(?Send)]
impl Reranker for WorkersAiReranker {
    fn name(&self) -> String {
        format!("workers-ai:{}", self.model)
    }

    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f32>, PortError> {
        crate::ledger::subrequest();
        let out: serde_json::Value = self
            .ai
            .run(&self.model, model_requests::workers_ai_rerank_input(query, documents))
            .await
            .map_err(|e| failed("reranker", e))?;
        model_requests::parse_workers_ai_rerank(&out, documents.len())
    }
}
