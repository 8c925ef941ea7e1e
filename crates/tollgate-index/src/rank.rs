//! The ranking signals applied on top of the channels: what kind of query this is (a name,
//! words, a question), how well a chunk's symbol names what was asked, which files are tests,
//! docs, changelogs, generated or vendored and whether the query asks for them, how a
//! file's chunks add up, and which files a change description names. Each signal can be
//! switched off by name (`TOLLGATE_SEARCH_SIGNALS_OFF`) so an evaluation can measure it alone;
//! search wires them together.

use std::collections::{HashMap, HashSet};

use crate::tokenize::tokens;
use crate::walk::is_test_path;

/// What a query looks like: a name (whose definition it asks for) or words. Channel weights by
/// class were measured and made no difference (BENCHMARKS.md), so every channel weighs the
/// same; the class decides how names are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryClass {
    /// One identifier: `Semantics`, `parse_args`, `rewrite_asserts`.
    Identifier,
    /// A qualified name: `hir::Semantics`, `_pytest.assertion.rewrite`, `Foo#bar`.
    Qualified,
    /// A file path or name: `src/main.rs`, `conftest.py`.
    Path,
    /// Words: "how does pytest rewrite assert statements".
    NaturalLanguage,
}

impl QueryClass {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryClass::Identifier => "identifier",
            QueryClass::Qualified => "qualified",
            QueryClass::Path => "path",
            QueryClass::NaturalLanguage => "natural-language",
        }
    }
}

/// Known file extensions, for telling `conftest.py` (a path) from `os.path` (a name).
const PATH_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "swift", "c",
    "h", "cc", "cpp", "hpp", "cs", "rb", "php", "md", "toml", "yaml", "yml", "json", "txt", "cfg",
    "ini", "sh",
];

pub fn classify(query: &str) -> QueryClass {
    let query = query.trim();
    if query.split_whitespace().count() != 1 {
        return QueryClass::NaturalLanguage;
    }
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if query.contains('/')
        || query
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && PATH_EXTENSIONS.contains(&ext))
    {
        return QueryClass::Path;
    }
    let segments: Vec<&str> = query
        .split("::")
        .flat_map(|s| s.split(['.', '#']))
        .collect();
    if segments.len() > 1 && segments.iter().all(|s| is_ident(s)) {
        return QueryClass::Qualified;
    }
    let trimmed = query.trim_end_matches("()");
    if is_ident(trimmed) {
        return QueryClass::Identifier;
    }
    QueryClass::NaturalLanguage
}

/// A ranking signal that can be switched off for an ablation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// Boosts for chunks whose symbol is what the query names, definitions over impls and uses.
    Definitions,
    /// A file's extra chunks add with diminishing returns (off: the best chunk alone counts).
    FileAggregation,
    /// Tests, docs, changelogs, generated and vendored files rank lower unless asked for.
    FileClassPenalty,
    /// A query asks for tests only when it names them as what it wants ("tests for X"), not
    /// when "test" is part of what it asks about ("when the test passes").
    TestIntent,
    /// A question ("how is …", "where are …") asks about code: tests rank lower for it than
    /// for a change description, whose changes usually include tests.
    QuestionTests,
    /// A change description ("Fix hover links in docs") lifts a file whose name holds one of
    /// its words (`hover.rs`), compared after a light stemming and without change boilerplate.
    PathWords,
    /// A chunk of three lines or fewer (a `package` header, a one-line re-export, a `mod.rs`
    /// preamble) counts for half in its file's score, is shown only when the file has no
    /// substantive chunk among the candidates, and is then shown merged with its neighbour.
    TinyChunks,
    /// An architecture question ("how are extractors organised", "where does the routing
    /// machinery live", "what does the package export") lifts the hub module of what it names
    /// (`extract/mod.rs`, `router.ts`, `_transports/base.py`) or the package's entry point,
    /// found among all the index's paths, not only the channels' candidates.
    HubModules,
    /// Manifests (`Cargo.toml`, `package.json`, `requirements.txt`, …), examples and
    /// benchmarks rank lower unless asked for, like docs.
    ManifestPenalty,
}

impl Signal {
    const ALL: [Signal; 9] = [
        Signal::Definitions,
        Signal::FileAggregation,
        Signal::FileClassPenalty,
        Signal::TestIntent,
        Signal::QuestionTests,
        Signal::PathWords,
        Signal::TinyChunks,
        Signal::HubModules,
        Signal::ManifestPenalty,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Definitions => "definitions",
            Signal::FileAggregation => "file-aggregation",
            Signal::FileClassPenalty => "file-class-penalty",
            Signal::TestIntent => "test-intent",
            Signal::QuestionTests => "question-tests",
            Signal::PathWords => "path-words",
            Signal::TinyChunks => "tiny-chunks",
            Signal::HubModules => "hub-modules",
            Signal::ManifestPenalty => "manifest-penalty",
        }
    }
}

/// Which signals a search uses: all, unless an evaluation names some to leave out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signals {
    off: HashSet<&'static str>,
}

impl Signals {
    /// All signals except those named in `TOLLGATE_SEARCH_SIGNALS_OFF` (comma-separated, for
    /// ablations; unknown names are ignored so an older binary runs a newer evaluation).
    pub fn from_env() -> Signals {
        let off = std::env::var("TOLLGATE_SEARCH_SIGNALS_OFF").unwrap_or_default();
        let names: Vec<&str> = off.split(',').map(str::trim).collect();
        Signals {
            off: Signal::ALL
                .iter()
                .map(|s| s.as_str())
                .filter(|name| names.contains(name))
                .collect(),
        }
    }

    /// All signals but `off` (for tests and evaluations).
    pub fn without(off: &[Signal]) -> Signals {
        Signals {
            off: off.iter().map(|s| s.as_str()).collect(),
        }
    }

    pub fn on(&self, signal: Signal) -> bool {
        !self.off.contains(signal.as_str())
    }
}

/// What the query names, prepared once per search.
#[derive(Debug)]
pub(crate) struct QueryTerms {
    pub class: QueryClass,
    /// Content words, lowercased (the tokenizer's tokens).
    pub words: HashSet<String>,
    /// For identifier and qualified queries: the name asked for, as written, and its qualifier
    /// segments lowercased (`hir::Semantics` → `Semantics`, [`hir`]).
    pub name: Option<String>,
    pub qualifiers: Vec<String>,
    /// Words that ask for tests, docs, changelogs or generated code.
    pub asks_for: HashSet<FileClass>,
    /// A question about the code (`how is …`, `where are …`): see [`FileClass::penalty`].
    pub question: bool,
    /// A description of a change (words, not a question: a PR or commit title), whose answer
    /// is the set of files such a change touches.
    pub change: bool,
    /// For a change description: its content words, stemmed ([`stem`]), without stop words
    /// and change boilerplate (`fix`, `add`, `support`, …).
    pub change_words: Vec<String>,
    /// For an architecture question ([`is_architecture`]): its content words, stemmed,
    /// without the question's own (`how`, `organised`, `machinery`, …); and whether it asks
    /// for the package's entry point (`entry point`, `export`).
    pub hub_words: Vec<String>,
    pub entry_point: bool,
}

impl QueryTerms {
    pub fn new(text: &str, signals: &Signals) -> QueryTerms {
        let class = classify(text);
        let words: HashSet<String> = tokens(text).into_iter().collect();
        let (name, qualifiers) = match class {
            QueryClass::Identifier => {
                (Some(text.trim().trim_end_matches("()").to_string()), vec![])
            }
            QueryClass::Qualified => {
                let mut segments: Vec<&str> = text
                    .trim()
                    .trim_end_matches("()")
                    .split("::")
                    .flat_map(|s| s.split(['.', '#']))
                    .collect();
                let name = segments.pop().map(str::to_string);
                (
                    name,
                    segments.iter().map(|s| s.to_ascii_lowercase()).collect(),
                )
            }
            QueryClass::Path | QueryClass::NaturalLanguage => (None, vec![]),
        };
        let asks_for = FileClass::ALL
            .into_iter()
            .filter(|class| class.asked_by(text, &words, signals.on(Signal::TestIntent)))
            .collect();
        let change = class == QueryClass::NaturalLanguage && !is_question(text);
        let mut change_words: Vec<String> = if change {
            tokens(text)
                .iter()
                .filter(|w| w.len() > 2 && !is_change_boilerplate(w))
                .map(|w| stem(w).to_string())
                .collect()
        } else {
            Vec::new()
        };
        change_words.sort();
        change_words.dedup();
        let architecture = signals.on(Signal::HubModules) && is_architecture(text);
        let mut hub_words: Vec<String> = if architecture {
            tokens(text)
                .iter()
                .filter(|w| w.len() > 2 && !is_architecture_filler(w))
                .map(|w| stem(w).to_string())
                .collect()
        } else {
            Vec::new()
        };
        hub_words.sort();
        hub_words.dedup();
        let entry_point = architecture
            && tokens(text)
                .iter()
                .any(|w| matches!(w.as_str(), "entry" | "export" | "exports" | "exported"));
        QueryTerms {
            class,
            words,
            name,
            qualifiers,
            asks_for,
            question: signals.on(Signal::QuestionTests) && is_question(text),
            change,
            change_words,
            hub_words,
            entry_point,
        }
    }
}

/// Words that make a question one about the code's architecture: how something is organised,
/// where its machinery lives, what a package exports.
const ARCHITECTURE_WORDS: &[&str] = &[
    "organised",
    "organized",
    "organise",
    "organize",
    "organisation",
    "organization",
    "structured",
    "structure",
    "architecture",
    "machinery",
    "live",
    "lives",
    "layer",
    "layers",
    "hierarchy",
    "entry",
    "export",
    "exports",
];

/// Whether `query` is a question about how the code is organised ("how are extractors
/// organised", "where does the routing machinery live", "what does the package export").
pub(crate) fn is_architecture(query: &str) -> bool {
    is_question(query)
        && tokens(query)
            .iter()
            .any(|w| ARCHITECTURE_WORDS.contains(&w.as_str()))
}

/// Words of an architecture question that name no part of the code.
fn is_architecture_filler(word: &str) -> bool {
    ARCHITECTURE_WORDS.contains(&word)
        || matches!(
            word,
            "how"
                | "where"
                | "what"
                | "which"
                | "does"
                | "the"
                | "are"
                | "and"
                | "into"
                | "from"
                | "for"
                | "its"
                | "their"
                | "run"
                | "main"
                | "point"
                | "package"
                | "publicly"
                | "public"
                | "module"
                | "modules"
                | "code"
                | "logic"
        )
}

/// Two stemmed words that name the same thing in a path and a question (`extract` and
/// `extractor`, `routing` and `rout`): equal, or one a prefix of the other holding at least
/// five letters and four fifths of the shorter.
fn same_word(a: &str, b: &str) -> bool {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let shorter = a.len().min(b.len());
    a == b || (common >= 5 && common == shorter && common * 5 >= shorter * 4)
}

/// File names that stand for their directory (a hub: `mod.rs`, `index.ts`, `__init__.py`, a
/// Go package's file named after it, a `base` module).
fn is_hub_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    let dir = path.rsplit('/').nth(1).unwrap_or("");
    matches!(stem, "mod" | "index" | "__init__" | "lib" | "base" | "init")
        || (!dir.is_empty() && stem == dir.trim_start_matches('_'))
}

/// A package's entry point: `lib.rs`, `index.ts`/`index.js`, a top-level `__init__.py`.
fn is_entry_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    matches!(stem, "lib" | "index" | "__init__") && !name.ends_with(".d.ts")
}

/// For an architecture question, the hub files among `paths` (every code file of the index)
/// with their weight in 0..=1: the share of the question's words that the file's directory
/// (for a hub name) or its own name holds, each word counting 1/√(files it names); for an
/// entry-point question, the shallowest entry files count 1. At most [`MAX_HUBS`] files, best
/// first; empty for any other query.
pub(crate) fn hub_files<'a>(terms: &QueryTerms, paths: &[&'a str]) -> Vec<(&'a str, f32)> {
    if terms.hub_words.is_empty() && !terms.entry_point {
        return Vec::new();
    }
    let matched: Vec<Vec<usize>> = paths
        .iter()
        .map(|path| {
            let mut words = name_words(path);
            if is_hub_name(path) {
                let dir = path.rsplit('/').nth(1).unwrap_or("");
                words.extend(tokens(dir).iter().map(|w| stem(w).to_string()));
            }
            let mut hit: Vec<usize> = terms
                .hub_words
                .iter()
                .enumerate()
                .filter(|(_, q)| words.iter().any(|w| same_word(w, q)))
                .map(|(i, _)| i)
                .collect();
            hit.dedup();
            hit
        })
        .collect();
    let mut n_files = vec![0usize; terms.hub_words.len()];
    for &i in matched.iter().flatten() {
        n_files[i] += 1;
    }
    let n_words = terms.hub_words.len().max(1) as f32;
    let mut hubs: Vec<(&str, f32, usize)> = paths
        .iter()
        .zip(&matched)
        .filter(|(_, hit)| !hit.is_empty())
        .map(|(path, hit)| {
            let share: f32 = hit.iter().map(|&i| 1.0 / (n_files[i] as f32).sqrt()).sum();
            (*path, share / n_words, path.matches('/').count())
        })
        .collect();
    if terms.entry_point {
        let entries: Vec<(&str, usize)> = paths
            .iter()
            .filter(|p| is_entry_name(p))
            .map(|p| (*p, p.matches('/').count()))
            .collect();
        if let Some(shallowest) = entries.iter().map(|e| e.1).min() {
            hubs.extend(
                entries
                    .iter()
                    .filter(|e| e.1 <= shallowest + 1)
                    .map(|&(p, depth)| (p, 0.5f32.powi((depth - shallowest) as i32), depth)),
            );
        }
    }
    hubs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(b.0)));
    let mut seen = HashSet::new();
    hubs.retain(|h| seen.insert(h.0));
    hubs.truncate(MAX_HUBS);
    hubs.into_iter().map(|(p, w, _)| (p, w)).collect()
}

/// The most hub files an architecture question lifts.
pub(crate) const MAX_HUBS: usize = 4;

/// A chunk of this many lines or fewer is a fragment ([`Signal::TinyChunks`]).
pub(crate) const TINY_CHUNK_LINES: usize = 3;

pub(crate) fn is_tiny(start_line: usize, end_line: usize) -> bool {
    end_line.saturating_sub(start_line) < TINY_CHUNK_LINES
}

/// Words of a change description that say what kind of change it is, not what it changes
/// (file names such as `fix_visibility.rs` or `add_missing_match_arms.rs` hold them too).
fn is_change_boilerplate(word: &str) -> bool {
    matches!(
        stem(word),
        "fix"
            | "add"
            | "remove"
            | "support"
            | "use"
            | "allow"
            | "make"
            | "don"
            | "not"
            | "dont"
            | "when"
            | "handle"
            | "improve"
            | "update"
            | "change"
            | "instead"
            | "properly"
            | "correctly"
            | "issue"
            | "bug"
            | "new"
    )
}

/// A word without its inflection (`traits` → `trait`, `priming` → `prim`, `fixed` → `fix`),
/// so a title's words meet file names however either is inflected; a stem keeps 3 letters.
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(root) = word.strip_suffix(suffix)
            && root.len() >= 3
        {
            return root;
        }
    }
    word
}

/// Words of file names that say nothing about what the file is for.
fn is_path_filler(word: &str) -> bool {
    matches!(
        word,
        "src" | "lib" | "mod" | "crate" | "test" | "rs" | "py" | "index" | "init" | "main"
    )
}

/// For a change description, the factor on each of `paths` (the candidate files) whose name
/// (its stem, split into words and stemmed) holds words of the description: 1 + the share of
/// the description's words it holds, each word counting 1/√(candidates whose name holds it),
/// since a word that names many files (`string.test.ts` in every copy of a schema library)
/// tells none of them apart. `None` for a file whose name holds none, and for every file
/// when the query is not a change description.
pub(crate) fn path_words_boosts(terms: &QueryTerms, paths: &[&str]) -> Vec<Option<f32>> {
    if !terms.change || terms.change_words.is_empty() {
        return vec![None; paths.len()];
    }
    let matched: Vec<Vec<&str>> = paths
        .iter()
        .map(|path| {
            name_words(path)
                .into_iter()
                .filter_map(|w| {
                    let i = terms.change_words.binary_search(&w).ok()?;
                    Some(terms.change_words[i].as_str())
                })
                .collect()
        })
        .collect();
    let mut n_files: HashMap<&str, usize> = HashMap::new();
    for word in matched.iter().flatten() {
        *n_files.entry(word).or_insert(0) += 1;
    }
    let n_words = terms.change_words.len() as f32;
    matched
        .iter()
        .map(|words| {
            (!words.is_empty()).then(|| {
                let share: f32 = words.iter().map(|w| 1.0 / (n_files[w] as f32).sqrt()).sum();
                1.0 + PATH_WORDS_WEIGHT * share / n_words
            })
        })
        .collect()
}

/// The words of a file's name without its extension, stemmed, without filler.
fn name_words(path: &str) -> Vec<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem_of_name = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let mut words: Vec<String> = tokens(stem_of_name)
        .iter()
        .filter(|w| !is_path_filler(w))
        .map(|w| stem(w).to_string())
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The weight of [`path_words_boosts`] (chosen on rust-analyzer, pytest and flask: 0.5, 1, 2).
const PATH_WORDS_WEIGHT: f32 = 1.0;

/// Kinds that define something, as the chunker names them.
fn is_definition_kind(kind: &str) -> bool {
    matches!(
        kind,
        "struct"
            | "enum"
            | "union"
            | "trait"
            | "class"
            | "interface"
            | "type"
            | "function"
            | "method"
            | "macro"
            | "const"
            | "static"
            | "module"
            | "namespace"
    )
}

/// Type-like definitions answer a name query before functions do (a type is what a bare
/// capitalised name usually means).
fn is_type_kind(kind: &str) -> bool {
    matches!(
        kind,
        "struct" | "enum" | "union" | "trait" | "class" | "interface" | "type"
    )
}

/// The boost for a chunk whose symbol matches the query, with why. `symbol` is the chunk's
/// display name (`Parent::name`, `impl Trait for Type`), `kind` its kind, `path` its file.
pub(crate) fn definition_boost(
    terms: &QueryTerms,
    symbol: Option<&str>,
    kind: &str,
    path: &str,
) -> Option<(f32, &'static str)> {
    let symbol = symbol?;
    let last = symbol.rsplit("::").next().unwrap_or(symbol);
    let last = last.rsplit('.').next().unwrap_or(last);
    if let Some(name) = &terms.name {
        let exact = last == name;
        let folded = !exact && last.eq_ignore_ascii_case(name);
        if exact || folded {
            let mut factor = match (exact, is_definition_kind(kind)) {
                (true, true) => 3.0,
                (false, true) => 2.4,
                (_, false) => 1.4, // `impl Foo`, a heading, a window named after it
            };
            if is_type_kind(kind) {
                factor *= 1.15;
            }
            // Each qualifier found in the path or the symbol's parents confirms the name.
            let lower_path = path.to_ascii_lowercase();
            let lower_symbol = symbol.to_ascii_lowercase();
            let confirmed = terms
                .qualifiers
                .iter()
                .filter(|q| lower_path.contains(q.as_str()) || lower_symbol.contains(q.as_str()))
                .count();
            factor *= 1.0 + 0.3 * confirmed as f32;
            return Some((
                factor,
                if exact {
                    "definition"
                } else {
                    "definition (case)"
                },
            ));
        }
        // `impl Display for Semantics`: the type it is for.
        if kind == "impl" && symbol.split_whitespace().last() == Some(name.as_str()) {
            return Some((1.3, "impl of the name"));
        }
    }
    // Sub-token matches: a query word that is a whole part of the symbol's name. Not for
    // questions in words: there it lifted any definition sharing a common word (measured: "PR
    // title → files" and questions both ranked better without it).
    if terms.words.is_empty()
        || !is_definition_kind(kind)
        || terms.class == QueryClass::NaturalLanguage
    {
        return None;
    }
    let parts = tokens(last);
    let matched = parts.iter().filter(|p| terms.words.contains(*p)).count();
    if matched == 0 {
        return None;
    }
    let whole = tokens(last)
        .first()
        .is_some_and(|w| terms.words.contains(w));
    let factor = if whole {
        1.3
    } else {
        1.0 + 0.2 * (matched as f32 / parts.len().max(1) as f32)
    };
    Some((factor, "symbol words"))
}

/// What a file is, for ranking: code unless its path or content says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileClass {
    Code,
    Test,
    Docs,
    Changelog,
    Generated,
    Vendored,
    /// A package manifest or dependency list (`Cargo.toml`, `package.json`, `go.mod`, …).
    Manifest,
    /// Examples and benchmarks (`examples/`, `benches/`, `benchmarks/`).
    Example,
}

impl FileClass {
    const ALL: [FileClass; 8] = [
        FileClass::Code,
        FileClass::Test,
        FileClass::Docs,
        FileClass::Changelog,
        FileClass::Generated,
        FileClass::Vendored,
        FileClass::Manifest,
        FileClass::Example,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FileClass::Code => "code",
            FileClass::Test => "test",
            FileClass::Docs => "docs",
            FileClass::Changelog => "changelog",
            FileClass::Generated => "generated",
            FileClass::Vendored => "vendored",
            FileClass::Manifest => "manifest",
            FileClass::Example => "example",
        }
    }

    /// The factor on a file of this class when the query does not ask for it; `question`:
    /// the query is a question about the code ([`is_question`]).
    pub(crate) fn penalty(self, question: bool) -> f32 {
        match self {
            FileClass::Code => 1.0,
            // Strong: the question is about the code, and a test names what it tests as
            // often as the code does (measured: 0.4 over 0.6 and 0.75, BENCHMARKS.md).
            FileClass::Test if question => 0.4,
            // Mild: a change to code usually changes its tests too.
            FileClass::Test => 0.85,
            FileClass::Docs => 0.6,
            FileClass::Changelog => 0.35,
            FileClass::Generated => 0.7,
            FileClass::Vendored => 0.5,
            FileClass::Manifest => 0.5,
            FileClass::Example => 0.6,
        }
    }

    /// Whether `query` asks for files of this class (`tests for …`, `the docs of …`).
    pub fn asked_for(self, query: &str) -> bool {
        self.asked_by(query, &tokens(query).into_iter().collect(), true)
    }

    /// `words` are `query`'s tokens; `test_intent`: tests are asked for only by name
    /// ([`names_tests`]), otherwise by any test word.
    fn asked_by(self, query: &str, words: &HashSet<String>, test_intent: bool) -> bool {
        let any = |list: &[&str]| list.iter().any(|w| words.contains(*w));
        match self {
            FileClass::Code => false,
            FileClass::Test if test_intent => names_tests(query),
            FileClass::Test => any(TEST_WORDS),
            FileClass::Docs => any(&["doc", "docs", "documentation", "readme", "guide"]),
            FileClass::Changelog => any(&["changelog", "changes", "release", "news"]),
            FileClass::Generated => any(&["generated", "codegen", "generate"]),
            FileClass::Vendored => any(&["vendor", "vendored", "third"]),
            FileClass::Manifest => any(&[
                "manifest",
                "dependency",
                "dependencies",
                "cargo",
                "requirements",
            ]),
            FileClass::Example => any(&[
                "example",
                "examples",
                "bench",
                "benches",
                "benchmark",
                "benchmarks",
            ]),
        }
    }

    /// The class of `path`; `generated` when its content announced it.
    pub fn of(path: &str, generated: bool) -> FileClass {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let dirs: Vec<&str> = lower.split('/').rev().skip(1).collect();
        let stem = name.split('.').next().unwrap_or(name);
        if matches!(
            stem,
            "changelog" | "changes" | "history" | "news" | "release-notes" | "releases"
        ) || dirs
            .iter()
            .any(|d| matches!(*d, "changelog" | "changelogs" | "changes" | "changelog.d"))
        {
            return FileClass::Changelog;
        }
        if dirs.iter().any(|d| {
            matches!(
                *d,
                "vendor" | "vendored" | "third_party" | "thirdparty" | "external" | "node_modules"
            )
        }) {
            return FileClass::Vendored;
        }
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        let is_docs = matches!(ext, "md" | "mdx" | "rst" | "adoc")
            || dirs
                .iter()
                .any(|d| matches!(*d, "doc" | "docs" | "documentation" | "website"));
        // Generated docs are docs first (the stronger penalty).
        if is_docs {
            return FileClass::Docs;
        }
        if generated
            || dirs.iter().any(|d| d.contains("generated"))
            || stem.contains("generated")
            || name.ends_with(".pb.go")
            || name.ends_with("_pb2.py")
        {
            return FileClass::Generated;
        }
        if is_test_path(path) {
            return FileClass::Test;
        }
        if dirs.iter().any(|d| {
            matches!(
                *d,
                "example" | "examples" | "bench" | "benches" | "benchmark" | "benchmarks"
            )
        }) {
            return FileClass::Example;
        }
        if is_manifest(name) {
            return FileClass::Manifest;
        }
        FileClass::Code
    }
}

/// Package manifests, lock-free dependency lists and build descriptions, by file name.
fn is_manifest(name: &str) -> bool {
    matches!(
        name,
        "cargo.toml"
            | "package.json"
            | "go.mod"
            | "go.sum"
            | "pyproject.toml"
            | "setup.py"
            | "setup.cfg"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
            | "gemfile"
            | "composer.json"
            | "tsconfig.json"
            | "deno.json"
            | "jsr.json"
            | "directory.build.props"
            | "directory.packages.props"
    ) || name.ends_with(".csproj")
        || name.ends_with(".gemspec")
        || (name.starts_with("requirements") && name.ends_with(".txt"))
        || (name.starts_with("package.") && name.ends_with(".json"))
}

/// Whether `query` is a question (it opens with a question word: `how`, `where`, `which`, …),
/// not a description of a change (`Fix …`, `Add …`, `Do not …`).
pub(crate) fn is_question(query: &str) -> bool {
    let first = query
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .map(str::to_lowercase);
    matches!(
        first.as_deref(),
        Some(
            "how"
                | "where"
                | "what"
                | "which"
                | "when"
                | "why"
                | "who"
                | "whats"
                | "does"
                | "is"
                | "are"
                | "can"
        )
    )
}

/// Words that can name tests.
const TEST_WORDS: &[&str] = &["test", "tests", "testing", "spec", "specs", "fixture"];

/// Whether `query` names tests as what it wants: a test word that opens it, is followed by
/// what the tests are of (`tests for parsing`, `test of X`, `specs in foo`), follows a verb
/// or qualifier that makes it the object (`add regression test`, `fix flaky tests`) or ends
/// a change description (`add router promise tests`). A test
/// word that is only part of the subject (`when the test passes`, `during tests`, `test
/// functions` in pytest, where everything is about tests) does not.
pub(crate) fn names_tests(query: &str) -> bool {
    let words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.iter().enumerate().any(|(i, word)| {
        if !TEST_WORDS.contains(&word.as_str()) {
            return false;
        }
        let next = words.get(i + 1).map(String::as_str);
        let previous = i.checked_sub(1).map(|p| words[p].as_str());
        i == 0
            // `add router promise tests`: the head of a change description's object.
            || (i + 1 == words.len() && !is_question(query))
            || matches!(
                next,
                Some("for" | "of" | "in" | "covering" | "that" | "which")
            )
            || matches!(
                previous,
                Some(
                    "add"
                        | "adds"
                        | "added"
                        | "adding"
                        | "fix"
                        | "fixes"
                        | "fixed"
                        | "more"
                        | "missing"
                        | "new"
                        | "regression"
                        | "unit"
                        | "integration"
                        | "e2e"
                        | "flaky"
                        | "failing"
                        | "broken"
                        | "our"
                        | "its"
                        | "their"
                )
            )
    })
}

/// A chunk of an in-file test module (Rust's `mod tests`, a `tests::…` function): test code
/// in a file of code.
pub(crate) fn is_test_chunk(symbol: Option<&str>) -> bool {
    symbol.is_some_and(|s| {
        matches!(s, "tests" | "test") || s.starts_with("tests::") || s.starts_with("test::")
    })
}

/// A file's score from its chunks' scores, best first: the best counts whole and each further
/// chunk less, so one file with many matching chunks cannot outweigh several good files.
pub(crate) fn aggregate(sorted_chunk_scores: &[f32]) -> f32 {
    let mut weight = 0.25;
    let mut total = sorted_chunk_scores.first().copied().unwrap_or(0.0);
    for score in sorted_chunk_scores.iter().skip(1).take(4) {
        total += weight * score;
        weight *= 0.5;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_classified() {
        assert_eq!(classify("Semantics"), QueryClass::Identifier);
        assert_eq!(classify("parse_args"), QueryClass::Identifier);
        assert_eq!(classify("hir::Semantics"), QueryClass::Qualified);
        assert_eq!(classify("_pytest.assertion.rewrite"), QueryClass::Qualified);
        assert_eq!(classify("src/main.rs"), QueryClass::Path);
        assert_eq!(classify("conftest.py"), QueryClass::Path);
        assert_eq!(
            classify("how does pytest rewrite assert statements"),
            QueryClass::NaturalLanguage
        );
    }

    #[test]
    fn definitions_beat_impls_and_uses() {
        let terms = QueryTerms::new("hir::Semantics", &Signals::default());
        let def = definition_boost(
            &terms,
            Some("Semantics"),
            "struct",
            "crates/hir/src/semantics.rs",
        )
        .unwrap()
        .0;
        let imp = definition_boost(
            &terms,
            Some("impl Clone for Semantics"),
            "impl",
            "crates/hir/src/semantics.rs",
        )
        .unwrap()
        .0;
        let elsewhere =
            definition_boost(&terms, Some("Semantics"), "struct", "crates/ide/src/x.rs")
                .unwrap()
                .0;
        assert!(
            def > elsewhere && elsewhere > imp,
            "{def} {elsewhere} {imp}"
        );
        assert!(definition_boost(&terms, Some("other"), "function", "a.rs").is_none());
    }

    #[test]
    fn file_classes_come_from_paths() {
        assert_eq!(FileClass::of("src/lib.rs", false), FileClass::Code);
        assert_eq!(
            FileClass::of("crates/ide/src/tests.rs", false),
            FileClass::Test
        );
        assert_eq!(
            FileClass::of("changelog/1234.bugfix.rst", false),
            FileClass::Changelog
        );
        assert_eq!(FileClass::of("CHANGELOG.md", false), FileClass::Changelog);
        assert_eq!(FileClass::of("doc/en/how-to.rst", false), FileClass::Docs);
        assert_eq!(
            FileClass::of("crates/syntax/src/ast/generated/nodes.rs", false),
            FileClass::Generated
        );
        assert_eq!(FileClass::of("src/lints.rs", true), FileClass::Generated);
        let asks = QueryTerms::new("where are the tests for parsing", &Signals::default()).asks_for;
        assert!(asks.contains(&FileClass::Test) && !asks.contains(&FileClass::Docs));
    }

    #[test]
    fn tests_are_asked_for_by_name_not_by_subject() {
        for asks in [
            "where are the tests for parsing",
            "tests of the config loader",
            "Add regression test for the lexer",
            "fix flaky tests",
            "test the parser",
            "add router promise tests",
        ] {
            assert!(names_tests(asks), "{asks}");
        }
        for about in [
            "how is a strict xfail turned into a failure when the test passes",
            "how is output captured at the file descriptor level during tests",
            "how are test functions collected from a python module",
            "how are fixture scopes ordered from function to session",
            "how are unittest TestCase classes collected and run",
        ] {
            assert!(!names_tests(about), "{about}");
        }
        let query = "how is a strict xfail turned into a failure when the test passes";
        let on = QueryTerms::new(query, &Signals::default());
        assert!(!on.asks_for.contains(&FileClass::Test));
        let off = Signals::without(&[Signal::TestIntent]);
        assert!(
            QueryTerms::new(query, &off)
                .asks_for
                .contains(&FileClass::Test)
        );
    }

    #[test]
    fn change_descriptions_lift_files_named_after_their_words() {
        let on = Signals::default();
        let change = QueryTerms::new("Fix hover links for traits", &on);
        assert!(change.change);
        assert_eq!(change.change_words, ["hover", "link", "trait"]);
        let paths = [
            "crates/ide/src/hover.rs",
            "crates/hir-ty/src/tests/traits.rs",
            "src/hover_links.rs",
            // Boilerplate and directories name nothing.
            "crates/ide-assists/src/handlers/fix_visibility.rs",
            "crates/links/src/lib.rs",
        ];
        let third = 1.0 / 3.0;
        let shared = third / 2f32.sqrt(); // `hover` names two of the files
        let rounded = |factors: Vec<Option<f32>>| -> Vec<Option<i32>> {
            factors
                .into_iter()
                .map(|f| f.map(|f| (f * 1e4).round() as i32))
                .collect()
        };
        assert_eq!(
            rounded(path_words_boosts(&change, &paths)),
            rounded(vec![
                Some(1.0 + shared),
                Some(1.0 + third),
                Some(1.0 + shared + third),
                None,
                None
            ])
        );
        // Neither a question nor a name is a change description.
        let question = QueryTerms::new("how are hover links rendered", &on);
        assert!(!question.change);
        assert_eq!(path_words_boosts(&question, &paths[..1]), [None]);
        let name = QueryTerms::new("hover", &on);
        assert_eq!(path_words_boosts(&name, &paths[..1]), [None]);
    }

    #[test]
    fn extra_chunks_add_less_and_less() {
        assert_eq!(aggregate(&[]), 0.0);
        assert_eq!(aggregate(&[1.0]), 1.0);
        let many = aggregate(&[1.0; 20]);
        assert!(many < 1.5, "{many}");
        assert!(aggregate(&[1.0, 1.0]) > aggregate(&[1.0]));
    }
}
