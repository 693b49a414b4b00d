//! Chunking options as the outside world sends them: a [`ChunkConfig`] in JSON (camelCase, every
//! field optional) plus an optional `preset` that supplies the base values the other fields
//! override. One parser for every entry point (`POST /v1/chunk`, the CLI, the browser preview), so
//! the same options always give the same chunks.
//!
//! ```
//! use edgerag_core::options::parse_options;
//! let config = parse_options(r#"{"preset":"compact","overlapLines":0}"#).unwrap();
//! assert_eq!((config.max_tokens, config.overlap_lines), (500, 0));
//! ```
use serde_json::{Map, Value};

use crate::chunk::{ChunkConfig, Preset};

/// Every named preset, in the order a UI should list them.
pub const PRESETS: &[Preset] = &[Preset::Default, Preset::Compact];

/// Why options were rejected. `code()` is the stable API error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("unknown preset {0:?} (known: default, compact)")]
    UnknownPreset(String),
    #[error("invalid chunk options: {0}")]
    Invalid(String),
}

impl OptionsError {
    pub fn code(&self) -> &'static str {
        match self {
            OptionsError::UnknownPreset(_) => "UNKNOWN_PRESET",
            OptionsError::Invalid(_) => "INVALID_OPTIONS",
        }
    }
}

/// Parse options JSON. Empty / whitespace-only input and `null` mean "all defaults".
pub fn parse_options(json: &str) -> Result<ChunkConfig, OptionsError> {
    if json.trim().is_empty() {
        return Ok(ChunkConfig::default());
    }
    let value: Value = serde_json::from_str(json).map_err(|e| OptionsError::Invalid(e.to_string()))?;
    options_from_value(value)
}

/// Resolve an already-parsed options value (e.g. the `options` member of a request body).
pub fn options_from_value(value: Value) -> Result<ChunkConfig, OptionsError> {
    resolve(value)
}

fn resolve(value: Value) -> Result<ChunkConfig, OptionsError> {
    let mut fields = match value {
        Value::Null => return Ok(ChunkConfig::default()),
        Value::Object(fields) => fields,
        other => return Err(OptionsError::Invalid(format!("expected a JSON object, got {}", kind(&other)))),
    };
    let base = match fields.remove("preset") {
        None | Some(Value::Null) => ChunkConfig::default(),
        Some(Value::String(name)) => {
            Preset::from_name(&name).ok_or(OptionsError::UnknownPreset(name))?.config()
        }
        Some(other) => {
            return Err(OptionsError::Invalid(format!("`preset` must be a string, got {}", kind(&other))))
        }
    };
    if fields.is_empty() {
        return Ok(base);
    }
    // Overlay the given fields on the preset's values; `deny_unknown_fields` still applies.
    let mut merged = match serde_json::to_value(&base) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    merged.extend(fields);
    let config: ChunkConfig =
        serde_json::from_value(Value::Object(merged)).map_err(|e| OptionsError::Invalid(e.to_string()))?;
    check_limits(&config)?;
    Ok(config)
}

/// Limits of zero cannot make a chunk (a chunk has at least one line of at least one token), so
/// they are refused rather than silently clamped.
fn check_limits(config: &ChunkConfig) -> Result<(), OptionsError> {
    for (field, value) in [("maxLines", config.max_lines), ("maxTokens", config.max_tokens)] {
        if value == 0 {
            return Err(OptionsError::Invalid(format!("`{field}` must be at least 1")));
        }
    }
    Ok(())
}

/// The JSON Schema of what [`options_from_value`] reads: an optional `preset` (whose values are
/// the base) plus any [`ChunkConfig`] field, every one optional. Built from `ChunkConfig`'s own
/// schema, so a new config field shows up here by itself.
#[cfg(feature = "schemars")]
pub struct ChunkOptionsSchema;

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for ChunkOptionsSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ChunkOptions".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = <ChunkConfig as schemars::JsonSchema>::json_schema(generator);
        let preset = generator.subschema_for::<Preset>();
        schema.remove("required");
        schema.insert(
            "description".into(),
            "Chunking options: a `preset` (its values are the base) plus any `ChunkConfig` field.".into(),
        );
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.insert("preset".into(), preset.to_value());
        }
        schema
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Language;

    #[test]
    fn empty_and_null_are_defaults() {
        assert_eq!(parse_options("").unwrap(), ChunkConfig::default());
        assert_eq!(parse_options(" null ").unwrap(), ChunkConfig::default());
        assert_eq!(parse_options("{}").unwrap(), ChunkConfig::default());
    }

    #[test]
    fn preset_is_the_base_and_fields_override_it() {
        let c = parse_options(r#"{"preset":"compact"}"#).unwrap();
        assert_eq!(c, Preset::Compact.config());
        let c = parse_options(r#"{"preset":"compact","maxLines":20,"language":"ts"}"#);
        // `language` takes the canonical name only (serde), aliases are for humans at the CLI.
        assert_eq!(c.unwrap_err().code(), "INVALID_OPTIONS");
        let c = parse_options(r#"{"preset":"compact","maxLines":20,"language":"typescript"}"#).unwrap();
        assert_eq!((c.max_lines, c.max_tokens, c.language), (20, 500, Some(Language::Typescript)));
    }

    #[test]
    fn an_unknown_preset_is_refused_naming_the_known_ones() {
        let e = parse_options(r#"{"preset":"old-name"}"#).unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_PRESET");
        let message = e.to_string();
        assert!(
            message.contains("old-name") && message.contains("default") && message.contains("compact"),
            "{message}"
        );
    }

    #[test]
    fn bad_options_have_stable_codes() {
        for (json, code) in [
            ("{", "INVALID_OPTIONS"),
            ("[]", "INVALID_OPTIONS"),
            (r#"{"maxLines":"ten"}"#, "INVALID_OPTIONS"),
            (r#"{"maxLines":-1}"#, "INVALID_OPTIONS"),
            (r#"{"maxLines":0}"#, "INVALID_OPTIONS"),
            (r#"{"preset":"compact","maxTokens":0}"#, "INVALID_OPTIONS"),
            (r#"{"bogus":1}"#, "INVALID_OPTIONS"),
            (r#"{"preset":"huge"}"#, "UNKNOWN_PRESET"),
            (r#"{"preset":7}"#, "INVALID_OPTIONS"),
        ] {
            assert_eq!(parse_options(json).unwrap_err().code(), code, "{json}");
        }
        let msg = parse_options(r#"{"bogus":1}"#).unwrap_err().to_string();
        assert!(msg.contains("bogus"), "{msg}");
    }
}
