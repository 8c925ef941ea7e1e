//! Hybrid search: the lexical and vector channels score chunks, the history channel files.
//! Each arm's scores are scaled to 0..1 and added (per-class weights measured no better); a chunk
//! whose symbol is what the query names is boosted; a file adds up its chunks with diminishing
//! returns and its commit history, tests, docs, changelogs and generated files rank lower
//! unless asked for, and a change description lifts the files it names ([`crate::rank`]).
//! Filters narrow every channel before its cut.

use std::collections::HashMap;
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::embed::Embedder;
use crate::error::IndexError;
use crate::hash::HashKeySet;
use crate::lexical::{AllowedKeys, Lexical, Searcher, StoredChunk};
use crate::rank::{
    self, FileClass, QueryClass, QueryTerms, Signal, Signals, definition_boost, path_words_boosts,
};
use crate::store::{self, ListedFile, Meta, file_key};
use crate::tokenize::tokens;
use crate::vectors::VectorStore;
use crate::walk::{self, Language};
use crate::{IndexConfig, history};

/// History evidence kept: files of commits scoring at least this fraction of the best commit.
/// Weaker commits share only common words with the query (every "Merge pull request …"
/// matches one asking about a pull request); their files would add RRF's heavy tail of noise,
/// growing with the number of commits fetched.
const HISTORY_MIN_SCORE: f32 = 0.5;

/// How hard to search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Each channel contributes [`POOL`] candidates.
    #[default]
    Fast,
    /// [`DEEP_POOL`], and more commits.
    Deep,
}

/// The candidates each channel contributes, whatever the number of results asked for: a pool
/// that grew with `k` reordered the head of a longer list (issue 31: NDCG@10 0.750 at k 10,
/// 0.765 at 20). A request for more files than the pool holds gets them from a second, larger
/// pass, appended after the pool's own ranking, which stays as it is.
pub const POOL: usize = 100;
pub const DEEP_POOL: usize = 400;

/// What an architecture question's hub modules add to their file's score, times the best
/// file's score and the hub's weight ([`rank::hub_files`]); chosen on the tune half of
/// session 14's evaluation (0.6, 1, 1.5, 2, 3: 1.5 the smallest with the full gain).
const HUB_WEIGHT: f32 = 1.5;

/// The factor on a tiny chunk's score in its file's ([`Signal::TinyChunks`]; 0.25 measured
/// the same).
const TINY_CHUNK_FACTOR: f32 = 0.5;

/// What to do with test files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tests {
    /// Keep them; like docs and changelogs they rank lower unless the query asks for tests.
    #[default]
    Include,
    Exclude,
    /// Only test files.
    Only,
}

/// A search channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    Lexical,
    Vector,
    History,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::Lexical, Channel::Vector, Channel::History];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Lexical => "lexical",
            Channel::Vector => "vector",
            Channel::History => "history",
        }
    }
}

/// Which files a search may return.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// File extensions (`ts` or `.ts`); empty: any.
    pub extensions: Vec<String>,
    /// Globs a path must match (any of them); empty: any.
    pub include: Vec<String>,
    /// Globs or path prefixes that exclude a path.
    pub exclude: Vec<String>,
    pub tests: Tests,
    pub languages: Vec<Language>,
    /// A subdirectory the path must lie in.
    pub under: Option<String>,
}

impl Filter {
    /// True when the filter can exclude a path (then the allowed set is computed up front).
    fn restricts(&self) -> bool {
        !self.extensions.is_empty()
            || !self.include.is_empty()
            || !self.exclude.is_empty()
            || matches!(self.tests, Tests::Exclude | Tests::Only)
            || !self.languages.is_empty()
            || self
                .under
                .as_deref()
                .is_some_and(|u| !u.trim_matches('/').is_empty() && u != ".")
    }

    fn compile(&self) -> Result<CompiledFilter, IndexError> {
        let set = |globs: &[String]| -> Result<GlobSet, IndexError> {
            let mut builder = GlobSetBuilder::new();
            for glob in globs {
                let glob = Glob::new(glob)
                    .map_err(|err| IndexError::InvalidInput(format!("glob `{glob}`: {err}")))?;
                builder.add(glob);
            }
            builder
                .build()
                .map_err(|err| IndexError::InvalidInput(err.to_string()))
        };
        let exclude_globs: Vec<String> = self
            .exclude
            .iter()
            .filter(|e| e.contains(['*', '?', '[', '{']))
            .cloned()
            .collect();
        let exclude_prefixes: Vec<String> = self
            .exclude
            .iter()
            .filter(|e| !e.contains(['*', '?', '[', '{']))
            .map(|e| e.trim_start_matches("./").trim_end_matches('/').to_string())
            .collect();
        Ok(CompiledFilter {
            extensions: self
                .extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
            include: set(&self.include)?,
            include_any: self.include.is_empty(),
            exclude: set(&exclude_globs)?,
            exclude_prefixes,
            tests: self.tests,
            languages: self
                .languages
                .iter()
                .map(|l| l.as_str().to_string())
                .collect(),
            under: self
                .under
                .as_deref()
                .map(|u| u.trim_start_matches("./").trim_matches('/').to_string())
                .filter(|u| !u.is_empty() && u != "."),
        })
    }
}

#[derive(Debug)]
struct CompiledFilter {
    extensions: Vec<String>,
    include: GlobSet,
    include_any: bool,
    exclude: GlobSet,
    exclude_prefixes: Vec<String>,
    tests: Tests,
    languages: Vec<String>,
    under: Option<String>,
}

impl CompiledFilter {
    fn allows(&self, file: ListedFile<'_>) -> bool {
        let ListedFile {
            path,
            language,
            test,
        } = file;
        let ext = path
            .rsplit('/')
            .next()
            .and_then(|n| n.rsplit_once('.'))
            .map(|(_, e)| e.to_ascii_lowercase());
        if !self.extensions.is_empty() && !ext.is_some_and(|e| self.extensions.contains(&e)) {
            return false;
        }
        if !self.include_any && !self.include.is_match(path) {
            return false;
        }
        if self.exclude.is_match(path)
            || self
                .exclude_prefixes
                .iter()
                .any(|p| path == p || path.starts_with(&format!("{p}/")))
        {
            return false;
        }
        match self.tests {
            Tests::Exclude if test => return false,
            Tests::Only if !test => return false,
            _ => {}
        }
        if !self.languages.is_empty() && !self.languages.iter().any(|l| l == language) {
            return false;
        }
        if let Some(under) = &self.under
            && !(path == under || path.starts_with(&format!("{under}/")))
        {
            return false;
        }
        true
    }
}

/// A search request.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    pub text: String,
    /// Results wanted (chunks), at most [`MAX_TOP_K`].
    pub top_k: usize,
    pub mode: Mode,
    pub filter: Filter,
    /// Chunks shown per file (at least 1).
    pub chunks_per_file: usize,
    /// Channels to fuse; empty: all available.
    pub channels: Vec<Channel>,
    /// Attach each hit's evidence ([`Explain`]).
    pub explain: bool,
    /// Ranking signals in use (all, unless an evaluation switches some off).
    pub signals: Signals,
}

/// The most results a search returns.
pub const MAX_TOP_K: usize = 200;

impl SearchQuery {
    pub fn new(text: &str, top_k: usize) -> SearchQuery {
        SearchQuery {
            text: text.to_string(),
            top_k,
            mode: Mode::Fast,
            filter: Filter::default(),
            chunks_per_file: 1,
            channels: Vec::new(),
            explain: false,
            signals: Signals::from_env(),
        }
    }
}

/// One result: a chunk of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub symbol: Option<String>,
    pub kind: String,
    pub language: String,
    /// The ranking score (only the order means much).
    pub score: f32,
    /// How much of the query the chunk holds, 0..=1: the IDF-weighted share of the query's
    /// words in its text, path or symbol. Absolute, so a query nothing answers scores low.
    pub relevance: f32,
    /// Rank of the file (1-based) among the results.
    pub file_rank: usize,
    /// The channels that found this file.
    pub channels: Vec<Channel>,
    /// Why it ranks here, when the query asked.
    pub explain: Option<Explain>,
}

/// The evidence behind a hit's rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Explain {
    pub query_class: QueryClass,
    pub file_class: FileClass,
    /// Each arm that found the chunk (or, for history, its file).
    pub evidence: Vec<ArmEvidence>,
    /// Factors on the chunk's score (definition, test module).
    pub chunk_boosts: Vec<(&'static str, f32)>,
    /// Factors on the file's score (its file class).
    pub file_boosts: Vec<(&'static str, f32)>,
    pub chunk_score: f32,
    pub file_score: f32,
}

/// One arm's part in a hit.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmEvidence {
    /// `lexical`, `vector` or `history`.
    pub arm: &'static str,
    /// 1-based rank within the arm.
    pub rank: usize,
    /// The arm's own score (BM25, cosine similarity, commit match).
    pub score: f32,
    /// What it added: its score scaled to 0..1 within the arm.
    pub weighted: f32,
}

#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub hits: Vec<Hit>,
    /// Channels that took part.
    pub channels: Vec<Channel>,
    /// Why a channel could not take part, and similar.
    pub warnings: Vec<String>,
    /// Files of the hits changed since the index was last updated (their lines and snippets
    /// may have moved): the caller re-indexes them or warns.
    pub stale: Vec<String>,
}

/// Runs a hybrid search over the index at `config.dir`. `embedder` must be the one the index
/// was built with for the vector channel to take part (otherwise it is skipped with a warning).
pub fn search(
    config: &IndexConfig,
    embedder: &dyn Embedder,
    query: &SearchQuery,
) -> Result<SearchOutcome, IndexError> {
    let dir = &config.dir;
    let (meta, lexical) = open_index(dir)?;
    let searcher = lexical.reader()?;
    let top_k = query.top_k.clamp(1, MAX_TOP_K);
    let pool = match query.mode {
        Mode::Fast => POOL,
        Mode::Deep => DEEP_POOL,
    };
    let mut outcome = SearchOutcome::default();
    let allowed = allowed_keys(dir, &query.filter)?;
    let terms = QueryTerms::new(&query.text, &query.signals);
    let hubs = hub_modules(dir, &terms, allowed.as_ref())?;
    let context = Pass {
        config,
        embedder,
        searcher: &searcher,
        query,
        terms: &terms,
        allowed: allowed.as_ref(),
        hubs: &hubs,
    };
    let (mut ranked, scale) = context.rank(pool, Some(&mut outcome))?;
    let mut scales = vec![scale];
    if ranked.len() < top_k && pool < top_k * 5 {
        let (more, scale) = context.rank(top_k * 5, None)?;
        let have: std::collections::HashSet<String> =
            ranked.iter().map(|(p, _)| p.clone()).collect();
        for (path, mut file) in more {
            if !have.contains(&path) {
                file.pass = 1;
                ranked.push((path, file));
            }
        }
        scales.push(scale);
    }
    let entries = pick_entries(&mut ranked, &searcher, query, top_k)?;

    let shown: Vec<&StoredChunk> = entries
        .iter()
        .map(|&(_, f, c)| &ranked[f].1.chunks[c].chunk)
        .collect();
    let mut words = tokens(&query.text);
    words.sort();
    words.dedup();
    let relevance = searcher.coverage(&words, &shown)?;
    for (&(key, file_idx, chunk_idx), relevance) in entries.iter().zip(relevance) {
        let file = &ranked[file_idx].1;
        let explain = query
            .explain
            .then(|| explain(&terms, file, &file.chunks[chunk_idx], &scales[file.pass]));
        outcome.hits.push(hit(
            file,
            &file.chunks[chunk_idx],
            key,
            relevance,
            file_idx + 1,
            explain,
        ));
    }
    if let Some(meta) = &meta {
        outcome.stale = stale_files(config, &outcome.hits, meta.indexed_at)?;
    }
    Ok(outcome)
}

/// The vector channel alone: the chunks nearest the query's embedding, most similar first, each
/// hit's `score` its cosine similarity (no fusion, boosts or per-file grouping; `chunks_per_file`
/// and `channels` are not read). For callers that mean pure vector ranking (ck's
/// `semantic_search`); the filter applies before the cut, as in [`search`]. An index without
/// vectors from `embedder` answers nothing, with a warning.
pub fn nearest(
    config: &IndexConfig,
    embedder: &dyn Embedder,
    query: &SearchQuery,
) -> Result<SearchOutcome, IndexError> {
    let (meta, lexical) = open_index(&config.dir)?;
    let searcher = lexical.reader()?;
    let top_k = query.top_k.clamp(1, MAX_TOP_K);
    let allowed = allowed_keys(&config.dir, &query.filter)?;
    let mut outcome = SearchOutcome::default();
    let chunks = match vector_arm(
        config,
        embedder,
        &searcher,
        &query.text,
        top_k,
        allowed.as_ref(),
    )? {
        Some(chunks) => {
            outcome.channels.push(Channel::Vector);
            chunks
        }
        None => {
            outcome.warnings.push(format!(
                "no vector search: the index holds no vectors from embedder {}",
                embedder.id()
            ));
            Vec::new()
        }
    };
    let mut words = tokens(&query.text);
    words.sort();
    words.dedup();
    let shown: Vec<&StoredChunk> = chunks.iter().map(|(_, chunk)| chunk).collect();
    let relevance = searcher.coverage(&words, &shown)?;
    for (rank, ((similarity, chunk), relevance)) in chunks.iter().zip(relevance).enumerate() {
        let chunk = chunk.clone();
        outcome.hits.push(Hit {
            path: chunk.path,
            start_line: chunk.start_line,
            end_line: chunk.end_line,
            symbol: chunk.symbol,
            kind: chunk.kind,
            language: chunk.language,
            score: *similarity,
            relevance,
            file_rank: rank + 1,
            channels: vec![Channel::Vector],
            explain: None,
        });
    }
    if let Some(meta) = &meta {
        outcome.stale = stale_files(config, &outcome.hits, meta.indexed_at)?;
    }
    Ok(outcome)
}

/// What one ranking pass over the channels needs.
struct Pass<'a> {
    config: &'a IndexConfig,
    embedder: &'a dyn Embedder,
    searcher: &'a Searcher,
    query: &'a SearchQuery,
    terms: &'a QueryTerms,
    allowed: Option<&'a AllowedKeys>,
    hubs: &'a [(String, f32)],
}

impl Pass<'_> {
    /// Files ranked from `fetch` candidates per channel, with the arms' scales; `outcome`
    /// (the first pass's) hears which channels took part and why one could not.
    fn rank(
        &self,
        fetch: usize,
        mut outcome: Option<&mut SearchOutcome>,
    ) -> Result<(Vec<(String, FileScore)>, Scale), IndexError> {
        let Pass {
            config,
            embedder,
            searcher,
            query,
            terms,
            allowed,
            hubs,
        } = *self;
        let dir = &config.dir;
        let wanted = |c: Channel| query.channels.is_empty() || query.channels.contains(&c);
        let mut joined = |c: Channel| {
            if let Some(o) = outcome.as_deref_mut() {
                o.channels.push(c);
            }
        };
        // Chunk candidates from the lexical and vector arms, each with its evidence.
        let mut candidates: HashMap<u64, Candidate> = HashMap::new();
        let mut warnings = Vec::new();
        if wanted(Channel::Lexical) {
            let chunks = searcher.search(&query.text, fetch, allowed)?;
            add_candidates(&mut candidates, chunks, Arm::Lexical);
            joined(Channel::Lexical);
        }
        if wanted(Channel::Vector) {
            match vector_arm(config, embedder, searcher, &query.text, fetch, allowed) {
                Ok(Some(chunks)) => {
                    add_candidates(&mut candidates, chunks, Arm::Vector);
                    joined(Channel::Vector);
                }
                Ok(None) => warnings.push(format!(
                    "vector channel skipped: the index holds no vectors from embedder {}",
                    embedder.id()
                )),
                Err(err) => warnings.push(format!("vector channel skipped: {err}")),
            }
        }
        let mut history = HashMap::new();
        if wanted(Channel::History)
            && let Some(found) = history_evidence(dir, query, fetch, allowed)?
        {
            history = found;
            joined(Channel::History);
        }
        if let Some(o) = outcome {
            o.warnings.extend(warnings);
        }

        // Each arm's scores scaled to 0..1 by its best (vectors: between its worst and best,
        // as similarities of unrelated chunks are far from 0).
        let scale = Scale::new(candidates.values(), history.values());
        let ranked = rank_files(candidates, &history, &scale, terms, &query.signals, hubs);
        Ok((ranked, scale))
    }
}

/// An architecture question's hub modules among the index's code files ([`rank::hub_files`]);
/// empty for any other query (the path list is not read).
fn hub_modules(
    dir: &std::path::Path,
    terms: &QueryTerms,
    allowed: Option<&AllowedKeys>,
) -> Result<Vec<(String, f32)>, IndexError> {
    if terms.hub_words.is_empty() && !terms.entry_point {
        return Ok(Vec::new());
    }
    let Some(list) = store::read_paths(dir)? else {
        return Ok(Vec::new());
    };
    let files = store::listed_files(&list).map_err(|detail| IndexError::Corrupt {
        dir: dir.to_path_buf(),
        detail,
    })?;
    let code: Vec<&str> = files
        .iter()
        .filter(|f| !f.test && FileClass::of(f.path, false) == FileClass::Code)
        .filter(|f| allowed.is_none_or(|keys| keys.contains(&file_key(f.path))))
        .map(|f| f.path)
        .collect();
    Ok(rank::hub_files(terms, &code)
        .into_iter()
        .map(|(p, w)| (p.to_string(), w))
        .collect())
}

/// The index's metadata (when written) and its lexical part; an index of another format is
/// corrupt, since it would answer filtered searches with nothing, silently.
fn open_index(dir: &std::path::Path) -> Result<(Option<Meta>, Lexical), IndexError> {
    let meta = store::read_json::<Meta>(&dir.join("meta.json"))?;
    if let Some(meta) = &meta
        && meta.version != store::FORMAT_VERSION
    {
        return Err(IndexError::Corrupt {
            dir: dir.to_path_buf(),
            detail: format!(
                "it has format {}, this Tollgate reads format {}",
                meta.version,
                store::FORMAT_VERSION
            ),
        });
    }
    let Some(lexical) = Lexical::open(&dir.join("lexical"))? else {
        return Err(IndexError::NotIndexed(dir.to_path_buf()));
    };
    Ok((meta, lexical))
}

/// The filter as a set of allowed file keys, applied inside each channel (so before its cut);
/// `None` when the filter allows everything.
fn allowed_keys(dir: &std::path::Path, filter: &Filter) -> Result<Option<AllowedKeys>, IndexError> {
    if !filter.restricts() {
        return Ok(None);
    }
    let compiled = filter.compile()?;
    let corrupt = |detail: String| IndexError::Corrupt {
        dir: dir.to_path_buf(),
        detail,
    };
    let Some(list) = store::read_paths(dir)? else {
        return Err(corrupt(format!("{} is missing", store::PATHS_LIST)));
    };
    let files = store::listed_files(&list).map_err(corrupt)?;
    let keys: HashKeySet = files
        .into_iter()
        .filter(|file| compiled.allows(*file))
        .map(|file| file_key(file.path))
        .collect();
    Ok(Some(Arc::new(keys)))
}

/// Adds an arm's ranked chunks to the candidates, each with its rank and score as evidence.
fn add_candidates(
    candidates: &mut HashMap<u64, Candidate>,
    chunks: Vec<(f32, StoredChunk)>,
    arm: Arm,
) {
    for (rank, (score, chunk)) in chunks.into_iter().enumerate() {
        let entry = candidates
            .entry(chunk.chunk_id)
            .or_insert_with(|| Candidate {
                chunk,
                evidence: Vec::new(),
            });
        entry.evidence.push(Evidence {
            arm,
            rank: rank + 1,
            score,
        });
    }
}

/// The history arm: files whose commits match the query, as evidence per path; `None` when
/// the index holds no history.
fn history_evidence(
    dir: &std::path::Path,
    query: &SearchQuery,
    fetch: usize,
    allowed: Option<&AllowedKeys>,
) -> Result<Option<HashMap<String, Evidence>>, IndexError> {
    let history_dir = dir.join("history");
    if !history_dir.join("meta.json").exists() {
        return Ok(None);
    }
    let commits = match query.mode {
        Mode::Fast => 100,
        Mode::Deep => 400,
    };
    let is_allowed = |path: &str| allowed.is_none_or(|keys| keys.contains(&file_key(path)));
    let ranked = history::rank_files(&history_dir, &query.text, commits)?;
    let files = ranked
        .into_iter()
        .filter(|(_, score)| *score >= HISTORY_MIN_SCORE)
        .filter(|(path, _)| is_allowed(path))
        .take(fetch);
    let mut evidence = HashMap::new();
    for (rank, (path, score)) in files.enumerate() {
        evidence.insert(
            path,
            Evidence {
                arm: Arm::History,
                rank: rank + 1,
                score,
            },
        );
    }
    Ok(Some(evidence))
}

/// Chunks scored (scaled arm scores, definition boost, in-file test penalty) and gathered per
/// file; files scored (aggregated chunks, history, file-class penalty), best first.
fn rank_files(
    candidates: HashMap<u64, Candidate>,
    history: &HashMap<String, Evidence>,
    scale: &Scale,
    terms: &QueryTerms,
    signals: &Signals,
    hubs: &[(String, f32)],
) -> Vec<(String, FileScore)> {
    let mut files: HashMap<String, FileScore> = HashMap::new();
    for candidate in candidates.into_values() {
        let mut score = 0.0;
        for evidence in &candidate.evidence {
            score += scale.of(evidence);
        }
        let mut boosts = Vec::new();
        if signals.on(Signal::Definitions)
            && let Some((factor, why)) = definition_boost(
                terms,
                candidate.chunk.symbol.as_deref(),
                &candidate.chunk.kind,
                &candidate.chunk.path,
            )
        {
            score *= factor;
            boosts.push((why, factor));
        }
        if signals.on(Signal::FileClassPenalty)
            && rank::is_test_chunk(candidate.chunk.symbol.as_deref())
            && !terms.asks_for.contains(&FileClass::Test)
        {
            let factor = FileClass::Test.penalty(terms.question);
            score *= factor;
            boosts.push(("test module", factor));
        }
        let file = files
            .entry(candidate.chunk.path.clone())
            .or_insert_with(|| FileScore::new(candidate.chunk.generated));
        file.generated |= candidate.chunk.generated;
        file.chunks.push(ScoredChunk {
            score,
            chunk: candidate.chunk,
            evidence: candidate.evidence,
            boosts,
        });
    }
    for path in history.keys() {
        files
            .entry(path.clone())
            .or_insert_with(|| FileScore::new(false));
    }
    for (path, file) in &mut files {
        file.chunks.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.chunk.start_line.cmp(&b.chunk.start_line))
        });
        // A fragment that defines what the query names is the answer, not a fragment.
        let tiny = |c: &ScoredChunk| {
            signals.on(Signal::TinyChunks)
                && rank::is_tiny(c.chunk.start_line, c.chunk.end_line)
                && c.boosts.iter().all(|(why, _)| *why == "test module")
        };
        // A fragment is shown only when the file has nothing more substantive (stable: by
        // score within each group), and counts for less in the file's score.
        if file.chunks.iter().any(|c| !tiny(c)) {
            file.chunks.sort_by_key(|c| tiny(c));
        }
        let mut chunk_scores: Vec<f32> = file
            .chunks
            .iter()
            .map(|c| {
                if tiny(c) {
                    c.score * TINY_CHUNK_FACTOR
                } else {
                    c.score
                }
            })
            .collect();
        chunk_scores.sort_by(|a, b| b.total_cmp(a));
        file.score = if signals.on(Signal::FileAggregation) {
            rank::aggregate(&chunk_scores)
        } else {
            chunk_scores.first().copied().unwrap_or(0.0)
        };
        if let Some(evidence) = history.get(path) {
            file.score += scale.of(evidence);
            file.history = Some(evidence.clone());
        }
        file.class = FileClass::of(path, file.generated);
        if !signals.on(Signal::ManifestPenalty)
            && matches!(file.class, FileClass::Manifest | FileClass::Example)
        {
            file.class = FileClass::Code;
        }
        if signals.on(Signal::FileClassPenalty) && !terms.asks_for.contains(&file.class) {
            let factor = file.class.penalty(terms.question);
            if factor < 1.0 {
                file.score *= factor;
                file.boosts.push((file.class.as_str(), factor));
            }
        }
    }
    if signals.on(Signal::PathWords) {
        let paths: Vec<String> = files.keys().cloned().collect();
        let names: Vec<&str> = paths.iter().map(String::as_str).collect();
        let factors = path_words_boosts(terms, &names);
        for (path, factor) in paths.iter().zip(factors) {
            if let (Some(factor), Some(file)) = (factor, files.get_mut(path)) {
                file.score *= factor;
                file.boosts.push(("path words", factor));
            }
        }
    }
    if !hubs.is_empty() {
        let best = files.values().map(|f| f.score).fold(0.0f32, f32::max);
        for (path, weight) in hubs {
            let file = files
                .entry(path.clone())
                .or_insert_with(|| FileScore::new(false));
            let lift = HUB_WEIGHT * weight * best;
            file.score += lift;
            file.boosts.push(("hub module (added)", lift));
        }
    }
    let mut ranked: Vec<(String, FileScore)> = files.into_iter().collect();
    ranked.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then_with(|| a.0.cmp(&b.0)));
    ranked
}

/// The results as (sort key, file index, chunk index): each file's best chunk at the file's
/// score; a further chunk of the same file only where its own, halved, score still beats the
/// files below. A file found by history alone gets its best-matching chunk, else its first.
fn pick_entries(
    ranked: &mut [(String, FileScore)],
    searcher: &Searcher,
    query: &SearchQuery,
    top_k: usize,
) -> Result<Vec<(f32, usize, usize)>, IndexError> {
    let per_file = query.chunks_per_file.max(1);
    let mut entries: Vec<(f32, usize, usize)> = Vec::new();
    for (file_idx, (path, file)) in ranked.iter_mut().enumerate().take(top_k) {
        if file.chunks.is_empty() {
            let only: AllowedKeys = Arc::new(HashKeySet::from_iter([file_key(path)]));
            let mut chunk = searcher
                .search(&query.text, 1, Some(&only))?
                .pop()
                .map(|(_, c)| c);
            if chunk.is_none() {
                chunk = searcher.chunks_of(path)?.into_iter().next();
            }
            let Some(chunk) = chunk else {
                continue; // No longer indexed.
            };
            file.chunks.push(ScoredChunk {
                score: 0.0,
                chunk,
                evidence: Vec::new(),
                boosts: Vec::new(),
            });
        }
        let best = file.chunks[0].score.max(f32::MIN_POSITIVE);
        for (chunk_idx, chunk) in file.chunks.iter().enumerate().take(per_file) {
            let key = if chunk_idx == 0 {
                file.score
            } else {
                file.score * (chunk.score / best) * 0.5f32.powi(chunk_idx as i32)
            };
            entries.push((key, file_idx, chunk_idx));
        }
    }
    // The pool's files first: a larger pass's scores are scaled by other bests.
    let pass = |e: &(f32, usize, usize)| ranked[e.1].1.pass;
    entries.sort_by(|a, b| {
        pass(a)
            .cmp(&pass(b))
            .then(b.0.total_cmp(&a.0))
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    entries.truncate(top_k);
    if query.signals.on(Signal::TinyChunks) {
        for i in 0..entries.len() {
            let (_, file_idx, chunk_idx) = entries[i];
            let others: Vec<(usize, usize)> = entries
                .iter()
                .filter(|e| e.1 == file_idx && e.2 != chunk_idx)
                .map(|e| {
                    let c = &ranked[file_idx].1.chunks[e.2].chunk;
                    (c.start_line, c.end_line)
                })
                .collect();
            let (path, file) = &mut ranked[file_idx];
            let chunk = &mut file.chunks[chunk_idx].chunk;
            if rank::is_tiny(chunk.start_line, chunk.end_line)
                && let Some((start, end)) = merged_span(searcher, path, chunk, &others)?
            {
                chunk.start_line = start;
                chunk.end_line = end;
            }
        }
    }
    Ok(entries)
}

/// A fragment's span merged with its neighbours in the file (the chunks after it, else the
/// one before) until it holds more than [`rank::TINY_CHUNK_LINES`] lines; `None` when the file
/// has no neighbour or the merged span would overlap another result of the file.
fn merged_span(
    searcher: &Searcher,
    path: &str,
    chunk: &StoredChunk,
    others: &[(usize, usize)],
) -> Result<Option<(usize, usize)>, IndexError> {
    let all = searcher.chunks_of(path)?;
    let (mut start, mut end) = (chunk.start_line, chunk.end_line);
    for next in all.iter().filter(|c| c.start_line > chunk.end_line) {
        if !rank::is_tiny(start, end) {
            break;
        }
        end = end.max(next.end_line);
    }
    if rank::is_tiny(start, end)
        && let Some(before) = all.iter().rev().find(|c| c.end_line < chunk.start_line)
    {
        start = before.start_line;
    }
    let overlaps = others.iter().any(|&(s, e)| s <= end && e >= start);
    Ok(((start, end) != (chunk.start_line, chunk.end_line) && !overlaps).then_some((start, end)))
}

/// `--explain`: each channel's rank and score and each boost behind a hit.
fn explain(terms: &QueryTerms, file: &FileScore, scored: &ScoredChunk, scale: &Scale) -> Explain {
    Explain {
        query_class: terms.class,
        file_class: file.class,
        evidence: scored
            .evidence
            .iter()
            .chain(file.history.as_ref())
            .map(|e| ArmEvidence {
                arm: e.arm.as_str(),
                rank: e.rank,
                score: e.score,
                weighted: scale.of(e),
            })
            .collect(),
        chunk_boosts: scored.boosts.clone(),
        file_boosts: file.boosts.clone(),
        chunk_score: scored.score,
        file_score: file.score,
    }
}

/// One result.
fn hit(
    file: &FileScore,
    scored: &ScoredChunk,
    score: f32,
    relevance: f32,
    file_rank: usize,
    explain: Option<Explain>,
) -> Hit {
    let mut channels: Vec<Channel> = scored
        .evidence
        .iter()
        .map(|e| e.arm.channel())
        .chain(file.history.as_ref().map(|_| Channel::History))
        .collect();
    channels.sort();
    channels.dedup();
    let chunk = scored.chunk.clone();
    Hit {
        path: chunk.path,
        start_line: chunk.start_line,
        end_line: chunk.end_line,
        symbol: chunk.symbol,
        kind: chunk.kind,
        language: chunk.language,
        score,
        relevance,
        file_rank,
        channels,
        explain,
    }
}

/// The hits' files whose size or mtime differ from what the index recorded for them (the
/// update's own change check), or gone. An index written before stamps were kept falls back to
/// "modified after `indexed_at`" (whole seconds, blind to an edit in the update's last second
/// and to a file given back an older mtime).
fn stale_files(
    config: &IndexConfig,
    hits: &[Hit],
    indexed_at: i64,
) -> Result<Vec<String>, IndexError> {
    let stamps = store::Stamps::read(&config.dir)?;
    let mut stale: Vec<String> = Vec::new();
    for hit in hits {
        if stale.contains(&hit.path) {
            continue;
        }
        let is_stale = match std::fs::metadata(config.root.join(&hit.path)) {
            Err(_) => true,
            Ok(meta) => match &stamps {
                Some(stamps) => {
                    stamps.get(&hit.path) != Some((meta.len(), walk::mtime_ns(&meta) as u64))
                }
                None => walk::mtime_ns(&meta) / 1_000_000_000 > indexed_at as u128,
            },
        };
        if is_stale {
            stale.push(hit.path.clone());
        }
    }
    Ok(stale)
}

/// Where a candidate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arm {
    Lexical,
    Vector,
    History,
}

impl Arm {
    fn channel(self) -> Channel {
        match self {
            Arm::Lexical => Channel::Lexical,
            Arm::Vector => Channel::Vector,
            Arm::History => Channel::History,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Arm::Lexical => "lexical",
            Arm::Vector => "vector",
            Arm::History => "history",
        }
    }
}

/// One arm's verdict on a chunk (or, for history, a file).
#[derive(Debug, Clone)]
struct Evidence {
    arm: Arm,
    /// 1-based, within the arm.
    rank: usize,
    /// The arm's own score (BM25, cosine similarity, commit match).
    score: f32,
}

struct Candidate {
    chunk: StoredChunk,
    evidence: Vec<Evidence>,
}

struct ScoredChunk {
    score: f32,
    chunk: StoredChunk,
    evidence: Vec<Evidence>,
    boosts: Vec<(&'static str, f32)>,
}

struct FileScore {
    score: f32,
    chunks: Vec<ScoredChunk>,
    history: Option<Evidence>,
    generated: bool,
    class: FileClass,
    boosts: Vec<(&'static str, f32)>,
    /// Which ranking pass it came from (0: the pool; 1: the larger pass for a long list).
    pass: usize,
}

impl FileScore {
    fn new(generated: bool) -> FileScore {
        FileScore {
            pass: 0,
            score: 0.0,
            chunks: Vec::new(),
            history: None,
            generated,
            class: FileClass::Code,
            boosts: Vec::new(),
        }
    }
}

/// Per arm, the range its scores are scaled from.
struct Scale {
    best: HashMap<&'static str, f32>,
    worst: HashMap<&'static str, f32>,
}

impl Scale {
    fn new<'a>(
        candidates: impl Iterator<Item = &'a Candidate>,
        history: impl Iterator<Item = &'a Evidence>,
    ) -> Scale {
        let mut best: HashMap<&'static str, f32> = HashMap::new();
        let mut worst: HashMap<&'static str, f32> = HashMap::new();
        let all = candidates.flat_map(|c| c.evidence.iter()).chain(history);
        for evidence in all {
            let name = evidence.arm.as_str();
            let b = best.entry(name).or_insert(f32::MIN);
            *b = b.max(evidence.score);
            let w = worst.entry(name).or_insert(f32::MAX);
            *w = w.min(evidence.score);
        }
        Scale { best, worst }
    }

    /// `evidence`'s score in 0..=1 within its arm.
    fn of(&self, evidence: &Evidence) -> f32 {
        let name = evidence.arm.as_str();
        let best = self.best.get(name).copied().unwrap_or(1.0);
        if evidence.arm == Arm::Vector {
            let worst = self.worst.get(name).copied().unwrap_or(0.0);
            if best - worst <= f32::EPSILON {
                return 1.0;
            }
            return ((evidence.score - worst) / (best - worst)).clamp(0.0, 1.0);
        }
        if best <= 0.0 {
            return 0.0;
        }
        (evidence.score / best).clamp(0.0, 1.0)
    }
}

/// The vector arm: chunk hits resolved through the lexical index (chunks it no longer holds
/// are dropped). `None` when there are no vectors from this embedder.
fn vector_arm(
    config: &IndexConfig,
    embedder: &dyn Embedder,
    searcher: &Searcher,
    text: &str,
    k: usize,
    allowed: Option<&AllowedKeys>,
) -> Result<Option<Vec<(f32, StoredChunk)>>, IndexError> {
    let meta: Option<Meta> = store::read_json(&config.dir.join("meta.json"))?;
    if meta.is_some_and(|m| m.embedder != embedder.id()) {
        return Ok(None);
    }
    let store = VectorStore::new(&config.dir, &embedder.id(), embedder.dim());
    let Some(loaded) = store.load()? else {
        return Ok(None);
    };
    let query = embedder.embed(&[text])?.pop().unwrap_or_default();
    if query.len() != loaded.dim {
        return Ok(None);
    }
    let hits = crate::graph::search(&config.dir, &loaded, &query, k, &|_, key| {
        allowed.is_none_or(|keys| keys.contains(&key))
    })?;
    let mut out = Vec::with_capacity(hits.len());
    for (id, similarity) in hits {
        if let Some(chunk) = searcher.chunk(id)?
            && allowed.is_none_or(|keys| keys.contains(&file_key(&chunk.path)))
        {
            out.push((similarity, chunk));
        }
    }
    Ok(Some(out))
}
