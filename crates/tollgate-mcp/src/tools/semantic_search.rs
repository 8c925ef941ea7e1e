//! `semantic_search`: a context tool (upstream's name and parameters).

use tollgate::context::request::{SearchResponse, SemanticSearchRequest};
use tollgate::context::semantic_search;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SemanticSearch;

impl Tool for SemanticSearch {
    const NAME: &'static str = "semantic_search";
    const TITLE: &'static str = "Semantic search";
    const DESCRIPTION: &'static str = "Find code by meaning and identifiers: hybrid search (BM25 over syntax-aware chunks, hashed-vector similarity, definitions and commit history, ranked by query kind; distinct files first). Returns chunks with path, line range, symbol, relevance (0-1: the IDF-weighted share of the query's words the chunk holds, so a query nothing answers scores low) and snippet, plus the same as Markdown. mode=deep over-fetches more. Builds the index on first use.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::BUILDS_INDEX;

    type Input = SemanticSearchRequest;
    type Output = SearchResponse;

    fn call(ctx: &ToolContext, input: SemanticSearchRequest) -> Result<SearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(semantic_search(&ws, &input)?)
    }
}
