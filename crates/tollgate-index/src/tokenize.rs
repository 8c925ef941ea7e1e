//! The code-aware tokenizer shared by the lexical channel (as a tantivy tokenizer), the query
//! builder and the hashed embedder: identifiers are kept whole *and* split into their camelCase,
//! snake_case and digit parts, everything lowercased, a few stop words dropped.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The name under which [`CodeTokenizer`] is registered with tantivy.
pub(crate) const CODE_TOKENIZER: &str = "tollgate_code";

/// Words too common in code and prose to discriminate anything.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "if", "in", "into", "is", "it",
    "of", "on", "or", "that", "the", "this", "to", "was", "with",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Longest token kept: longer runs are data (hashes, base64), not identifiers.
const MAX_TOKEN_CHARS: usize = 64;

/// Calls `emit(token, byte_offset_of_its_word)` for every token of `text`: each identifier
/// (a run of alphanumerics and `_`) lowercased, then its parts when it has more than one.
pub(crate) fn for_each_token(text: &str, mut emit: impl FnMut(&str, usize, usize)) {
    let bytes = text.as_bytes();
    let mut lower = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if !(c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len()
            && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
        {
            i += 1;
        }
        let word = &text[start..i];
        let word = word.trim_matches('_');
        if word.is_empty() || word.len() > MAX_TOKEN_CHARS {
            continue;
        }
        let word_start =
            start + (text[start..i].len() - text[start..i].trim_start_matches('_').len());
        lower.clear();
        lower.extend(word.chars().flat_map(char::to_lowercase));
        let mut parts = 0;
        split_parts(word, |_| parts += 1);
        if parts > 1 {
            emit(&lower, word_start, word_start + word.len());
            split_parts(word, |part| {
                let part_lower = part.to_lowercase();
                if !is_stop_word(&part_lower) {
                    emit(&part_lower, word_start, word_start + word.len());
                }
            });
        } else if !is_stop_word(&lower) {
            emit(&lower, word_start, word_start + word.len());
        }
    }
}

/// Splits an identifier at `_`, lower→upper case changes (`fooBar`), acronym ends
/// (`HTTPServer` → `HTTP`, `Server`) and letter/digit changes.
fn split_parts<'a>(word: &'a str, mut part: impl FnMut(&'a str)) {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start = 0;
    let emit = |from: usize, to: usize, part: &mut dyn FnMut(&'a str)| {
        if to > from {
            part(&word[from..to]);
        }
    };
    for k in 0..chars.len() {
        let (pos, c) = chars[k];
        if c == '_' {
            emit(start, pos, &mut part);
            start = pos + 1;
            continue;
        }
        if k == 0 || pos == start {
            continue;
        }
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_alphabetic() != c.is_alphabetic() && prev != '_')
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
        if boundary {
            emit(start, pos, &mut part);
            start = pos;
        }
    }
    emit(start, word.len(), &mut part);
}

/// The tokens of `text`, in order (duplicates kept).
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |token, _, _| out.push(token.to_string()));
    out
}

/// [`for_each_token`] as a tantivy tokenizer.
#[derive(Debug, Clone, Default)]
pub(crate) struct CodeTokenizer;

#[derive(Debug)]
pub(crate) struct CodeTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens = Vec::new();
        for_each_token(text, |text, from, to| {
            let position = tokens.len();
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: text.to_string(),
                position_length: 1,
            });
        });
        CodeTokenStream { tokens, next: 0 }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_kept_whole_and_split() {
        assert_eq!(
            tokens("parseHTTPResponse(snake_case_name, v2Api) the"),
            [
                "parsehttpresponse",
                "parse",
                "http",
                "response",
                "snake_case_name",
                "snake",
                "case",
                "name",
                "v2api",
                "v",
                "2",
                "api"
            ]
        );
        assert_eq!(tokens("plain -- words"), ["plain", "words"]);
        assert!(
            STOP_WORDS.windows(2).all(|w| w[0] < w[1]),
            "stop list must stay sorted"
        );
    }
}
