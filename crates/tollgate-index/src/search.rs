//! Hybrid search: the lexical, vector and history channels each rank files (line and chunk hits
//! mapped to their file), reciprocal rank fusion combines them, boosts and penalties apply
//! after fusion, and each file is shown by its best chunks. Filters narrow every channel before
//! its top-k cut.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::embed::Embedder;
use crate::error::IndexError;
use crate::hash::HashKeySet;
use crate::lexical::{AllowedKeys, Lexical, Searcher, StoredChunk};
use crate::store::{self, ListedFile, Meta, file_key};
use crate::tokenize::tokens;
use crate::vectors::VectorStore;
use crate::walk::{Language, is_test_path};
use crate::{IndexConfig, history};

/// RRF's rank offset; everyone uses 60.
const RRF_K: f32 = 60.0;

/// Factor on a test file's fused score when tests are penalised. At `RRF_K` = 60 a file's
/// score barely falls with rank (rank 1 scores 1/61, rank 10 1/70), so a factor is a large
/// demotion: 0.9 is about seven places at the top ("ranked lower"), where 0.6 sank a test file
/// that every channel put first below files ranked 40th.
const TEST_PENALTY: f32 = 0.9;

/// History evidence kept: files of commits scoring at least this fraction of the best commit.
/// Weaker commits share only common words with the query (every "Merge pull request …"
/// matches one asking about a pull request); their files would add RRF's heavy tail of noise,
/// growing with the number of commits fetched.
const HISTORY_MIN_SCORE: f32 = 0.5;

/// How hard to search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Each channel over-fetches 5× the results asked for (at least 50).
    #[default]
    Fast,
    /// 20× (at least 200), and more commits.
    Deep,
}

/// What to do with test files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tests {
    /// Keep them, ranked lower.
    #[default]
    Penalise,
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

    /// RRF weight of the channel.
    fn weight(self) -> f32 {
        match self {
            Channel::Lexical => 1.0,
            Channel::Vector => 1.0,
            Channel::History => 0.7,
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
    /// The file's fused score (RRF with boosts: small numbers, only their order means much).
    pub score: f32,
    /// Rank of the file (1-based) among the results.
    pub file_rank: usize,
    /// The channels that found this file.
    pub channels: Vec<Channel>,
}

#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub hits: Vec<Hit>,
    /// Channels that took part.
    pub channels: Vec<Channel>,
    /// Why a channel could not take part, and similar.
    pub warnings: Vec<String>,
}

/// Runs a hybrid search over the index at `config.dir`. `embedder` must be the one the index
/// was built with for the vector channel to take part (otherwise it is skipped with a warning).
pub fn search(
    config: &IndexConfig,
    embedder: &dyn Embedder,
    query: &SearchQuery,
) -> Result<SearchOutcome, IndexError> {
    let dir = &config.dir;
    // An index of another format would answer filtered searches with nothing, silently.
    if let Some(meta) = store::read_json::<Meta>(&dir.join("meta.json"))?
        && meta.version != store::FORMAT_VERSION
    {
        return Err(IndexError::Corrupt {
            dir: dir.clone(),
            detail: format!(
                "it has format {}, this Tollgate reads format {}",
                meta.version,
                store::FORMAT_VERSION
            ),
        });
    }
    let Some(lexical) = Lexical::open(&dir.join("lexical"))? else {
        return Err(IndexError::NotIndexed(dir.clone()));
    };
    let searcher = lexical.reader()?;
    let top_k = query.top_k.clamp(1, MAX_TOP_K);
    let fetch = match query.mode {
        Mode::Fast => (top_k * 5).max(50),
        Mode::Deep => (top_k * 20).max(200),
    };
    let wanted = |c: Channel| query.channels.is_empty() || query.channels.contains(&c);
    let mut outcome = SearchOutcome::default();

    // Filters become a set of allowed file keys, applied inside each channel.
    let allowed: Option<AllowedKeys> = if query.filter.restricts() {
        let compiled = query.filter.compile()?;
        let Some(list) = store::read_paths(dir)? else {
            return Err(IndexError::Corrupt {
                dir: dir.clone(),
                detail: format!("{} is missing", store::PATHS_LIST),
            });
        };
        let files = store::listed_files(&list).map_err(|detail| IndexError::Corrupt {
            dir: dir.clone(),
            detail,
        })?;
        let keys: HashKeySet = files
            .into_iter()
            .filter(|file| compiled.allows(*file))
            .map(|file| file_key(file.path))
            .collect();
        Some(Arc::new(keys))
    } else {
        None
    };
    let is_allowed = |path: &str| {
        allowed
            .as_ref()
            .is_none_or(|keys| keys.contains(&file_key(path)))
    };
    let penalise_tests = query.filter.tests == Tests::Penalise;

    // Chunk-level arms, then file ranks per arm.
    let mut arms: Vec<(Channel, Vec<String>)> = Vec::new();
    let mut chunk_scores: HashMap<u64, (f32, StoredChunk)> = HashMap::new();
    let mut add_chunk_arm =
        |channel: Channel, chunks: Vec<StoredChunk>, arms: &mut Vec<(Channel, Vec<String>)>| {
            let mut files = Vec::new();
            let mut seen = HashSet::new();
            for (rank, chunk) in chunks.into_iter().enumerate() {
                if seen.insert(chunk.path.clone()) {
                    files.push(chunk.path.clone());
                }
                let entry = chunk_scores.entry(chunk.chunk_id).or_insert((0.0, chunk));
                entry.0 += channel.weight() / (RRF_K + rank as f32 + 1.0);
            }
            arms.push((channel, files));
        };
    if wanted(Channel::Lexical) {
        let hits = searcher.search(&query.text, fetch, allowed.as_ref())?;
        add_chunk_arm(
            Channel::Lexical,
            hits.into_iter().map(|(_, c)| c).collect(),
            &mut arms,
        );
        outcome.channels.push(Channel::Lexical);
    }
    if wanted(Channel::Vector) {
        match vector_arm(
            config,
            embedder,
            &searcher,
            &query.text,
            fetch,
            allowed.as_ref(),
        ) {
            Ok(Some(chunks)) => {
                add_chunk_arm(Channel::Vector, chunks, &mut arms);
                outcome.channels.push(Channel::Vector);
            }
            Ok(None) => outcome.warnings.push(format!(
                "vector channel skipped: the index holds no vectors from embedder {}",
                embedder.id()
            )),
            Err(err) => outcome
                .warnings
                .push(format!("vector channel skipped: {err}")),
        }
    }
    if wanted(Channel::History) {
        let history_dir = dir.join("history");
        if history_dir.join("meta.json").exists() {
            let commits = match query.mode {
                Mode::Fast => 100,
                Mode::Deep => 400,
            };
            let ranked = history::rank_files(&history_dir, &query.text, commits)?;
            let files: Vec<String> = ranked
                .into_iter()
                .filter(|(_, score)| *score >= HISTORY_MIN_SCORE)
                .map(|(path, _)| path)
                .filter(|path| is_allowed(path))
                .take(fetch)
                .collect();
            arms.push((Channel::History, files));
            outcome.channels.push(Channel::History);
        }
    }

    // File-level RRF.
    let mut fused: BTreeMap<String, (f32, Vec<Channel>)> = BTreeMap::new();
    for (channel, files) in &arms {
        for (rank, path) in files.iter().enumerate() {
            let entry = fused.entry(path.clone()).or_insert((0.0, Vec::new()));
            entry.0 += channel.weight() / (RRF_K + rank as f32 + 1.0);
            entry.1.push(*channel);
        }
    }
    let query_words: HashSet<String> = tokens(&query.text).into_iter().collect();
    let mut by_file: HashMap<String, Vec<(f32, StoredChunk)>> = HashMap::new();
    for (score, chunk) in chunk_scores.into_values() {
        by_file
            .entry(chunk.path.clone())
            .or_default()
            .push((score, chunk));
    }
    let mut ranked: Vec<(String, f32, Vec<Channel>)> = fused
        .into_iter()
        .map(|(path, (mut score, channels))| {
            if penalise_tests && is_test_path(&path) {
                score *= TEST_PENALTY;
            }
            // Boosts after fusion: a query word naming a definition found in the file, or the
            // file itself.
            let names_symbol = by_file.get(&path).is_some_and(|chunks| {
                chunks.iter().any(|(_, c)| {
                    c.symbol.as_ref().is_some_and(|s| {
                        let last = s.rsplit("::").next().unwrap_or(s).to_lowercase();
                        query_words.contains(&last)
                    })
                })
            });
            if names_symbol {
                score *= 1.15;
            }
            let stem = path
                .rsplit('/')
                .next()
                .and_then(|n| n.split('.').next())
                .unwrap_or("")
                .to_lowercase();
            if !stem.is_empty() && query_words.contains(&stem) {
                score *= 1.1;
            }
            (path, score, channels)
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let per_file = query.chunks_per_file.max(1);
    for (file_rank, (path, score, channels)) in ranked.into_iter().enumerate() {
        if outcome.hits.len() >= top_k {
            break;
        }
        let mut chunks = by_file.remove(&path).unwrap_or_default();
        if chunks.is_empty() {
            // Found by history only: show its best-matching chunk, else its first.
            let only: AllowedKeys = Arc::new(HashKeySet::from_iter([file_key(&path)]));
            chunks = searcher
                .search(&query.text, 1, Some(&only))?
                .into_iter()
                .map(|(_, c)| (0.0, c))
                .collect();
            if chunks.is_empty() {
                chunks = searcher
                    .chunks_of(&path)?
                    .into_iter()
                    .take(1)
                    .map(|c| (0.0, c))
                    .collect();
            }
            if chunks.is_empty() {
                continue; // No longer indexed.
            }
        }
        chunks.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.start_line.cmp(&b.1.start_line))
        });
        for (_, chunk) in chunks.into_iter().take(per_file) {
            if outcome.hits.len() >= top_k {
                break;
            }
            outcome.hits.push(Hit {
                path: chunk.path,
                start_line: chunk.start_line,
                end_line: chunk.end_line,
                symbol: chunk.symbol,
                kind: chunk.kind,
                language: chunk.language,
                score,
                file_rank: file_rank + 1,
                channels: channels.clone(),
            });
        }
    }
    Ok(outcome)
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
) -> Result<Option<Vec<StoredChunk>>, IndexError> {
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
    for (id, _) in hits {
        if let Some(chunk) = searcher.chunk(id)?
            && allowed.is_none_or(|keys| keys.contains(&file_key(&chunk.path)))
        {
            out.push(chunk);
        }
    }
    Ok(Some(out))
}
