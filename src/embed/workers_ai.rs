//! Workers AI embeddings through the `AI` binding. The mapping (request, response checks, error
//! classification) is [`edgerag_core::embed::workers_ai`], tested natively.
use edgerag_core::embed::{truncate_chars, workers_ai, EmbedError, Embedder, EmbedderInfo};
use worker::Ai;

pub struct WorkersAiEmbedder {
    ai: Ai,
    info: EmbedderInfo,
}

impl WorkersAiEmbedder {
    pub fn new(ai: Ai, info: EmbedderInfo) -> Self {
        WorkersAiEmbedder { ai, info }
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
            let response: workers_ai::Response = self
                .ai
                .run(&self.info.model, workers_ai::request(&inputs))
                .await
                .map_err(|e| workers_ai::classify_error(&e.to_string()))?;
            out.extend(workers_ai::vectors(response, self.info.dims, inputs.len())?);
        }
        Ok(out)
    }
}
