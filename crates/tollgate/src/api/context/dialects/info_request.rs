//! Context-Engine's `info_request` (seed 000): `repo_search` with smart limits, a sentence per
//! result, and on request an explanation (summary, locations, concepts, per-file groups,
//! confidence, how the query was read) and each result's relationships (its file's imports and
//! related files). Everything is computed from the results: no model is asked.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::ContextError;
use super::super::ops::in_range;
use super::context_engine::{OneOrMany, RepoSearchRequest, repo_search};
use crate::workspace::IndexedWorkspace;

fn default_true() -> bool {
    true
}
fn default_context_lines() -> usize {
    5
}

/// Input of `info_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InfoRequest {
    /// The code you are looking for, in natural language (`information_request` is accepted
    /// for it).
    #[serde(alias = "information_request")]
    pub info_request: String,
    /// Add summary, primary locations, related concepts, per-file groups and confidence.
    /// Default false.
    #[serde(default)]
    pub include_explanation: bool,
    /// Add each result's file imports and related files. Default false.
    #[serde(default)]
    pub include_relationships: bool,
    /// Results at most (1–100); default 15 for one or two words, 8 for a question, else 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<usize>,
    /// Only files in this language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Only under this directory (inside the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// This server's repository (its directory name) or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<OneOrMany>,
    /// Only paths matching one of these globs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<OneOrMany>,
    /// Include each result's code. Default true.
    #[serde(default = "default_true")]
    pub include_snippet: bool,
    /// Lines of context around each snippet (0–20). Default 5.
    #[serde(default = "default_context_lines")]
    #[schemars(range(max = 20))]
    pub context_lines: usize,
}

/// A result's place among the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Relationships {
    /// Its file's imports, as written.
    pub imports_from: Vec<String>,
    /// The symbol the chunk defines, when it defines one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol_path: Option<String>,
    /// Files its file imports or is imported by.
    pub related_paths: Vec<String>,
}

/// One result of `info_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InfoHit {
    /// 0–1, as `repo_search`'s.
    pub score: f64,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    pub start_line: usize,
    pub end_line: usize,
    /// What was found, in a sentence.
    pub information: String,
    /// The same as `score`.
    pub relevance_score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relationships: Option<Relationships>,
}

/// A file's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileGroup {
    pub count: usize,
    pub top_symbols: Vec<String>,
}

/// The results grouped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupedResults {
    pub by_file: BTreeMap<String, FileGroup>,
}

/// How sure the answer is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Confidence {
    /// `high` (best score ≥ 0.75), `medium` (≥ 0.4) or `low`.
    pub level: String,
    /// The mean score.
    pub score: f64,
    pub top_score: f64,
    /// Results whose symbol names a word of the query.
    pub symbol_matches: usize,
}

/// How the query was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueryUnderstanding {
    /// `answer_question` for a question, else `search_for_code`.
    pub intent: String,
    /// The `language` asked for, else the results' most common one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detected_language: Option<String>,
    /// Identifiers in the query (`snake_case`, `camelCase`, `a::b`, `a.b`).
    pub detected_symbols: Vec<String>,
    pub search_strategy: String,
}

/// Result of `info_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InfoResponse {
    pub ok: bool,
    pub results: Vec<InfoHit>,
    pub total: usize,
    /// `hybrid`, plus `+repo_filtered`, `+lang:<language>`, `+path_filtered` for the filters.
    pub search_strategy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_locations: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_concepts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grouped_results: Option<GroupedResults>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_understanding: Option<QueryUnderstanding>,
}

/// Words that carry no concept.
const STOPWORDS: [&str; 24] = [
    "the", "and", "for", "with", "from", "into", "how", "what", "does", "where", "when", "which",
    "who", "why", "are", "is", "of", "to", "in", "on", "a", "an", "src", "lib",
];

/// A question ("how does …", "what is …?").
fn is_question(query: &str) -> bool {
    let first = query
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    query.trim_end().ends_with('?')
        || matches!(
            first.as_str(),
            "how" | "what" | "why" | "where" | "when" | "which" | "who" | "does" | "is" | "can"
        )
}

/// The seed's smart limit: 15 for one or two words, 8 for a question, else 10.
fn smart_limit(query: &str) -> usize {
    if is_question(query) {
        8
    } else if query.split_whitespace().count() <= 2 {
        15
    } else {
        10
    }
}

/// Lower-case words of `text`, split at anything but letters and digits and at case changes.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in text.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        let mut previous_lower = false;
        for ch in part.chars() {
            if ch.is_uppercase() && previous_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word).to_lowercase());
            }
            previous_lower = ch.is_lowercase() || ch.is_ascii_digit();
            word.push(ch);
        }
        if !word.is_empty() {
            out.push(word.to_lowercase());
        }
    }
    out
}

/// Identifiers written in the query.
fn identifiers(query: &str) -> Vec<String> {
    query
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '?' | '(' | ')' | '\'' | '"'))
        .filter(|token| {
            token.contains('_')
                || token.contains("::")
                || (token.contains('.') && !token.ends_with('.'))
                || token.chars().skip(1).any(|c| c.is_uppercase())
        })
        .map(str::to_string)
        .collect()
}

/// `info_request`: code found for a description, with optional explanation and relationships.
pub fn info_request(
    ws: &IndexedWorkspace,
    request: &InfoRequest,
) -> Result<InfoResponse, ContextError> {
    let query = request.info_request.trim().to_string();
    let limit = request.limit.unwrap_or_else(|| smart_limit(&query));
    in_range("limit", limit, 1, 100)?;
    let found = repo_search(
        ws,
        &RepoSearchRequest {
            query: OneOrMany::One(query.clone()),
            limit,
            per_path: 2,
            repo: request.repo.clone(),
            language: request.language.clone(),
            path_glob: request.path_glob.clone(),
            under: request.under.clone(),
            not_glob: None,
            symbol: None,
            kind: None,
            ext: None,
            include_snippet: request.include_snippet,
            context_lines: request.context_lines,
            highlight_snippet: false,
            rerank_enabled: None,
            rerank_top_n: 50,
            rerank_return_m: 12,
        },
    )
    .map_err(|err| match err {
        ContextError::InvalidInput {
            field: "query",
            message,
        } => ContextError::InvalidInput {
            field: "info_request",
            message,
        },
        other => other,
    })?;
    let mut strategy = String::from("hybrid");
    if request.repo.is_some() {
        strategy.push_str("+repo_filtered");
    }
    if let Some(language) = &request.language {
        strategy.push_str(&format!("+lang:{}", language.to_lowercase()));
    }
    if request.under.is_some() || request.path_glob.is_some() {
        strategy.push_str("+path_filtered");
    }
    let relationships = if request.include_relationships {
        let paths: Vec<&str> = found.results.iter().map(|r| r.path.as_str()).collect();
        let config = ws.index_config();
        let imports = tollgate_index::symbols::imports_of(config, &paths)?;
        let mut related = Vec::new();
        for path in &paths {
            related.push(tollgate_index::symbols::related(config, path, 5)?);
        }
        imports.into_iter().zip(related).map(Some).collect()
    } else {
        vec![None; found.results.len()]
    };
    let results: Vec<InfoHit> = found
        .results
        .into_iter()
        .zip(relationships)
        .map(|(hit, relationships)| {
            let file = hit.path.rsplit('/').next().unwrap_or(&hit.path).to_string();
            let what = match &hit.symbol {
                Some(symbol) => format!("'{symbol}'"),
                None => hit.metadata.kind.clone(),
            };
            InfoHit {
                information: format!(
                    "Found {what} in {file} (lines {}-{})",
                    hit.start_line, hit.end_line
                ),
                relationships: relationships.map(|(imports_from, related_paths)| Relationships {
                    imports_from,
                    symbol_path: hit.symbol.clone(),
                    related_paths,
                }),
                score: hit.score,
                relevance_score: hit.score,
                path: hit.path,
                symbol: hit.symbol,
                start_line: hit.start_line,
                end_line: hit.end_line,
                snippet: hit.snippet,
            }
        })
        .collect();
    let mut response = InfoResponse {
        ok: true,
        total: results.len(),
        search_strategy: strategy.clone(),
        summary: None,
        primary_locations: None,
        related_concepts: None,
        grouped_results: None,
        confidence: None,
        query_understanding: None,
        results,
    };
    if request.include_explanation {
        let languages = found_languages(&response);
        explain(
            &mut response,
            &query,
            request.language.as_deref(),
            &languages,
        );
    }
    Ok(response)
}

/// The results' languages, from their paths.
fn found_languages(response: &InfoResponse) -> Vec<String> {
    response
        .results
        .iter()
        .filter_map(|r| {
            tollgate_index::walk::detect_language(std::path::Path::new(&r.path))
                .map(|l| l.as_str().to_string())
        })
        .collect()
}

/// Fills the explanation fields from the results.
fn explain(response: &mut InfoResponse, query: &str, language: Option<&str>, languages: &[String]) {
    let results = &response.results;
    let query_words: Vec<String> = words(query);
    let mut files: Vec<&str> = Vec::new();
    let mut by_file: BTreeMap<String, FileGroup> = BTreeMap::new();
    let mut concepts: BTreeMap<String, usize> = BTreeMap::new();
    for hit in results {
        if !files.contains(&hit.path.as_str()) {
            files.push(&hit.path);
        }
        let group = by_file.entry(hit.path.clone()).or_insert(FileGroup {
            count: 0,
            top_symbols: Vec::new(),
        });
        group.count += 1;
        if let Some(symbol) = &hit.symbol
            && group.top_symbols.len() < 3
            && !group.top_symbols.contains(symbol)
        {
            group.top_symbols.push(symbol.clone());
        }
        let named = hit.symbol.iter().chain(std::iter::once(&hit.path));
        for word in named.flat_map(|text| words(text)) {
            if word.len() >= 3
                && !query_words.contains(&word)
                && !STOPWORDS.contains(&word.as_str())
                && !word.chars().all(|c| c.is_ascii_digit())
            {
                *concepts.entry(word).or_default() += 1;
            }
        }
    }
    let mut concepts: Vec<(String, usize)> = concepts.into_iter().collect();
    concepts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top_score = results.iter().map(|r| r.score).fold(0.0, f64::max);
    let mean = if results.is_empty() {
        0.0
    } else {
        results.iter().map(|r| r.score).sum::<f64>() / results.len() as f64
    };
    let symbol_matches = results
        .iter()
        .filter(|r| {
            r.symbol
                .as_deref()
                .is_some_and(|s| words(s).iter().any(|w| query_words.contains(w)))
        })
        .count();
    let detected_language = language.map(str::to_lowercase).or_else(|| {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for language in languages {
            *counts.entry(language).or_default() += 1;
        }
        counts
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|(l, _)| l.to_string())
    });
    response.summary = Some(format!(
        "Found {} results related to '{query}' across {} files",
        results.len(),
        files.len()
    ));
    response.primary_locations = Some(files.iter().take(3).map(|f| f.to_string()).collect());
    response.related_concepts = Some(concepts.into_iter().take(5).map(|(w, _)| w).collect());
    response.grouped_results = Some(GroupedResults { by_file });
    response.confidence = Some(Confidence {
        level: if top_score >= 0.75 {
            "high"
        } else if top_score >= 0.4 {
            "medium"
        } else {
            "low"
        }
        .to_string(),
        score: (mean * 1000.0).round() / 1000.0,
        top_score,
        symbol_matches,
    });
    response.query_understanding = Some(QueryUnderstanding {
        intent: if is_question(query) {
            "answer_question"
        } else {
            "search_for_code"
        }
        .to_string(),
        detected_language,
        detected_symbols: identifiers(query),
        search_strategy: response.search_strategy.clone(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_limits_and_identifiers_follow_the_seed() {
        assert_eq!(smart_limit("useAuth"), 15);
        assert_eq!(smart_limit("authentication hook"), 15);
        assert_eq!(smart_limit("how does the login work"), 8);
        assert_eq!(smart_limit("session cookie refresh logic"), 10);
        assert_eq!(
            identifiers("where is useAuth and parse_config?"),
            ["useAuth", "parse_config"]
        );
        assert_eq!(
            words("ConnectionPool::acquire"),
            ["connection", "pool", "acquire"]
        );
    }
}
