//! all-MiniLM-L6-v2 on candle: tokenize (truncating at 256 word pieces, like sentence-transformers),
//! run BERT, mean-pool over the attention mask, L2-normalize.
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Texts per forward pass: inputs are sorted by length and run in groups this big, so short texts
/// are not padded to the longest one of a large request.
const GROUP: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model file {path} is missing or unreadable ({source}); run scripts/setup.d/40-model.sh")]
    Missing { path: PathBuf, source: std::io::Error },
    #[error("model file {path} is invalid: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("tokenizer failed: {0}")]
    Tokenizer(String),
    #[error("model inference failed: {0}")]
    Inference(#[from] candle_core::Error),
}

/// The output of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One unit vector per input, in input order.
    pub vectors: Vec<Vec<f32>>,
    /// Word pieces fed to the model (after truncation, with [CLS]/[SEP]).
    pub tokens: usize,
    /// Inputs longer than the model's limit, cut to it.
    pub truncated: usize,
}

pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dims: usize,
    max_seq_length: usize,
}

fn read(path: &Path) -> Result<Vec<u8>, ModelError> {
    std::fs::read(path).map_err(|source| ModelError::Missing { path: path.to_path_buf(), source })
}

fn invalid(path: &Path, e: impl std::fmt::Display) -> ModelError {
    ModelError::Invalid { path: path.to_path_buf(), message: e.to_string() }
}

impl MiniLm {
    /// Loads `config.json`, `tokenizer.json`, `model.safetensors` (and `sentence_bert_config.json`
    /// for the sequence limit, default 256) from `dir`.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        let config_path = dir.join("config.json");
        let config: Config =
            serde_json::from_slice(&read(&config_path)?).map_err(|e| invalid(&config_path, e))?;
        let st_path = dir.join("sentence_bert_config.json");
        let max_seq_length = match std::fs::read(&st_path) {
            Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
                .map_err(|e| invalid(&st_path, e))?
                .get("max_seq_length")
                .and_then(|v| v.as_u64())
                .map_or(256, |v| v as usize),
            Err(_) => 256,
        };

        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_bytes(read(&tok_path)?).map_err(|e| invalid(&tok_path, e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_seq_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| invalid(&tok_path, e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id: config.pad_token_id as u32,
            ..PaddingParams::default()
        }));

        let weights_path = dir.join("model.safetensors");
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(read(&weights_path)?, DType::F32, &device)
            .map_err(|e| invalid(&weights_path, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| invalid(&weights_path, e))?;
        Ok(MiniLm { model, tokenizer, device, dims: config.hidden_size, max_seq_length })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn max_seq_length(&self) -> usize {
        self.max_seq_length
    }

    /// Word pieces of a text as the model sees it (with [CLS]/[SEP], before truncation).
    pub fn count_tokens(&self, text: &str) -> Result<usize, ModelError> {
        let mut tok = self.tokenizer.clone();
        tok.with_truncation(None).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        tok.with_padding(None);
        let enc = tok.encode(text, true).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        Ok(enc.len())
    }

    /// Embeds texts: unit vectors in input order.
    pub fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut tokens = 0;
        let mut truncated = 0;
        // Shortest first (by bytes, a cheap proxy for tokens), in groups.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        for group in order.chunks(GROUP) {
            let inputs: Vec<&str> = group.iter().map(|&i| texts[i].as_str()).collect();
            let out = self.embed_group(&inputs)?;
            tokens += out.tokens;
            truncated += out.truncated;
            for (&i, v) in group.iter().zip(out.vectors) {
                vectors[i] = v;
            }
        }
        Ok(Embeddings { vectors, tokens, truncated })
    }

    fn embed_group(&self, texts: &[&str]) -> Result<Embeddings, ModelError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let n = encodings.len();
        let len = encodings.first().map_or(0, |e| e.len());
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        let mut tokens = 0;
        let mut truncated = 0;
        for e in &encodings {
            ids.extend(e.get_ids().iter().copied());
            mask.extend(e.get_attention_mask().iter().copied());
            tokens += e.get_attention_mask().iter().filter(|&&m| m == 1).count();
            truncated += usize::from(!e.get_overflowing().is_empty());
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let type_ids = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (n, len, dims)

        // Mean over real tokens: Σ(h · m) / Σ m, then L2-normalize (sentence-transformers' Pooling
        // with pooling_mode_mean_tokens, then Normalize).
        let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
        let summed = hidden.broadcast_mul(&m)?.sum(1)?; // (n, dims)
        let counts = m.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (n, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12f32, f32::MAX)?;
        let unit = mean.broadcast_div(&norms)?;
        Ok(Embeddings { vectors: unit.to_vec2::<f32>()?, tokens, truncated })
    }
}
