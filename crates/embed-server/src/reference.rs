//! The previous inference path, kept as the exact f32 reference for tests and benchmarks:
//! `candle_transformers::models::bert::BertModel` (exact-erf GELU) over padded, length-sorted
//! groups, mean pooling over the attention mask, L2 normalization. The server uses
//! [`crate::MiniLm`]; this is what its vectors are checked against.
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::bert::BertModel;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer};

use crate::model::{invalid, ModelError, ModelFiles};

/// Texts per forward pass of the reference (as the previous server did).
const GROUP: usize = 16;

pub struct CandleBert {
    model: BertModel,
    tokenizer: Tokenizer,
}

impl CandleBert {
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        let files = ModelFiles::load(dir)?;
        let mut tokenizer = files.tokenizer;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id: files.config.pad_token_id as u32,
            ..PaddingParams::default()
        }));
        let model =
            BertModel::load(files.weights, &files.config).map_err(|e| invalid(&files.weights_path, e))?;
        Ok(CandleBert { model, tokenizer })
    }

    /// Unit vectors in input order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        for group in order.chunks(GROUP) {
            let inputs: Vec<&str> = group.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, v) in group.iter().zip(self.embed_group(&inputs)?) {
                vectors[i] = v;
            }
        }
        Ok(vectors)
    }

    fn embed_group(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let n = encodings.len();
        let len = encodings.first().map_or(0, |e| e.len());
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in &encodings {
            ids.extend(e.get_ids().iter().copied());
            mask.extend(e.get_attention_mask().iter().copied());
        }
        let ids = Tensor::from_vec(ids, (n, len), &Device::Cpu)?;
        let mask = Tensor::from_vec(mask, (n, len), &Device::Cpu)?;
        let type_ids = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (n, len, dims)
        let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
        let summed = hidden.broadcast_mul(&m)?.sum(1)?; // (n, dims)
        let counts = m.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (n, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}
