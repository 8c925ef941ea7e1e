//! Seed 000's structured memories (`memory_store` / `memory_find`): a kind, a language, a
//! path, a topic, a priority and code kept as keys of an ordinary entry's metadata, in the
//! [`NOTES_THREAD`] thread. Metadata rather than columns: every filter of the store (applied
//! before the cut in all three searches) and every seed-002 tool sees them unchanged, and a
//! note needs no second write path.

use super::MemoryError;

/// The thread `memory_store` writes to.
pub const NOTES_THREAD: &str = "memory";
/// The metadata keys a note's fields live under.
pub const KIND_KEY: &str = "kind";
pub const LANGUAGE_KEY: &str = "language";
pub const PATH_KEY: &str = "path";
pub const TOPIC_KEY: &str = "topic";
pub const PRIORITY_KEY: &str = "priority";
/// Characters around a match a highlight keeps on each side.
const HIGHLIGHT_CONTEXT_CHARS: usize = 30;
/// Highlights per hit.
const MAX_HIGHLIGHTS: usize = 3;

/// What a note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    Snippet,
    Explanation,
    Pattern,
    Example,
    Reference,
}

impl NoteKind {
    pub const ALL: [NoteKind; 5] = [
        NoteKind::Snippet,
        NoteKind::Explanation,
        NoteKind::Pattern,
        NoteKind::Example,
        NoteKind::Reference,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Snippet => "snippet",
            NoteKind::Explanation => "explanation",
            NoteKind::Pattern => "pattern",
            NoteKind::Example => "example",
            NoteKind::Reference => "reference",
        }
    }

    /// `field` names the argument in the error.
    pub fn parse(field: &str, text: &str) -> Result<NoteKind, MemoryError> {
        let lower = text.trim().to_ascii_lowercase();
        NoteKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == lower)
            .ok_or_else(|| {
                MemoryError::invalid(
                    field,
                    format!(
                        "`{text}` is not a kind: {}",
                        NoteKind::ALL.map(NoteKind::as_str).join(", ")
                    ),
                )
            })
    }
}

/// An importance from 1 to 10 (higher is more important).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Priority(u8);

impl Priority {
    pub fn new(field: &str, value: i64) -> Result<Priority, MemoryError> {
        u8::try_from(value)
            .ok()
            .filter(|value| (1..=10).contains(value))
            .map(Priority)
            .ok_or_else(|| {
                MemoryError::invalid(field, format!("a priority is 1 to 10, got {value}"))
            })
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

/// Fragments of `text` around the words of `query`, each match marked `<<word>>` (seed 000's
/// highlights): at most [`MAX_HIGHLIGHTS`], in text order, overlapping ones merged.
pub fn highlights(text: &str, query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    // Matches as char ranges: a word of the text that starts with a query word (so `token`
    // marks `tokens`, as the store's stemmed full-text search would find it).
    let mut matches: Vec<(usize, usize)> = Vec::new();
    let mut idx = 0;
    while idx < lower.len() {
        if !lower[idx].is_alphanumeric() || (idx > 0 && lower[idx - 1].is_alphanumeric()) {
            idx += 1;
            continue;
        }
        let end = (idx..lower.len())
            .find(|at| !lower[*at].is_alphanumeric())
            .unwrap_or(lower.len());
        let word: String = lower[idx..end].iter().collect();
        if words
            .iter()
            .any(|query_word| word.starts_with(query_word.as_str()))
        {
            matches.push((idx, end));
        }
        idx = end;
    }
    // (from, to, marks) of each fragment, in chars.
    type Fragment = (usize, usize, Vec<(usize, usize)>);
    let mut fragments: Vec<Fragment> = Vec::new();
    for (start, end) in matches {
        // Fragments start and end on whole words.
        let mut from = start.saturating_sub(HIGHLIGHT_CONTEXT_CHARS);
        while from < start && from > 0 && !chars[from - 1].is_whitespace() {
            from += 1;
        }
        let mut to = (end + HIGHLIGHT_CONTEXT_CHARS).min(chars.len());
        while to > end && to < chars.len() && !chars[to].is_whitespace() {
            to -= 1;
        }
        match fragments.last_mut() {
            Some(last) if from <= last.1 => {
                last.1 = to;
                last.2.push((start, end));
            }
            _ => {
                if fragments.len() == MAX_HIGHLIGHTS {
                    break;
                }
                fragments.push((from, to, vec![(start, end)]));
            }
        }
    }
    fragments
        .into_iter()
        .map(|(from, to, marks)| {
            let mut out = String::new();
            let mut at = from;
            for (start, end) in marks {
                out.extend(&chars[at..start]);
                out.push_str("<<");
                out.extend(&chars[start..end]);
                out.push_str(">>");
                at = end;
            }
            out.extend(&chars[at..to]);
            out.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_mark_words_in_short_fragments() {
        let text = "Efficient Python pattern for processing large files using generators to \
                    minimize memory usage; generators stream lines.";
        assert_eq!(
            highlights(text, "efficient memory"),
            [
                "<<Efficient>> Python pattern for processing",
                "using generators to minimize <<memory>> usage; generators stream"
            ]
        );
        // Prefixes match (stemmed search finds `generators` for `generator`), fragments merge.
        let found = highlights(text, "generator");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].matches("<<generators>>").count(), 2, "{found:?}");
        assert!(highlights(text, "a !").is_empty());
        assert!(highlights("ünïcode wörds", "wö").contains(&"ünïcode <<wörds>>".to_string()));
    }

    #[test]
    fn kinds_and_priorities_are_checked() {
        assert_eq!(
            NoteKind::parse("kind", "Pattern").unwrap(),
            NoteKind::Pattern
        );
        let err = NoteKind::parse("metadata.kind", "recipe").unwrap_err();
        assert_eq!(err.field(), Some("metadata.kind"));
        assert!(err.to_string().contains("snippet, explanation"), "{err}");
        assert_eq!(Priority::new("priority", 10).unwrap().get(), 10);
        for bad in [0, 11, -3, 300] {
            assert!(Priority::new("priority", bad).is_err(), "{bad}");
        }
    }
}
