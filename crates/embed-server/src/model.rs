//! all-MiniLM-L6-v2 on candle: tokenize (truncating at 256 word pieces, like sentence-transformers),
//! run BERT, mean-pool over the attention mask, L2-normalize.
use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;
use tokenizers::{Tokenizer, TruncationParams};

use crate::encoder::Encoder;

/// Word pieces per forward pass: texts are packed back to back (no padding) into groups of about
/// this many tokens, which bounds the activations' memory (≈ 25 MB for the widest one) while
/// keeping the matrix products large.
const GROUP_TOKENS: usize = 8192;

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
    encoder: Encoder,
    tokenizer: Tokenizer,
    dims: usize,
    max_seq_length: usize,
}

/// What both the encoder and the candle reference load from a model directory.
pub(crate) struct ModelFiles {
    pub config: Config,
    /// Truncating at `max_seq_length`, not padding.
    pub tokenizer: Tokenizer,
    pub max_seq_length: usize,
    pub weights: VarBuilder<'static>,
    pub weights_path: PathBuf,
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, ModelError> {
    std::fs::read(path).map_err(|source| ModelError::Missing { path: path.to_path_buf(), source })
}

pub(crate) fn invalid(path: &Path, e: impl std::fmt::Display) -> ModelError {
    ModelError::Invalid { path: path.to_path_buf(), message: e.to_string() }
}

impl ModelFiles {
    /// Loads `config.json`, `tokenizer.json`, `model.safetensors` (and `sentence_bert_config.json`
    /// for the sequence limit, default 256) from `dir`.
    pub(crate) fn load(dir: &Path) -> Result<Self, ModelError> {
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
        tokenizer.with_padding(None);

        let weights_path = dir.join("model.safetensors");
        let weights = VarBuilder::from_buffered_safetensors(read(&weights_path)?, DType::F32, &Device::Cpu)
            .map_err(|e| invalid(&weights_path, e))?;
        Ok(ModelFiles { config, tokenizer, max_seq_length, weights, weights_path })
    }
}

impl MiniLm {
    /// Loads `config.json`, `tokenizer.json`, `model.safetensors` (and `sentence_bert_config.json`
    /// for the sequence limit, default 256) from `dir`.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        let files = ModelFiles::load(dir)?;
        let encoder =
            Encoder::load(files.weights, &files.config).map_err(|e| invalid(&files.weights_path, e))?;
        Ok(MiniLm {
            encoder,
            tokenizer: files.tokenizer,
            dims: files.config.hidden_size,
            max_seq_length: files.max_seq_length,
        })
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
        let enc = tok.encode(text, true).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        Ok(enc.len())
    }

    /// Embeds texts: unit vectors in input order.
    pub fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.iter().map(String::as_str).collect::<Vec<_>>(), true)
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let tokens = encodings.iter().map(|e| e.get_ids().len()).sum();
        let truncated = encodings.iter().filter(|e| !e.get_overflowing().is_empty()).count();
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut group: Vec<usize> = Vec::new();
        let mut group_tokens = 0;
        for i in 0..=encodings.len() {
            let len = encodings.get(i).map(|e| e.get_ids().len());
            if !group.is_empty() && len.is_none_or(|n| group_tokens + n > GROUP_TOKENS) {
                let seqs: Vec<&[u32]> = group.iter().map(|&g| encodings[g].get_ids()).collect();
                for (&g, v) in group.iter().zip(self.encoder.embed(&seqs)?) {
                    vectors[g] = v;
                }
                group.clear();
                group_tokens = 0;
            }
            if let Some(n) = len {
                group.push(i);
                group_tokens += n;
            }
        }
        Ok(Embeddings { vectors, tokens, truncated })
    }
}
