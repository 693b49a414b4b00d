//! Embedding models edgerag knows by name: dimensions, batch limit and input limit.
//!
//! Input limits are in model tokens; we cannot run each model's tokenizer in the worker, so texts
//! are cut to a character budget derived from the token limit ([`ModelSpec::max_input_chars`]) and
//! every cut is counted ([`super::EmbedStats::truncated`]). The budget assumes ≈ 3 characters per
//! token, which is conservative for code (prose averages ≈ 4): a text under the budget always fits.
use serde::Serialize;

/// Characters per token assumed when turning a token limit into a character budget.
pub const CHARS_PER_TOKEN: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSpec {
    /// Full model name as the backend knows it.
    pub name: &'static str,
    /// Short aliases accepted in configuration (`EMBED_MODEL`).
    #[serde(skip)]
    pub aliases: &'static [&'static str],
    pub dims: usize,
    /// Texts per request.
    pub max_batch: usize,
    /// Input limit in model tokens.
    pub max_input_tokens: usize,
}

impl ModelSpec {
    pub fn max_input_chars(&self) -> usize {
        self.max_input_tokens * CHARS_PER_TOKEN
    }
}

/// The default Workers AI model: multilingual (teams write code comments and docs in Russian, Portuguese, Chinese, ...).
pub const WORKERS_AI_DEFAULT: &str = "@cf/baai/bge-m3";

/// Workers AI text-embedding models (batches of up to 100 texts).
pub const WORKERS_AI_MODELS: &[ModelSpec] = &[
    ModelSpec {
        name: "@cf/baai/bge-m3",
        aliases: &["bge-m3"],
        dims: 1024,
        max_batch: 100,
        max_input_tokens: 8192,
    },
    ModelSpec {
        name: "@cf/baai/bge-base-en-v1.5",
        aliases: &["bge-base-en-v1.5"],
        dims: 768,
        max_batch: 100,
        max_input_tokens: 512,
    },
    ModelSpec {
        name: "@cf/baai/bge-small-en-v1.5",
        aliases: &["bge-small-en-v1.5"],
        dims: 384,
        max_batch: 100,
        max_input_tokens: 512,
    },
    ModelSpec {
        name: "@cf/baai/bge-large-en-v1.5",
        aliases: &["bge-large-en-v1.5"],
        dims: 1024,
        max_batch: 100,
        max_input_tokens: 512,
    },
    ModelSpec {
        name: "@cf/qwen/qwen3-embedding-0.6b",
        aliases: &["qwen3-embedding-0.6b"],
        dims: 1024,
        max_batch: 100,
        max_input_tokens: 8192,
    },
];

/// The local model served by `edgerag-embed-server` (sentence-transformers truncates it at 256
/// word pieces; so does the server).
pub const LOCAL_MINILM: ModelSpec = ModelSpec {
    name: "all-MiniLM-L6-v2",
    aliases: &["sentence-transformers/all-MiniLM-L6-v2", "minilm"],
    dims: 384,
    max_batch: 64,
    max_input_tokens: 256,
};

/// Looks a Workers AI model up by full name or alias.
pub fn workers_ai_model(name: &str) -> Option<&'static ModelSpec> {
    let name = name.trim();
    WORKERS_AI_MODELS.iter().find(|m| m.name == name || m.aliases.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_name_and_alias() {
        assert_eq!(workers_ai_model("@cf/baai/bge-m3").map(|m| m.dims), Some(1024));
        assert_eq!(workers_ai_model("bge-small-en-v1.5").map(|m| m.dims), Some(384));
        assert_eq!(
            workers_ai_model("qwen3-embedding-0.6b").map(|m| m.name),
            Some("@cf/qwen/qwen3-embedding-0.6b")
        );
        assert_eq!(workers_ai_model("bge-base-en-v1.5").map(|m| m.max_input_chars()), Some(1536));
        assert!(workers_ai_model("nope").is_none());
        assert!(workers_ai_model(WORKERS_AI_DEFAULT).is_some());
    }
}
