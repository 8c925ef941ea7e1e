//! Seed 000's `context_answer`: an answer to a question through the configured model, from the
//! code index (the hybrid search the context tools use) and the knowledge store (its hybrid
//! search), packed into the context budget, scrubbed and fenced (`memory::answer`). Every
//! citation the model gives is checked: a code citation must name lines of a file inside the
//! workspace, a memory citation an entry of the store; the others are dropped and counted.

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ApiError;
use super::context::request::{CodebaseRetrievalRequest, GetFileRequest, RetrievalOptions};
use super::context::{codebase_retrieval, get_file};
use crate::llm::{JsonRequest, LlmClient, LlmError};
use crate::memory::{
    ANSWER_SYSTEM, ContextItem, Filter, FtsMode, FtsQuery, Memory, PackMode, Page, SearchArm,
    answer_prompt, answer_schema, pack,
};
use crate::workspace::IndexedWorkspace;

/// Context tokens when the caller gives no budget.
pub const DEFAULT_BUDGET_TOKENS: u32 = 4000;
/// Code chunks and memories retrieved per question, before packing.
const RETRIEVED_PER_SOURCE: usize = 12;
/// Questions per call.
const MAX_QUESTIONS: usize = 5;
/// Characters of a cited memory shown as its snippet.
const MEMORY_SNIPPET_CHARS: usize = 240;
/// Lines of cited code shown as its snippet.
const CODE_SNIPPET_LINES: usize = 40;

impl From<LlmError> for ApiError {
    fn from(err: LlmError) -> ApiError {
        ApiError::new(err.code(), err.to_string())
    }
}

/// A question, or several answered together.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(inline)]
#[serde(untagged)]
pub enum Questions {
    One(String),
    Many(Vec<String>),
}

/// `context_answer`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextAnswerRequest {
    /// Question(s).
    pub query: Questions,
    /// Default 4000.
    #[serde(default)]
    pub budget_tokens: Option<u32>,
    /// Cited text (default true).
    #[serde(default = "yes")]
    pub include_snippet: bool,
    /// Answer tokens.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// stitch (default) or pack.
    #[serde(default = "default_mode")]
    pub mode: String,
}

fn yes() -> bool {
    true
}
fn default_mode() -> String {
    "stitch".to_string()
}

/// A citation that was checked: code lines (`path`, lines) or a memory (`memory_id`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Citation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_id: Option<i64>,
    /// The cited text (secrets masked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// The retrieval score of the context it cites (0 when the model cited beyond it).
    pub relevance: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContextAnswerResponse {
    pub ok: bool,
    pub answer: String,
    pub citations: Vec<Citation>,
    pub query: Vec<String>,
    pub used_context_tokens: usize,
    pub generation_time_ms: u64,
    /// The model that answered.
    pub decoder_used: String,
    /// Citations dropped because what they name does not exist.
    pub dropped_citations: usize,
}

/// `context_answer`. `llm` is the configured model; without one the answer is
/// `LLM_NOT_CONFIGURED` (nothing is retrieved).
pub fn context_answer(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
    llm: Option<&LlmClient>,
    request: &ContextAnswerRequest,
) -> Result<ContextAnswerResponse, ApiError> {
    let questions = questions(&request.query)?;
    let budget = request.budget_tokens.unwrap_or(DEFAULT_BUDGET_TOKENS);
    if !(200..=100_000).contains(&budget) {
        return Err(ApiError::invalid(
            "budget_tokens",
            format!("budget_tokens must be between 200 and 100000, got {budget}"),
        ));
    }
    if let Some(max_tokens) = request.max_tokens
        && !(16..=8192).contains(&max_tokens)
    {
        return Err(ApiError::invalid(
            "max_tokens",
            format!("max_tokens must be between 16 and 8192, got {max_tokens}"),
        ));
    }
    let mode = PackMode::parse(&request.mode).ok_or_else(|| {
        ApiError::invalid(
            "mode",
            format!("`{}` is not a mode: stitch or pack", request.mode),
        )
    })?;
    let llm = llm.ok_or_else(|| ApiError::from(LlmError::NotConfigured))?;
    let items = retrieve(workspace, memory, &questions)?;
    let packed = pack(items, budget as usize, mode);
    let user = answer_prompt(&questions, &packed);
    let schema = answer_schema();
    let mut call = JsonRequest::new(ANSWER_SYSTEM, &user, "context_answer", &schema);
    call.max_output_tokens = request.max_tokens;
    // A timed-out or cancelled call stops its model (a `command` model's process group).
    call.stop = Some(workspace.control().clone());
    let started = Instant::now();
    let response = llm.complete_json(&call)?;
    let generation_time_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let answer = response.value["answer"].as_str().unwrap_or_default();
    let mut citations = Vec::new();
    let mut dropped = 0;
    for raw in response.value["citations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        match check_citation(
            workspace,
            memory,
            &packed.items,
            raw,
            request.include_snippet,
        ) {
            Some(citation) => citations.push(citation),
            None => dropped += 1,
        }
    }
    Ok(ContextAnswerResponse {
        ok: true,
        // The model may echo what it read: the answer is scrubbed like every other output.
        answer: crate::secrets::scrub(answer, 0, 0).text,
        citations,
        query: questions,
        used_context_tokens: packed.n_tokens,
        generation_time_ms,
        decoder_used: response.model,
        dropped_citations: dropped,
    })
}

fn questions(query: &Questions) -> Result<Vec<String>, ApiError> {
    let questions: Vec<String> = match query {
        Questions::One(text) => vec![text.trim().to_string()],
        Questions::Many(texts) => texts.iter().map(|text| text.trim().to_string()).collect(),
    };
    if questions.is_empty() || questions.len() > MAX_QUESTIONS {
        return Err(ApiError::invalid(
            "query",
            format!("give 1 to {MAX_QUESTIONS} questions"),
        ));
    }
    if let Some(idx) = questions.iter().position(String::is_empty) {
        return Err(ApiError::invalid(
            if matches!(query, Questions::One(_)) {
                "query".to_string()
            } else {
                format!("query[{idx}]")
            },
            "must not be empty",
        ));
    }
    Ok(questions)
}

/// Code chunks and memories for every question, interleaved by rank (the two sources' scores
/// are on different scales), without repeats.
fn retrieve(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
    questions: &[String],
) -> Result<Vec<ContextItem>, ApiError> {
    let mut lists: Vec<Vec<ContextItem>> = Vec::new();
    for question in questions {
        let code = codebase_retrieval(
            workspace,
            &CodebaseRetrievalRequest {
                query: question.clone(),
                options: RetrievalOptions {
                    top_k: Some(RETRIEVED_PER_SOURCE),
                    include_tests: true,
                    ..RetrievalOptions::default()
                },
            },
        )?;
        lists.push(
            code.results
                .into_iter()
                .map(|hit| {
                    let n_lines = hit.snippet.lines().count().max(1);
                    ContextItem::Code {
                        end_line: hit.start_line + n_lines - 1,
                        path: hit.path,
                        start_line: hit.start_line,
                        text: hit.snippet,
                        relevance: hit.relevance,
                    }
                })
                .collect(),
        );
        let fts = FtsQuery::build("query", question, FtsMode::Match)?;
        let outcome = memory.hybrid(
            fts.as_ref(),
            question,
            &[SearchArm::Fts, SearchArm::Semantic],
            super::memory::DEFAULT_RRF_K,
            &Filter::default(),
            Page {
                limit: RETRIEVED_PER_SOURCE,
                offset: 0,
            },
            false,
        )?;
        lists.push(
            outcome
                .hits
                .into_iter()
                .map(|hit| ContextItem::Memory {
                    relevance: hit.scores.rrf.unwrap_or_default(),
                    id: hit.entry.id,
                    text: hit.entry.text,
                })
                .collect(),
        );
    }
    let mut out: Vec<ContextItem> = Vec::new();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    for rank in 0..longest {
        for list in &lists {
            if let Some(item) = list.get(rank)
                && !out.contains(item)
            {
                out.push(item.clone());
            }
        }
    }
    Ok(out)
}

/// The citation when what it names exists: lines of a workspace file (read path-safely), or a
/// stored memory. Anything else (a made-up path, lines past the end, an unknown id, a citation
/// naming both or neither) is `None`.
fn check_citation(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
    context: &[ContextItem],
    raw: &serde_json::Value,
    include_snippet: bool,
) -> Option<Citation> {
    let path = raw["path"].as_str();
    let memory_id = raw["memory_id"].as_i64();
    match (path, memory_id) {
        (Some(path), None) => {
            let start = usize::try_from(raw["start_line"].as_u64()?).ok()?;
            let end = raw["end_line"]
                .as_u64()
                .map_or(Some(start), |end| usize::try_from(end).ok())?;
            if start == 0 || end < start {
                return None;
            }
            let file = get_file(
                workspace,
                &GetFileRequest {
                    path: path.to_string(),
                    include_metadata: false,
                },
            )
            .ok()?;
            if end > file.lines {
                return None;
            }
            let relevance = context
                .iter()
                .filter_map(|item| match item {
                    ContextItem::Code {
                        path: cited,
                        start_line,
                        end_line,
                        relevance,
                        ..
                    } if cited == &file.path && *start_line <= end && start <= *end_line => {
                        Some(*relevance)
                    }
                    _ => None,
                })
                .fold(0.0, f64::max);
            let snippet = include_snippet.then(|| {
                file.content
                    .lines()
                    .skip(start - 1)
                    .take((end - start + 1).min(CODE_SNIPPET_LINES))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            Some(Citation {
                path: Some(file.path),
                start_line: Some(start),
                end_line: Some(end),
                memory_id: None,
                snippet,
                relevance,
            })
        }
        (None, Some(id)) => {
            let entry = memory.get("memory_id", &[id], false).ok()?.pop()?;
            let relevance = context
                .iter()
                .find_map(|item| match item {
                    ContextItem::Memory {
                        id: cited,
                        relevance,
                        ..
                    } if *cited == id => Some(*relevance),
                    _ => None,
                })
                .unwrap_or_default();
            Some(Citation {
                path: None,
                start_line: None,
                end_line: None,
                memory_id: Some(entry.id),
                snippet: include_snippet
                    .then(|| entry.text.chars().take(MEMORY_SNIPPET_CHARS).collect()),
                relevance,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tollgate_index::HashedEmbedder;

    use super::*;
    use crate::ErrorCode;
    use crate::api::notes::{MemoryStoreRequest, memory_store};
    use crate::config::RawConfig;
    use crate::llm::tests::fake_llm::{FakeLlm, Reply};
    use crate::store::Store;

    fn client(server: &FakeLlm) -> LlmClient {
        let config = RawConfig::from_toml(
            &format!(
                "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\nretry_backoff_ms = 1\n",
                server.openai_base_url()
            ),
            "t",
        )
        .unwrap()
        .resolve()
        .unwrap();
        LlmClient::without_cache(&config.llm, std::path::Path::new(".")).unwrap()
    }

    fn request(value: Value) -> ContextAnswerRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn answers_with_checked_citations_and_no_secret_reaches_the_model() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/billing.rs"),
            "/// Computes the invoice total.\npub fn invoice_total(lines: &[u64]) -> u64 {\n    lines.iter().sum()\n}\n",
        )
        .unwrap();
        let workspace = IndexedWorkspace::open(dir.path()).unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let note = memory_store(
            &memory,
            &serde_json::from_value::<MemoryStoreRequest>(json!({
                "information": format!("Invoice totals are summed in cents; the billing API key is {token}"),
                "metadata": {"kind": "explanation"}
            }))
            .unwrap(),
        )
        .unwrap();

        let server = FakeLlm::start();
        server.push(Reply::json(json!({
            "answer": "invoice_total sums the lines, in cents.",
            "citations": [
                {"path": "src/billing.rs", "start_line": 2, "end_line": 3},
                {"memory_id": note.id.parse::<i64>().unwrap()},
                {"path": "src/made_up.rs", "start_line": 1, "end_line": 2},
                {"path": "src/billing.rs", "start_line": 40, "end_line": 41},
                {"path": "../../etc/passwd", "start_line": 1},
                {"memory_id": 9999}
            ]
        })));
        let llm = client(&server);
        let answer = context_answer(
            &workspace,
            &memory,
            Some(&llm),
            &request(json!({"query": "How is the invoice total computed?"})),
        )
        .unwrap();
        assert_eq!(answer.answer, "invoice_total sums the lines, in cents.");
        assert_eq!(answer.dropped_citations, 4);
        assert_eq!(answer.citations.len(), 2);
        let code = &answer.citations[0];
        assert_eq!(
            (code.path.as_deref(), code.start_line, code.end_line),
            (Some("src/billing.rs"), Some(2), Some(3))
        );
        assert!(
            code.snippet
                .as_deref()
                .unwrap()
                .contains("pub fn invoice_total")
        );
        assert!(code.relevance > 0.0);
        assert_eq!(answer.citations[1].memory_id, note.id.parse().ok());
        assert!(answer.used_context_tokens > 0);
        assert_eq!(answer.query, ["How is the invoice total computed?"]);

        let sent = server.requests();
        assert_eq!(sent.len(), 1);
        let body = sent[0].body.to_string();
        assert!(!body.contains(&token), "the secret reached the model");
        let user = sent[0].user_text();
        assert!(user.contains("    2| pub fn invoice_total"), "{user}");
        assert!(user.contains(&format!("memory_id: {}", note.id)), "{user}");
        let outside = crate::llm::outside_fences(&user);
        assert!(
            !outside.contains("invoice_total") && !outside.contains("cents"),
            "{outside}"
        );
    }

    #[test]
    fn without_a_model_it_is_llm_not_configured_and_bad_input_names_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = IndexedWorkspace::open(dir.path()).unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let err = context_answer(
            &workspace,
            &memory,
            None,
            &request(json!({"query": "why?"})),
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::LlmNotConfigured);
        for (value, field) in [
            (json!({"query": " "}), "query"),
            (json!({"query": ["a", ""]}), "query[1]"),
            (json!({"query": "a", "mode": "blend"}), "mode"),
            (json!({"query": "a", "budget_tokens": 10}), "budget_tokens"),
        ] {
            let err =
                context_answer(&workspace, &memory, None, &request(value.clone())).unwrap_err();
            assert_eq!(err.field.as_deref(), Some(field), "{value}: {err}");
        }
    }
}
