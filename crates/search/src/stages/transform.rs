//! Pre-retrieval query transformers behind the [`Generator`] port: history compression (the
//! conversation + follow-up → one standalone question, history ≤ `maxHistoryTokens`), rewrite
//! (drop noise, keep identifiers), translation to the embedding model's language (skipped when
//! the query is already in it). Without a generator they are skipped and the response says so.
use serde::Serialize;

use crate::ports::{GenerateRequest, Generator};
use crate::profile::TransformerSettings;
use crate::request::Turn;

/// What the transformers did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TransformOutcome {
    pub query: String,
    /// `query.compression`, `query.rewrite`, `query.translation`.
    pub applied: Vec<String>,
    pub warnings: Vec<String>,
}

/// Best-effort language of a text (ISO 639-1): script first, then common function words for
/// Latin-script languages; `en` by default.
pub fn detect_language(text: &str) -> &'static str {
    let (mut cyrillic, mut han, mut kana, mut hangul, mut arabic, mut latin) = (0, 0, 0, 0, 0, 0);
    for c in text.chars() {
        match c as u32 {
            0x0400..=0x04FF => cyrillic += 1,
            0x4E00..=0x9FFF | 0x3400..=0x4DBF => han += 1,
            0x3040..=0x30FF => kana += 1,
            0xAC00..=0xD7AF => hangul += 1,
            0x0600..=0x06FF => arabic += 1,
            _ if c.is_ascii_alphabetic() || ('\u{C0}'..='\u{24F}').contains(&c) => latin += 1,
            _ => {}
        }
    }
    let max = [cyrillic, han + kana, hangul, arabic, latin].into_iter().max().unwrap_or(0);
    if max == 0 {
        return "en";
    }
    if cyrillic == max {
        return "ru";
    }
    if han + kana == max {
        return if kana > 0 { "ja" } else { "zh" };
    }
    if hangul == max {
        return "ko";
    }
    if arabic == max {
        return "ar";
    }
    let words: Vec<String> = text.split(|c: char| !c.is_alphabetic()).map(|w| w.to_lowercase()).collect();
    let score = |list: &[&str]| words.iter().filter(|w| list.contains(&w.as_str())).count();
    let pt = score(&[
        "não", "como", "onde", "função", "é", "uma", "para", "está", "são", "você", "qual", "quais", "do",
        "da", "dos", "das", "com",
    ]);
    let es = score(&[
        "cómo", "dónde", "qué", "función", "es", "una", "el", "los", "las", "está", "cuál", "del", "con",
        "por",
    ]);
    let fr = score(&[
        "comment", "où", "est", "une", "le", "les", "des", "fonction", "pourquoi", "quelle", "avec", "du",
    ]);
    let de = score(&[
        "wie", "wo", "ist", "eine", "der", "die", "das", "funktion", "warum", "welche", "mit", "und",
    ]);
    let en = score(&[
        "how", "where", "what", "is", "the", "a", "an", "does", "which", "why", "function", "with", "and",
    ]);
    let best = [(pt, "pt"), (es, "es"), (fr, "fr"), (de, "de")]
        .into_iter()
        .max_by_key(|(n, _)| *n)
        .unwrap_or((0, "en"));
    if best.0 > en && best.0 >= 1 {
        best.1
    } else {
        "en"
    }
}

/// The conversation as text, most recent kept within `max_tokens` (≈ chars / 4).
pub fn history_text(turns: &[Turn], max_tokens: u32) -> String {
    let budget = max_tokens as usize * 4;
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    for t in turns.iter().rev() {
        let line = format!("{}: {}", t.role, t.content);
        let n = line.chars().count();
        if used + n > budget {
            let room = budget.saturating_sub(used);
            if room > 40 {
                let tail: String = line.chars().skip(n - room).collect();
                lines.push(format!("…{tail}"));
            }
            break;
        }
        used += n + 1;
        lines.push(line);
    }
    lines.reverse();
    lines.join("\n")
}

fn clean_reply(reply: &str) -> Option<String> {
    let text = reply.trim().trim_matches('"').trim();
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim();
    let first =
        first.strip_prefix("Query:").or_else(|| first.strip_prefix("Question:")).unwrap_or(first).trim();
    (!first.is_empty()).then(|| first.chars().take(1000).collect())
}

/// Run the enabled transformers in order: compression → rewrite → translation.
pub async fn transform(
    query: &str,
    conversation: &[Turn],
    settings: &TransformerSettings,
    generator: Option<&dyn Generator>,
) -> TransformOutcome {
    let mut out = TransformOutcome { query: query.to_string(), ..Default::default() };
    if !settings.enabled {
        if !conversation.is_empty() {
            out.warnings
                .push("conversationContext was not used: the profile disables query transformers".into());
        }
        return out;
    }
    let Some(generator) = generator else {
        let mut skipped = Vec::new();
        if settings.compression && !conversation.is_empty() {
            skipped.push("compression");
        }
        if settings.rewrite {
            skipped.push("rewrite");
        }
        if settings.translation && detect_language(query) != settings.translate_to {
            skipped.push("translation");
        }
        if !skipped.is_empty() {
            out.warnings.push(format!(
                "query transformers skipped ({}): no text model is configured (set GENERATOR); \
                 deterministic expansions were used instead",
                skipped.join(", ")
            ));
        }
        if !conversation.is_empty() && settings.compression {
            out.warnings
                .push("conversationContext was not used: history compression needs a text model".into());
        }
        return out;
    };

    if settings.compression && !conversation.is_empty() {
        let history = history_text(conversation, settings.max_history_tokens);
        let req = GenerateRequest {
            system: "Given a conversation and a follow-up question, rewrite the follow-up as one standalone \
                     question that keeps every name, identifier and file path. Reply with the question only."
                .into(),
            prompt: format!(
                "Conversation:\n{history}\n\nFollow-up question: {}\n\nStandalone question:",
                out.query
            ),
            max_tokens: 200,
            temperature: 0.0,
        };
        run_step(generator, req, "query.compression", &mut out).await;
    }
    if settings.rewrite {
        let req = GenerateRequest {
            system: "Rewrite the user's question into a concise search query for a code and documentation \
                     search engine. Remove greetings and filler, keep every identifier, file name and technical \
                     term exactly. Reply with the query only."
                .into(),
            prompt: out.query.clone(),
            max_tokens: 120,
            temperature: 0.0,
        };
        run_step(generator, req, "query.rewrite", &mut out).await;
    }
    if settings.translation {
        let from = detect_language(&out.query);
        if from != settings.translate_to {
            let req = GenerateRequest {
                system: format!(
                    "Translate the search query into the language with ISO code `{}`. Keep identifiers, code and \
                     file paths unchanged. Reply with the translation only.",
                    settings.translate_to
                ),
                prompt: out.query.clone(),
                max_tokens: 200,
                temperature: 0.0,
            };
            run_step(generator, req, "query.translation", &mut out).await;
        }
    }
    out
}

async fn run_step(generator: &dyn Generator, req: GenerateRequest, module: &str, out: &mut TransformOutcome) {
    match generator.generate(&req).await {
        Ok(reply) => match clean_reply(&reply) {
            Some(q) => {
                out.query = q;
                out.applied.push(module.to_string());
            }
            None => {
                out.warnings.push(format!("{module} returned an empty reply; the previous query was kept"))
            }
        },
        Err(e) => out.warnings.push(format!("{module} failed ({e}); the previous query was kept")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::PortError;
    use crate::profile::Profile;
    use crate::testutil::block_on;
    use std::cell::RefCell;

    struct Scripted(RefCell<Vec<Result<String, PortError>>>, RefCell<Vec<GenerateRequest>>);

    #[async_trait::async_trait(?Send)]
    impl Generator for Scripted {
        fn name(&self) -> String {
            "scripted".into()
        }
        async fn generate(&self, request: &GenerateRequest) -> Result<String, PortError> {
            self.1.borrow_mut().push(request.clone());
            self.0.borrow_mut().remove(0)
        }
    }

    fn settings() -> TransformerSettings {
        Profile::balanced().query_transformers
    }

    fn turn(role: &str, content: &str) -> Turn {
        Turn { role: role.into(), content: content.into() }
    }

    #[test]
    fn detects_languages() {
        assert_eq!(detect_language("where is the retry logic"), "en");
        assert_eq!(detect_language("где логика повторов"), "ru");
        assert_eq!(detect_language("onde está a função de repetição"), "pt");
        assert_eq!(detect_language("重试逻辑在哪里"), "zh");
        assert_eq!(detect_language("getUserData"), "en");
        assert_eq!(detect_language("1234"), "en");
    }

    #[test]
    fn without_a_generator_everything_is_skipped_and_said() {
        let out = block_on(transform("где логика retry", &[turn("user", "hi")], &settings(), None));
        assert_eq!(out.query, "где логика retry");
        assert!(out.applied.is_empty());
        assert!(out.warnings[0].contains("compression, rewrite, translation"), "{:?}", out.warnings);
        assert!(out.warnings[1].contains("conversationContext"));
    }

    #[test]
    fn runs_compression_rewrite_translation_in_order() {
        let g = Scripted(
            RefCell::new(vec![
                Ok("как работает retry в клиенте?".into()),
                Ok("Query: retry клиент".into()),
                Ok("client retry".into()),
            ]),
            RefCell::new(Vec::new()),
        );
        let conv = [turn("user", "расскажи про клиент"), turn("assistant", "клиент делает запросы")];
        let out = block_on(transform("а retry?", &conv, &settings(), Some(&g)));
        assert_eq!(out.query, "client retry");
        assert_eq!(out.applied, ["query.compression", "query.rewrite", "query.translation"]);
        assert!(g.1.borrow()[0].prompt.contains("assistant: клиент делает запросы"));
    }

    #[test]
    fn translation_is_skipped_when_already_in_the_target_language_and_failures_keep_the_query() {
        let g = Scripted(
            RefCell::new(vec![Err(PortError::new("generator", "timeout"))]),
            RefCell::new(Vec::new()),
        );
        let out = block_on(transform("where is retry", &[], &settings(), Some(&g)));
        assert_eq!(out.query, "where is retry");
        assert!(out.applied.is_empty());
        assert_eq!(g.1.borrow().len(), 1, "only rewrite was attempted");
        assert!(out.warnings[0].contains("query.rewrite failed"));
    }

    #[test]
    fn history_is_bounded_from_the_most_recent_end() {
        let turns: Vec<Turn> =
            (0..100).map(|i| turn("user", &format!("message number {i} {}", "x".repeat(50)))).collect();
        let h = history_text(&turns, 64);
        assert!(h.chars().count() <= 64 * 4 + 2);
        assert!(h.contains("message number 99"));
        assert!(!h.contains("message number 0 "));
    }
}
