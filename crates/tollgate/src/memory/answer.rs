//! Answers from retrieved context (seed 000's `context_answer`): what was found in the code
//! index and the knowledge store, packed into a token budget as fenced blocks (secrets
//! scrubbed, marked as data), the prompt that asks a model for an answer with citations, and the
//! shape those citations must have. Checking that a citation exists needs the workspace and the
//! store, so `api::answer` does that.

use serde_json::{Value, json};

use crate::llm::{UNTRUSTED_DATA_RULE, estimate_tokens, fence, fence_file};

/// What the model is told. Trusted text only.
pub const ANSWER_SYSTEM: &str = "You answer questions about a software repository using only \
the context given: numbered code lines and memories (notes kept by the team and its agents). \
Cite what supports each claim: code by `path`, `start_line` and `end_line` exactly as the \
context shows them, memories by `memory_id`. Cite nothing you were not shown. When the context \
does not answer the question, say so in `answer` and cite nothing.";

/// One piece of retrieved context.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextItem {
    Code {
        path: String,
        start_line: usize,
        end_line: usize,
        text: String,
        relevance: f64,
    },
    Memory {
        id: i64,
        text: String,
        relevance: f64,
    },
}

/// How items are laid out in the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackMode {
    /// Best first, each item on its own.
    Pack,
    /// The same choice, then code chunks of one file that touch or overlap stitched into one
    /// span, in file and line order (fewer, longer blocks the model reads in order).
    Stitch,
}

impl PackMode {
    pub fn parse(text: &str) -> Option<PackMode> {
        match text {
            "pack" => Some(PackMode::Pack),
            "stitch" => Some(PackMode::Stitch),
            _ => None,
        }
    }
}

/// The context that fit: the items chosen and their fenced blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    pub items: Vec<ContextItem>,
    pub prompt_context: String,
    /// Estimated tokens of the blocks.
    pub n_tokens: usize,
}

/// Takes `items` (best first) while their blocks fit `budget_tokens`; an item too big for
/// what is left is skipped, so a smaller one after it may still fit.
pub fn pack(items: Vec<ContextItem>, budget_tokens: usize, mode: PackMode) -> Packed {
    let mut chosen: Vec<ContextItem> = Vec::new();
    let mut n_tokens = 0;
    for item in items {
        let cost = estimate_tokens(&block(&item));
        if n_tokens + cost <= budget_tokens {
            n_tokens += cost;
            chosen.push(item);
        }
    }
    if mode == PackMode::Stitch {
        chosen = stitch(chosen);
    }
    let blocks: Vec<String> = chosen.iter().map(block).collect();
    Packed {
        n_tokens: blocks.iter().map(|block| estimate_tokens(block)).sum(),
        prompt_context: blocks.concat(),
        items: chosen,
    }
}

/// The user message: the question and the context, each fenced.
pub fn answer_prompt(questions: &[String], packed: &Packed) -> String {
    let mut out = String::from("Question:\n");
    out.push_str(&fence("question", &questions.join("\n")));
    out.push_str("\nContext:\n");
    if packed.items.is_empty() {
        out.push_str("(nothing relevant was found)\n");
    }
    out.push_str(&packed.prompt_context);
    out.push_str("\nAnswer the question from this context, with citations. ");
    out.push_str(UNTRUSTED_DATA_RULE);
    out
}

/// The JSON Schema of the model's answer.
pub fn answer_schema() -> Value {
    json!({
        "type": "object",
        "required": ["answer", "citations"],
        "additionalProperties": false,
        "properties": {
            "answer": {"type": "string"},
            "citations": {"type": "array", "maxItems": 50, "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "memory_id": {"type": "integer"}
                }
            }}
        }
    })
}

/// One item as the model sees it: code with its line numbers, a memory with its id.
fn block(item: &ContextItem) -> String {
    match item {
        ContextItem::Code {
            path,
            start_line,
            text,
            ..
        } => {
            let numbered: String = text
                .lines()
                .enumerate()
                .map(|(idx, line)| format!("{:>5}| {line}\n", start_line + idx))
                .collect();
            fence_file("code", path, &numbered)
        }
        ContextItem::Memory { id, text, .. } => {
            fence("memory", &format!("memory_id: {id}\n{text}"))
        }
    }
}

/// Code chunks of one file that touch or overlap become one; memories keep their place after
/// the code. Text of a chunk that a previous one already covers is not repeated.
fn stitch(items: Vec<ContextItem>) -> Vec<ContextItem> {
    let (mut code, memories): (Vec<ContextItem>, Vec<ContextItem>) = items
        .into_iter()
        .partition(|item| matches!(item, ContextItem::Code { .. }));
    code.sort_by(|a, b| match (a, b) {
        (
            ContextItem::Code {
                path: pa,
                start_line: sa,
                ..
            },
            ContextItem::Code {
                path: pb,
                start_line: sb,
                ..
            },
        ) => pa.cmp(pb).then(sa.cmp(sb)),
        _ => std::cmp::Ordering::Equal,
    });
    let mut out: Vec<ContextItem> = Vec::new();
    for item in code {
        let ContextItem::Code {
            path,
            start_line,
            end_line,
            text,
            relevance,
        } = item
        else {
            continue;
        };
        if let Some(ContextItem::Code {
            path: last_path,
            end_line: last_end,
            text: last_text,
            relevance: last_relevance,
            ..
        }) = out.last_mut()
            && *last_path == path
            && start_line <= *last_end + 1
        {
            let skip = (*last_end + 1).saturating_sub(start_line);
            for line in text.lines().skip(skip) {
                last_text.push_str(line);
                last_text.push('\n');
            }
            *last_end = (*last_end).max(end_line);
            *last_relevance = last_relevance.max(relevance);
            continue;
        }
        let mut text = text;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        out.push(ContextItem::Code {
            path,
            start_line,
            end_line,
            text,
            relevance,
        });
    }
    out.extend(memories);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(path: &str, start: usize, lines: &[&str]) -> ContextItem {
        ContextItem::Code {
            path: path.to_string(),
            start_line: start,
            end_line: start + lines.len() - 1,
            text: lines.join("\n"),
            relevance: 0.5,
        }
    }

    #[test]
    fn packing_keeps_the_budget_and_stitching_joins_touching_chunks() {
        let items = vec![
            code("b.rs", 10, &["fn b() {", "}"]),
            ContextItem::Memory {
                id: 7,
                text: "x".repeat(4000),
                relevance: 0.4,
            },
            code("a.rs", 3, &["fn a() {", "    1", "}"]),
            code("a.rs", 5, &["}", "fn c() {}"]),
        ];
        let packed = pack(items.clone(), 200, PackMode::Pack);
        // The big memory does not fit; the smaller code after it does.
        assert_eq!(packed.items.len(), 3);
        assert!(packed.n_tokens <= 200);
        assert!(packed.prompt_context.contains("    3| fn a() {"));
        let stitched = pack(items, 200, PackMode::Stitch);
        assert_eq!(stitched.items.len(), 2, "{:?}", stitched.items);
        let ContextItem::Code {
            path,
            start_line,
            end_line,
            text,
            ..
        } = &stitched.items[0]
        else {
            panic!("code first")
        };
        assert_eq!((path.as_str(), *start_line, *end_line), ("a.rs", 3, 6));
        assert_eq!(text, "fn a() {\n    1\n}\nfn c() {}\n");
        assert!(stitched.prompt_context.contains("    6| fn c() {}"));
    }

    #[test]
    fn the_prompt_fences_the_question_and_the_context() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let packed = pack(
            vec![ContextItem::Memory {
                id: 3,
                text: format!("deploy key {token}"),
                relevance: 1.0,
            }],
            1000,
            PackMode::Pack,
        );
        let prompt = answer_prompt(&[format!("why {token}?")], &packed);
        assert!(!prompt.contains(&token), "{prompt}");
        let outside = crate::llm::outside_fences(&prompt);
        assert!(
            !outside.contains("deploy key") && !outside.contains("why"),
            "{outside}"
        );
        assert!(prompt.contains("memory_id: 3"));
    }
}
