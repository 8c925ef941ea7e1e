//! The code-aware tokenizer shared by the lexical channel (as a tantivy tokenizer), the query
//! builder and the hashed embedder: identifiers are kept whole *and* split into their camelCase,
//! snake_case and digit parts, everything lowercased, a few stop words dropped.

#[cfg(feature = "engine")]
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

#[cfg(feature = "engine")]
/// The name under which [`CodeTokenizer`] is registered with tantivy.
pub(crate) const CODE_TOKENIZER: &str = "tollgate_code";

/// Words too common in code and prose to discriminate anything. A `match` on the string
/// compiles to a switch on the length and a compare (a binary search over a list was 2 % of
/// an index build: every short identifier part is checked).
fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "for"
            | "from"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "of"
            | "on"
            | "or"
            | "that"
            | "the"
            | "this"
            | "to"
            | "was"
            | "with"
    )
}

/// Longest token kept: longer runs are data (hashes, base64), not identifiers.
const MAX_TOKEN_CHARS: usize = 64;

/// Calls `emit(token, byte_offset_of_its_word)` for every token of `text`: each identifier
/// (a run of alphanumerics and `_`) lowercased, then its parts when it has more than one.
pub(crate) fn for_each_token(text: &str, mut emit: impl FnMut(&str, usize, usize)) {
    let bytes = text.as_bytes();
    let mut lower = String::new();
    let mut parts: Vec<(usize, usize)> = Vec::new();
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
        let word_end = word_start + word.len();
        lower.clear();
        if word.is_ascii() {
            // Most code: lowercase in place and cut parts from it, no allocation per token.
            lower.push_str(word);
            lower.make_ascii_lowercase();
            parts.clear();
            split_ascii_parts(word.as_bytes(), |from, to| parts.push((from, to)));
            if parts.len() > 1 {
                emit(&lower, word_start, word_end);
                for &(from, to) in &parts {
                    let part = &lower[from..to];
                    if !is_stop_word(part) {
                        emit(part, word_start, word_end);
                    }
                }
            } else if !is_stop_word(&lower) {
                emit(&lower, word_start, word_end);
            }
            continue;
        }
        lower.extend(word.chars().flat_map(char::to_lowercase));
        let mut n_parts = 0;
        split_parts(word, |_| n_parts += 1);
        if n_parts > 1 {
            emit(&lower, word_start, word_end);
            split_parts(word, |part| {
                let part_lower = part.to_lowercase();
                if !is_stop_word(&part_lower) {
                    emit(&part_lower, word_start, word_end);
                }
            });
        } else if !is_stop_word(&lower) {
            emit(&lower, word_start, word_end);
        }
    }
}

/// [`split_parts`] for ASCII words, as byte ranges (the same boundaries).
fn split_ascii_parts(word: &[u8], mut part: impl FnMut(usize, usize)) {
    let mut start = 0;
    let mut emit = |from: usize, to: usize| {
        if to > from {
            part(from, to);
        }
    };
    for k in 0..word.len() {
        let c = word[k];
        if c == b'_' {
            emit(start, k);
            start = k + 1;
            continue;
        }
        if k == 0 || k == start {
            continue;
        }
        let prev = word[k - 1];
        let next = word.get(k + 1).copied();
        let boundary = (prev.is_ascii_lowercase() && c.is_ascii_uppercase())
            || (prev.is_ascii_alphabetic() != c.is_ascii_alphabetic() && prev != b'_')
            || (prev.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && next.is_some_and(|n| n.is_ascii_lowercase()));
        if boundary {
            emit(start, k);
            start = k;
        }
    }
    emit(start, word.len());
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

/// The tokens of `text`, in order (duplicates kept): identifiers lowercased whole and split
/// into their camelCase/snake_case parts, stop words dropped.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |token, _, _| out.push(token.to_string()));
    out
}

#[cfg(feature = "engine")]
/// [`for_each_token`] as a tantivy tokenizer.
#[derive(Debug, Clone, Default)]
pub(crate) struct CodeTokenizer;

#[cfg(feature = "engine")]
/// The tokens of one text: their texts in one buffer, handed out through one reused
/// [`Token`] (tantivy tokenizes every chunk; a `String` per token was a large share of it).
#[derive(Debug)]
pub(crate) struct CodeTokenStream {
    texts: String,
    /// Per token: its end in `texts`, and its word's byte range in the source.
    spans: Vec<(usize, usize, usize)>,
    next: usize,
    token: Token,
}

#[cfg(feature = "engine")]
impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut texts = String::new();
        let mut spans = Vec::new();
        for_each_token(text, |token, from, to| {
            texts.push_str(token);
            spans.push((texts.len(), from, to));
        });
        CodeTokenStream {
            texts,
            spans,
            next: 0,
            token: Token::default(),
        }
    }
}

#[cfg(feature = "engine")]
impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        let Some(&(end, from, to)) = self.spans.get(self.next) else {
            return false;
        };
        let start = match self.next {
            0 => 0,
            n => self.spans[n - 1].0,
        };
        self.token.text.clear();
        self.token.text.push_str(&self.texts[start..end]);
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.next;
        self.token.position_length = 1;
        self.next += 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(all(test, feature = "engine"))]
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
        assert_eq!(tokens("the parser of a file"), ["parser", "file"]);
        assert_eq!(tokens("TheParser"), ["theparser", "parser"]);
        assert!(!is_stop_word("then") && !is_stop_word("") && is_stop_word("with"));
    }

    #[test]
    fn the_ascii_fast_path_splits_exactly_like_the_general_one() {
        // Deterministic pseudo-random identifiers over the characters that matter.
        let alphabet = b"aZbY_09xXHTPs";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut word = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for k in 0..(1 + state % 12) {
                word.push(alphabet[((state >> (k * 4)) % alphabet.len() as u64) as usize] as char);
            }
            let mut general = Vec::new();
            split_parts(&word, |p| general.push(p.to_string()));
            let mut fast = Vec::new();
            split_ascii_parts(word.as_bytes(), |from, to| {
                fast.push(word[from..to].to_string())
            });
            assert_eq!(general, fast, "{word}");
        }
    }

    #[test]
    fn the_token_stream_hands_out_every_token_with_its_offsets() {
        let mut tokenizer = CodeTokenizer;
        let mut stream = tokenizer.token_stream("fooBar baz_qux é_Ü");
        let mut seen = Vec::new();
        while stream.advance() {
            let t = stream.token();
            seen.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        let expected: Vec<(String, usize, usize, usize)> = [
            ("foobar", 0, 6),
            ("foo", 0, 6),
            ("bar", 0, 6),
            ("baz_qux", 7, 14),
            ("baz", 7, 14),
            ("qux", 7, 14),
            ("é_ü", 15, 20),
            ("é", 15, 20),
            ("ü", 15, 20),
        ]
        .iter()
        .enumerate()
        .map(|(i, (t, f, e))| (t.to_string(), *f, *e, i))
        .collect();
        assert_eq!(seen, expected);
    }
}
