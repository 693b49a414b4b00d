//! Workers AI embeddings through the `AI` binding. The mapping (request, response checks, error
//! classification) is [`edgerag_core::embed::workers_ai`], tested natively.
use std::time::Duration;

use edgerag_core::embed::{truncate_chars, workers_ai, EmbedError, Embedder, EmbedderInfo};
use futures_util::future::{select, Either};
use worker::{Ai, Delay};

pub struct WorkersAiEmbedder {
    ai: Ai,
    info: EmbedderInfo,
    timeout_ms: u64,
}

impl WorkersAiEmbedder {
    pub fn new(ai: Ai, info: EmbedderInfo, timeout_ms: u64) -> Self {
        WorkersAiEmbedder { ai, info, timeout_ms }
    }
}

#[async_trait::async_trait(?Send)]
impl Embedder for WorkersAiEmbedder {
    fn info(&self) -> EmbedderInfo {
        self.info.clone()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.info.max_batch.max(1)) {
            // The model's input limit, applied here too for callers that skip the cache (which
            // counts the cuts); text already within the limit is untouched.
            let mut truncated = 0usize;
            let inputs: Vec<String> = batch
                .iter()
                .map(|t| {
                    let (text, cut) = truncate_chars(t, self.info.max_input_chars);
                    truncated += usize::from(cut);
                    text.to_string()
                })
                .collect();
            if truncated > 0 {
                crate::embed::log_truncation(&self.info, truncated);
            }
            // The binding takes no signal: race it against a timer (the call is abandoned, and the
            // pipeline retries the batch).
            crate::ledger::embed_request(inputs.len());
            let run = Box::pin(
                self.ai.run::<_, workers_ai::Response>(&self.info.model, workers_ai::request(&inputs)),
            );
            let timeout = Box::pin(Delay::from(Duration::from_millis(self.timeout_ms)));
            let response = match select(run, timeout).await {
                Either::Left((result, _)) => {
                    result.map_err(|e| workers_ai::classify_error(&e.to_string()))?
                }
                Either::Right(((), _)) => return Err(EmbedError::Timeout),
            };
            out.extend(workers_ai::vectors(response, self.info.dims, inputs.len())?);
        }
        Ok(out)
    }
}
