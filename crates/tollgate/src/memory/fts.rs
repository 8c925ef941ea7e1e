//! FTS5 queries from user text. Every word becomes a quoted FTS5 string, so user text never
//! becomes FTS5 syntax (column filters, `NEAR`, `^`, `*`) except in `boolean` mode, whose
//! grammar is checked here and rebuilt from its tokens.

use super::MemoryError;

/// How a full-text query reads its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FtsMode {
    /// Every word (stemmed), in any order.
    Match,
    /// Every word as a prefix.
    Prefix,
    /// The words in this order.
    Phrase,
    /// Words and quoted phrases with `AND`, `OR`, `NOT` and parentheses.
    Boolean,
}

impl FtsMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FtsMode::Match => "match",
            FtsMode::Prefix => "prefix",
            FtsMode::Phrase => "phrase",
            FtsMode::Boolean => "boolean",
        }
    }

    pub fn parse(text: &str) -> Option<FtsMode> {
        [
            FtsMode::Match,
            FtsMode::Prefix,
            FtsMode::Phrase,
            FtsMode::Boolean,
        ]
        .into_iter()
        .find(|mode| mode.as_str() == text)
    }
}

/// A built FTS5 `MATCH` expression, safe to bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsQuery(String);

/// Longest query text accepted.
const MAX_QUERY_BYTES: usize = 4096;

impl FtsQuery {
    /// `None` when the text has no word at all (nothing can match).
    pub fn build(field: &str, text: &str, mode: FtsMode) -> Result<Option<FtsQuery>, MemoryError> {
        if text.len() > MAX_QUERY_BYTES {
            return Err(MemoryError::TooLarge {
                field: field.to_string(),
                message: format!(
                    "the query is {} bytes, over the limit of {MAX_QUERY_BYTES}",
                    text.len()
                ),
            });
        }
        let built = match mode {
            FtsMode::Match => join(words(text).map(quote), " "),
            FtsMode::Prefix => join(words(text).map(|word| format!("{}*", quote(word))), " "),
            FtsMode::Phrase => {
                let words: Vec<&str> = words(text).collect();
                (!words.is_empty()).then(|| quote(&words.join(" ")))
            }
            FtsMode::Boolean => boolean(field, text)?,
        };
        Ok(built.map(FtsQuery))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The words of `text`: runs of letters, digits and `_` (what the tokenizer indexes).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
}

fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

fn join(parts: impl Iterator<Item = String>, separator: &str) -> Option<String> {
    let parts: Vec<String> = parts.collect();
    (!parts.is_empty()).then(|| parts.join(separator))
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Term(String),
    Op(&'static str),
    Open,
    Close,
}

/// Deepest parenthesis nesting a boolean query may have.
pub const MAX_DEPTH: usize = 32;

/// Parses `text` as `expr := seq ((AND|OR|NOT) seq)*`, `seq := term+ | (expr)`, `term := word |
/// "phrase"` (adjacent terms are FTS5's implicit AND, which FTS5 allows only between terms,
/// never beside a parenthesis) with at most [`MAX_DEPTH`] nested parentheses, and writes it
/// back with every word and phrase quoted. Errors name the character position (1-based).
fn boolean(field: &str, text: &str) -> Result<Option<String>, MemoryError> {
    let bad = |why: &str, byte: usize| {
        let at = text[..byte].chars().count() + 1;
        MemoryError::invalid(
            field,
            format!(
                "not a boolean query ({why} at character {at}): use words, \"quoted phrases\", AND, OR, NOT and parentheses, e.g. `auth AND (token OR session) NOT legacy`"
            ),
        )
    };
    let mut tokens: Vec<(usize, Token)> = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((idx, c)) = chars.next() {
        match c {
            '(' => tokens.push((idx, Token::Open)),
            ')' => tokens.push((idx, Token::Close)),
            '"' => {
                let rest = &text[idx + 1..];
                let end = rest
                    .find('"')
                    .ok_or_else(|| bad("an unclosed quote", idx))?;
                let phrase: Vec<&str> = words(&rest[..end]).collect();
                if phrase.is_empty() {
                    return Err(bad("an empty phrase", idx));
                }
                tokens.push((idx, Token::Term(quote(&phrase.join(" ")))));
                while chars.peek().is_some_and(|(at, _)| *at <= idx + end + 1) {
                    chars.next();
                }
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut end = idx + c.len_utf8();
                while let Some((at, next)) = chars.peek().copied() {
                    if next.is_alphanumeric() || next == '_' {
                        end = at + next.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                let word = &text[idx..end];
                tokens.push((
                    idx,
                    match word {
                        "AND" => Token::Op("AND"),
                        "OR" => Token::Op("OR"),
                        "NOT" => Token::Op("NOT"),
                        _ => Token::Term(quote(word)),
                    },
                ));
            }
            c if c.is_whitespace() => {}
            other => return Err(bad(&format!("`{other}` is not allowed"), idx)),
        }
    }
    if tokens.is_empty() {
        return Ok(None);
    }
    // Each position expects either an operand (a term or `(`) or what may follow one.
    let mut depth = 0usize;
    let mut expect_operand = true;
    let mut after_close = false;
    let mut out = Vec::with_capacity(tokens.len());
    for (at, token) in tokens {
        let beside = "a term beside a parenthesis (put AND, OR or NOT between them)";
        match (&token, expect_operand) {
            (Token::Term(_), false) if after_close => return Err(bad(beside, at)),
            (Token::Term(term), _) => {
                // After a term: FTS5's implicit AND.
                out.push(term.clone());
                expect_operand = false;
            }
            (Token::Open, false) => return Err(bad(beside, at)),
            (Token::Open, true) if depth == MAX_DEPTH => {
                return Err(bad(
                    &format!("parentheses nested deeper than {MAX_DEPTH}"),
                    at,
                ));
            }
            (Token::Open, true) => {
                out.push("(".to_string());
                depth += 1;
            }
            (Token::Close, false) if depth > 0 => {
                out.push(")".to_string());
                depth -= 1;
            }
            (Token::Close, _) => return Err(bad("unbalanced or empty parentheses", at)),
            (Token::Op(op), false) => {
                out.push((*op).to_string());
                expect_operand = true;
            }
            (Token::Op(op), true) => {
                return Err(bad(&format!("`{op}` needs a term before it"), at));
            }
        }
        after_close = token == Token::Close;
    }
    if expect_operand {
        return Err(bad("it ends with an operator", text.len()));
    }
    if depth != 0 {
        return Err(bad("unbalanced parentheses", text.len()));
    }
    Ok(Some(out.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str, mode: FtsMode) -> Option<String> {
        FtsQuery::build("query", text, mode)
            .unwrap()
            .map(|query| query.as_str().to_string())
    }

    #[test]
    fn user_text_is_quoted_in_every_mode_but_boolean() {
        assert_eq!(
            build("auth token: NEAR(x) ^y*", FtsMode::Match).as_deref(),
            Some(r#""auth" "token" "NEAR" "x" "y""#)
        );
        assert_eq!(
            build("auth", FtsMode::Prefix).as_deref(),
            Some(r#""auth"*"#)
        );
        assert_eq!(
            build("exact  \"phrase\" here", FtsMode::Phrase).as_deref(),
            Some(r#""exact phrase here""#)
        );
        assert_eq!(build("!!! ---", FtsMode::Match), None);
    }

    #[test]
    fn boolean_queries_are_checked_and_rebuilt() {
        assert_eq!(
            build(
                "auth AND (token OR \"user session\") NOT legacy",
                FtsMode::Boolean
            )
            .as_deref(),
            Some(r#""auth" AND ( "token" OR "user session" ) NOT "legacy""#)
        );
        for bad in [
            "AND auth",
            "auth OR",
            "(auth",
            "auth)",
            "()",
            "text:auth",
            "\"open",
            "a NEAR/2 b",
        ] {
            let err = FtsQuery::build("query", bad, FtsMode::Boolean).unwrap_err();
            assert_eq!(err.field(), Some("query"), "{bad}");
        }
    }

    /// What FTS5 itself rejects never reaches it: a term beside a parenthesis (no implicit
    /// AND there), `NEAR(...)`, nesting past the depth limit. The error names the position.
    #[test]
    fn boolean_queries_fts5_would_reject_are_refused_with_their_position() {
        let deep = format!("{}a{}", "(".repeat(600), ")".repeat(600));
        for (bad, at) in [
            ("canary (deploy)", 8),
            ("(canary) deploy", 10),
            ("NEAR(canary deploy)", 5),
            ("(a) (b)", 5),
            (deep.as_str(), MAX_DEPTH + 1),
        ] {
            let err = FtsQuery::build("query", bad, FtsMode::Boolean).unwrap_err();
            assert_eq!(err.field(), Some("query"), "{bad}");
            assert!(
                err.to_string().contains(&format!("at character {at}")),
                "{bad}: {err}"
            );
        }
        let nested = format!("{}a{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(build(&nested, FtsMode::Boolean).is_some());
        assert_eq!(
            build("canary deploy \"blue green\"", FtsMode::Boolean).as_deref(),
            Some(r#""canary" "deploy" "blue green""#)
        );
    }
}
