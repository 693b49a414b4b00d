//! OpenAI-compatible embeddings over `fetch` (OpenAI, text-embeddings-inference, the local
//! `edgerag-embed-server`). The mapping is [`edgerag_core::embed::openai`], tested natively; this
//! file only moves bytes and enforces the timeout.
use std::time::Duration;

use edgerag_core::embed::openai::{self, OpenAiConfig};
use edgerag_core::embed::{truncate_chars, EmbedError, Embedder, EmbedderInfo};
use futures_util::future::{select, Either};
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    url: String,
}

impl OpenAiEmbedder {
    pub fn new(config: OpenAiConfig) -> Self {
        let url = openai::embeddings_url(&config.base_url);
        OpenAiEmbedder { config, url }
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let headers = Headers::new();
        for (name, value) in openai::request_headers(&self.config) {
            headers.set(name, &value).map_err(|e| EmbedError::Config(format!("header {name}: {e}")))?;
        }
        let body = openai::request_body(&self.config, texts).to_string();
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_headers(headers).with_body(Some(body.into()));
        let request = Request::new_with_init(&self.url, &init)
            .map_err(|e| EmbedError::Config(format!("bad OPENAI_BASE_URL {}: {e}", self.url)))?;

        let controller = AbortController::default();
        let signal = controller.signal();
        crate::ledger::embed_request(texts.len());
        let fetch = Fetch::Request(request);
        let send = Box::pin(fetch.send_with_signal(&signal));
        let timeout = Box::pin(Delay::from(Duration::from_millis(self.config.timeout_ms)));
        let mut response = match select(send, timeout).await {
            Either::Left((result, _)) => result.map_err(|e| EmbedError::Backend {
                status: 0,
                message: format!("cannot reach {}: {e}", self.url),
            })?,
            Either::Right(((), _)) => {
                controller.abort();
                return Err(EmbedError::Timeout);
            }
        };
        let status = response.status_code();
        let text = response
            .text()
            .await
            .map_err(|e| EmbedError::Backend { status, message: format!("reading the response: {e}") })?;
        openai::parse_response(status, &text, texts.len(), self.config.dims)
    }
}

#[async_trait::async_trait(?Send)]
impl Embedder for OpenAiEmbedder {
    fn info(&self) -> EmbedderInfo {
        EmbedderInfo {
            provider: "openai".into(),
            model: self.config.model.clone(),
            dims: self.config.dims,
            max_batch: self.config.max_batch,
            max_input_chars: self.config.max_input_chars,
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.max_batch.max(1)) {
            let mut truncated = 0usize;
            let inputs: Vec<String> = batch
                .iter()
                .map(|t| {
                    let (text, cut) = truncate_chars(t, self.config.max_input_chars);
                    truncated += usize::from(cut);
                    text.to_string()
                })
                .collect();
            if truncated > 0 {
                crate::embed::log_truncation(&self.info(), truncated);
            }
            out.extend(self.embed_batch(&inputs).await?);
        }
        Ok(out)
    }
}
