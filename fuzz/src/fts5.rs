//! A checker for SQLite FTS5's full-text query syntax (sqlite.org/fts5.html, "Full-text Query
//! Syntax"), used to prove the query builder's output is a valid `MATCH` expression. No SQLite is
//! linked anywhere in the workspace; D1 runs the same grammar.
//!
//! ```text
//! phrase    := string [*] | phrase + phrase
//! neargroup := NEAR ( phrase phrase ... [, N] )
//! query     := [ [-] colspec : ] [^] phrase | [ [-] colspec : ] neargroup
//!            | [ [-] colspec : ] ( query ) | query AND query | query OR query
//!            | query NOT query | query query          (implicit AND)
//! colspec   := colname | { colname ... }
//! ```
//! A string is `"..."` (a `"` inside doubled) or a bareword: ASCII letters, digits, `_`, the
//! substitute char (0x1A) and any non-ASCII char. `AND`, `OR`, `NOT` (upper case) are operators,
//! `NEAR` followed by `(` opens a NEAR group.

/// What a valid query is made of, for the builder's stricter checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every string, in order: its text (unescaped) and whether it was quoted.
    pub strings: Vec<(String, bool)>,
    /// The operators used (`AND`, `OR`, `NOT`, `NEAR`, `+`, `*`, `^`, `:`, `(`, implicit `AND` as
    /// a space).
    pub operators: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Str(String, bool),
    And,
    Or,
    Not,
    Near,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Colon,
    Comma,
    Plus,
    Star,
    Caret,
    Minus,
}

fn bareword_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\u{1a}' || !c.is_ascii()
}

fn lex(q: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated string".into()),
                        Some('"') if chars.get(i + 1) == Some(&'"') => {
                            s.push('"');
                            i += 2;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push(Tok::Str(s, true));
            }
            '(' | ')' | '{' | '}' | ':' | ',' | '+' | '*' | '^' | '-' => {
                out.push(match c {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    '{' => Tok::LBrace,
                    '}' => Tok::RBrace,
                    ':' => Tok::Colon,
                    ',' => Tok::Comma,
                    '+' => Tok::Plus,
                    '*' => Tok::Star,
                    '^' => Tok::Caret,
                    _ => Tok::Minus,
                });
                i += 1;
            }
            c if bareword_char(c) => {
                let start = i;
                while i < chars.len() && bareword_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push(match word.as_str() {
                    "AND" => Tok::And,
                    "OR" => Tok::Or,
                    "NOT" => Tok::Not,
                    "NEAR" if chars.get(i) == Some(&'(') => Tok::Near,
                    _ => Tok::Str(word, false),
                });
            }
            other => return Err(format!("character {other:?} is not allowed outside a string")),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    parsed: Parsed,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn op(&mut self, name: &str) {
        self.parsed.operators.push(name.to_string());
    }

    fn expect(&mut self, t: Tok) -> Result<(), String> {
        if self.eat(&t) {
            Ok(())
        } else {
            Err(format!("expected {t:?} at token {}, found {:?}", self.at, self.peek()))
        }
    }

    fn string(&mut self) -> Result<(), String> {
        match self.peek().cloned() {
            Some(Tok::Str(s, quoted)) => {
                self.at += 1;
                self.parsed.strings.push((s, quoted));
                Ok(())
            }
            other => Err(format!("expected a string at token {}, found {other:?}", self.at)),
        }
    }

    /// `string [*] (+ string [*])*`
    fn phrase(&mut self) -> Result<(), String> {
        self.string()?;
        if self.eat(&Tok::Star) {
            self.op("*");
        }
        while self.eat(&Tok::Plus) {
            self.op("+");
            self.string()?;
            if self.eat(&Tok::Star) {
                self.op("*");
            }
        }
        Ok(())
    }

    fn starts_primary(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::Str(..) | Tok::LParen | Tok::Near | Tok::LBrace | Tok::Minus | Tok::Caret)
        )
    }

    /// An optional column filter, then a phrase, a NEAR group or a parenthesized query.
    fn primary(&mut self) -> Result<(), String> {
        let colspec_ahead = matches!(
            (self.peek(), self.toks.get(self.at + 1)),
            (Some(Tok::Minus | Tok::LBrace), _) | (Some(Tok::Str(_, false)), Some(Tok::Colon))
        );
        if colspec_ahead {
            self.eat(&Tok::Minus);
            if self.eat(&Tok::LBrace) {
                self.string()?;
                while !self.eat(&Tok::RBrace) {
                    self.string()?;
                }
            } else {
                self.string()?;
            }
            self.expect(Tok::Colon)?;
            self.op(":");
        }
        if self.eat(&Tok::Caret) {
            self.op("^");
            return self.phrase();
        }
        if self.eat(&Tok::LParen) {
            self.op("(");
            self.or_query()?;
            return self.expect(Tok::RParen);
        }
        if self.eat(&Tok::Near) {
            self.op("NEAR");
            self.expect(Tok::LParen)?;
            self.phrase()?;
            while matches!(self.peek(), Some(Tok::Str(..))) {
                self.phrase()?;
            }
            if self.eat(&Tok::Comma) {
                match self.peek() {
                    Some(Tok::Str(n, false)) if n.bytes().all(|b| b.is_ascii_digit()) => self.at += 1,
                    other => return Err(format!("NEAR distance must be a number, found {other:?}")),
                }
            }
            return self.expect(Tok::RParen);
        }
        self.phrase()
    }

    // FTS5 precedence, tightest first: NOT, AND (explicit or implicit), OR.
    fn not_query(&mut self) -> Result<(), String> {
        self.primary()?;
        while self.eat(&Tok::Not) {
            self.op("NOT");
            self.primary()?;
        }
        Ok(())
    }

    fn and_query(&mut self) -> Result<(), String> {
        self.not_query()?;
        loop {
            if self.eat(&Tok::And) {
                self.op("AND");
            } else if self.starts_primary() {
                self.op(" ");
            } else {
                return Ok(());
            }
            self.not_query()?;
        }
    }

    fn or_query(&mut self) -> Result<(), String> {
        self.and_query()?;
        while self.eat(&Tok::Or) {
            self.op("OR");
            self.and_query()?;
        }
        Ok(())
    }
}

/// Parse `query`; `Err` says why it is not a valid FTS5 query.
pub fn parse(query: &str) -> Result<Parsed, String> {
    let toks = lex(query)?;
    if toks.is_empty() {
        return Err("empty query".into());
    }
    let mut p = Parser { toks, at: 0, parsed: Parsed::default() };
    p.or_query()?;
    if p.at != p.toks.len() {
        return Err(format!("unexpected {:?} at token {}", p.toks[p.at], p.at));
    }
    Ok(p.parsed)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn accepts_the_documented_query_forms() {
        for q in [
            "one",
            "\"one two\"",
            "\"say \"\"hi\"\"\"",
            "one*",
            "\"one\" OR \"two\"*",
            "one two",
            "one + two",
            "^one",
            "a AND b OR c NOT d",
            "(a OR b) c",
            "NEAR(a b c, 10)",
            "NEAR(a b)",
            "title: one",
            "-title: one",
            "{title body}: one",
            "café",
        ] {
            assert!(parse(q).is_ok(), "{q:?}: {:?}", parse(q));
        }
    }

    #[test]
    fn rejects_malformed_queries() {
        for q in [
            "",
            "   ",
            "\"unterminated",
            "a OR",
            "OR a",
            "(a",
            "a)",
            "NEAR(",
            "NEAR(a, x)",
            "a AND AND b",
            "a: ",
            "1=1",
            "a;b",
            "'a'",
            "a -",
            "*",
            "a +",
            "{a: b",
        ] {
            assert!(parse(q).is_err(), "{q:?} was accepted: {:?}", parse(q));
        }
    }

    #[test]
    fn reports_quoting_and_operators() {
        let p = parse("\"get\" OR pars*").expect("valid");
        assert_eq!(p.strings, [("get".to_string(), true), ("pars".to_string(), false)]);
        assert_eq!(p.operators, ["OR", "*"]);
    }
}
