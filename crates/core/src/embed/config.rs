//! Which embedder to build, from the worker's variables (`EMBEDDER`, `EMBED_MODEL`, `EMBED_DIMS`,
//! `OPENAI_BASE_URL`, `OPENAI_API_KEY`, …). Pure, so every configuration mistake is a tested
//! [`EmbedError::Config`] before any request is made.
use serde::Serialize;

use super::model_specs::{workers_ai_model, ModelSpec, LOCAL_MINILM, WORKERS_AI_DEFAULT};
use super::openai::{OpenAiConfig, DEFAULT_MAX_BATCH, DEFAULT_TIMEOUT_MS};
use super::{EmbedError, EmbedderInfo};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "provider", rename_all = "kebab-case")]
pub enum EmbedderConfig {
    WorkersAi {
        model: String,
        dims: usize,
        max_batch: usize,
        max_input_tokens: Option<usize>,
        /// `EMBED_TIMEOUT_MS`: a call still running after this fails as [`EmbedError::Timeout`]
        /// (retried by the pipeline) instead of holding the consumer until the platform kills it.
        timeout_ms: u64,
    },
    #[serde(rename = "openai")]
    OpenAi(OpenAiConfig),
}

impl EmbedderConfig {
    /// Reads the configuration through `var` (a variable or secret by name; empty counts as unset).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, EmbedError> {
        let get = |name: &str| var(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let dims = match get("EMBED_DIMS") {
            Some(d) => Some(parse_positive("EMBED_DIMS", &d)?),
            None => None,
        };
        let timeout_ms = match get("EMBED_TIMEOUT_MS") {
            Some(t) => parse_positive("EMBED_TIMEOUT_MS", &t)? as u64,
            None => DEFAULT_TIMEOUT_MS,
        };
        let provider = get("EMBEDDER").unwrap_or_else(|| "workers-ai".to_string());
        match provider.as_str() {
            "workers-ai" => {
                let model = get("EMBED_MODEL").unwrap_or_else(|| WORKERS_AI_DEFAULT.to_string());
                match (workers_ai_model(&model), dims) {
                    (Some(spec), Some(d)) if d != spec.dims => Err(EmbedError::Config(format!(
                        "EMBED_DIMS={d} but {} produces {} dimensions",
                        spec.name, spec.dims
                    ))),
                    (Some(spec), _) => Ok(EmbedderConfig::WorkersAi {
                        model: spec.name.to_string(),
                        dims: spec.dims,
                        max_batch: spec.max_batch,
                        max_input_tokens: Some(spec.max_input_tokens),
                        timeout_ms,
                    }),
                    (None, Some(d)) => Ok(EmbedderConfig::WorkersAi {
                        model,
                        dims: d,
                        max_batch: 100,
                        max_input_tokens: None,
                        timeout_ms,
                    }),
                    (None, None) => Err(EmbedError::Config(format!(
                        "unknown Workers AI model {model:?}: set EMBED_DIMS for it or use one of {}",
                        super::model_specs::WORKERS_AI_MODELS
                            .iter()
                            .map(|m| m.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))),
                }
            }
            "openai" => {
                let base_url = get("OPENAI_BASE_URL")
                    .ok_or_else(|| EmbedError::Config("EMBEDDER=openai needs OPENAI_BASE_URL".into()))?;
                if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                    return Err(EmbedError::Config(format!(
                        "OPENAI_BASE_URL is not an http(s) URL: {base_url}"
                    )));
                }
                let model = get("EMBED_MODEL")
                    .ok_or_else(|| EmbedError::Config("EMBEDDER=openai needs EMBED_MODEL".into()))?;
                let known = known_openai_dims(&model);
                let dims = match (dims, known) {
                    (Some(d), _) => d,
                    (None, Some(d)) => d,
                    (None, None) => {
                        return Err(EmbedError::Config(format!("EMBED_DIMS is required for model {model:?}")))
                    }
                };
                let max_batch = match get("EMBED_BATCH") {
                    Some(b) => parse_positive("EMBED_BATCH", &b)?,
                    None => DEFAULT_MAX_BATCH,
                };
                let max_input_chars = match get("EMBED_MAX_INPUT_CHARS") {
                    Some(c) => Some(parse_positive("EMBED_MAX_INPUT_CHARS", &c)?),
                    None => None,
                };
                let send_dimensions = get("EMBED_SEND_DIMENSIONS").is_some_and(|v| v == "true" || v == "1");
                Ok(EmbedderConfig::OpenAi(OpenAiConfig {
                    base_url,
                    model,
                    dims,
                    api_key: get("OPENAI_API_KEY"),
                    send_dimensions,
                    max_batch,
                    timeout_ms,
                    max_input_chars,
                }))
            }
            other => Err(EmbedError::Config(format!("EMBEDDER must be workers-ai or openai, not {other:?}"))),
        }
    }

    /// What `/health` shows and what namespaces record (`embed_model`, `embed_dims`).
    pub fn info(&self) -> EmbedderInfo {
        match self {
            EmbedderConfig::WorkersAi { model, dims, max_batch, max_input_tokens, .. } => EmbedderInfo {
                provider: "workers-ai".into(),
                model: model.clone(),
                dims: *dims,
                max_batch: *max_batch,
                max_input_chars: max_input_tokens.map(|t| t * super::model_specs::CHARS_PER_TOKEN),
            },
            EmbedderConfig::OpenAi(c) => EmbedderInfo {
                provider: "openai".into(),
                model: c.model.clone(),
                dims: c.dims,
                max_batch: c.max_batch,
                max_input_chars: c.max_input_chars,
            },
        }
    }

    pub fn dims(&self) -> usize {
        self.info().dims
    }
}

/// Dimensions of well-known models served over the OpenAI API.
fn known_openai_dims(model: &str) -> Option<usize> {
    let spec: &ModelSpec = &LOCAL_MINILM;
    if model == spec.name || spec.aliases.contains(&model) {
        return Some(spec.dims);
    }
    match model {
        "text-embedding-3-small" | "text-embedding-ada-002" => Some(1536),
        "text-embedding-3-large" => Some(3072),
        _ => None,
    }
}

fn parse_positive(name: &str, value: &str) -> Result<usize, EmbedError> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(EmbedError::Config(format!("{name} must be a positive integer, not {value:?}"))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<EmbedderConfig, EmbedError> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        EmbedderConfig::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn default_is_workers_ai_bge_m3() {
        let c = cfg(&[]).unwrap();
        let info = c.info();
        assert_eq!(
            (info.provider.as_str(), info.model.as_str(), info.dims),
            ("workers-ai", "@cf/baai/bge-m3", 1024)
        );
        assert_eq!(info.max_batch, 100);
        assert_eq!(info.max_input_chars, Some(8192 * 3));
    }

    #[test]
    fn workers_ai_models_and_dims() {
        assert_eq!(cfg(&[("EMBED_MODEL", "bge-base-en-v1.5")]).unwrap().dims(), 768);
        assert_eq!(
            cfg(&[("EMBED_MODEL", "@cf/baai/bge-small-en-v1.5"), ("EMBED_DIMS", "384")]).unwrap().dims(),
            384
        );
        assert!(matches!(
            cfg(&[("EMBED_MODEL", "bge-small-en-v1.5"), ("EMBED_DIMS", "768")]),
            Err(EmbedError::Config(_))
        ));
        assert!(matches!(cfg(&[("EMBED_MODEL", "@cf/x/new")]), Err(EmbedError::Config(_))));
        // Workers AI calls time out too (default 30 s).
        assert!(matches!(cfg(&[]).unwrap(), EmbedderConfig::WorkersAi { timeout_ms: 30_000, .. }));
        assert!(matches!(
            cfg(&[("EMBED_TIMEOUT_MS", "5000")]).unwrap(),
            EmbedderConfig::WorkersAi { timeout_ms: 5000, .. }
        ));
        assert!(matches!(cfg(&[("EMBED_TIMEOUT_MS", "0")]), Err(EmbedError::Config(_))));
        assert_eq!(cfg(&[("EMBED_MODEL", "@cf/x/new"), ("EMBED_DIMS", "512")]).unwrap().dims(), 512);
    }

    #[test]
    fn openai_local_server() {
        let c = cfg(&[
            ("EMBEDDER", "openai"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:8788/v1"),
            ("EMBED_MODEL", "all-MiniLM-L6-v2"),
            ("OPENAI_API_KEY", ""),
        ])
        .unwrap();
        let EmbedderConfig::OpenAi(o) = &c else { panic!("not openai") };
        assert_eq!(o.dims, 384);
        assert_eq!(o.api_key, None);
        assert_eq!(c.info().provider, "openai");
        let json = serde_json::to_string(&c).unwrap();
        assert!(!json.contains("apiKey"));
    }

    #[test]
    fn openai_mistakes_are_config_errors() {
        for pairs in [
            &[("EMBEDDER", "openai")][..],
            &[
                ("EMBEDDER", "openai"),
                ("OPENAI_BASE_URL", "ftp://x"),
                ("EMBED_MODEL", "m"),
                ("EMBED_DIMS", "3"),
            ],
            &[("EMBEDDER", "openai"), ("OPENAI_BASE_URL", "http://x"), ("EMBED_MODEL", "custom")],
            &[
                ("EMBEDDER", "openai"),
                ("OPENAI_BASE_URL", "http://x"),
                ("EMBED_MODEL", "m"),
                ("EMBED_DIMS", "0"),
            ],
            &[("EMBEDDER", "cohere")],
        ] {
            assert!(matches!(cfg(pairs), Err(EmbedError::Config(_))), "{pairs:?}");
        }
    }
}
