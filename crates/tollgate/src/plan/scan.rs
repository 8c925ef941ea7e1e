//! The repository context of a plan without a model: a ranked scan of the working tree for the
//! files a task names or whose paths and contents share its words (whole words, as the code
//! index tokenizes them: `rate` is not in `generate`), tests, docs and tool directories ranked
//! lower, the code index's ranking added when the workspace has one, and the import edges
//! between those files, extracted with cheap line patterns (Rust `mod`/`use`, JS/TS
//! `import`/`require`, Python `import`/`from`, C `#include`).
//!
//! The walk is the code index's (`.gitignore`, no symlinks, no `.git`, `.tollgate`, vendored or
//! build directories, media or lock files) with hidden files added, and the scan reads at most
//! [`MAX_FILE_BYTES`] of at most [`MAX_FILES`] files, so a huge repository costs a bounded scan.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use tollgate_index::rank::FileClass;
use tollgate_index::tokens;
use tollgate_index::walk::{Hidden, walk_tree};

/// Files looked at, at most.
const MAX_FILES: usize = 20_000;
/// Bytes of one file read for word matching and imports.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// A file the task probably touches.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RankedFile {
    /// Repository-relative, `/`-separated.
    pub(crate) path: String,
    pub(crate) score: f64,
    /// The task words its path or content contains.
    pub(crate) matched_words: Vec<String>,
    /// Occurrences of those words in its content: how much of it the task touches.
    pub(crate) hits: usize,
    pub(crate) lines: usize,
    pub(crate) content: String,
}

impl RankedFile {
    pub(crate) fn is_test(&self) -> bool {
        FileClass::of(&self.path, false) == FileClass::Test
    }

    pub(crate) fn is_doc(&self) -> bool {
        FileClass::of(&self.path, false) == FileClass::Docs
    }
}

/// What the scan found.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanResult {
    /// Best first, at most the requested number.
    pub(crate) files: Vec<RankedFile>,
    /// Paths the task names that do not exist (candidates for creation).
    pub(crate) missing_mentions: Vec<String>,
    pub(crate) n_files_scanned: usize,
    /// File count per extension, for the plan's insights.
    pub(crate) extensions: BTreeMap<String, usize>,
    /// Whether the walk stopped at [`MAX_FILES`].
    pub(crate) truncated: bool,
}

/// Filters of a scan.
#[derive(Debug, Clone)]
pub(crate) struct ScanOptions<'a> {
    pub(crate) max_files: usize,
    pub(crate) include_paths: &'a [String],
    pub(crate) exclude_paths: &'a [String],
}

/// The words of a task worth matching: lowercase, at least three characters, no stop words.
pub(crate) fn task_words(task: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "add",
        "use",
        "make",
        "new",
        "should",
        "when",
        "all",
        "are",
        "can",
        "not",
        "its",
        "our",
        "their",
        "them",
        "then",
        "support",
        "implement",
        "update",
        "change",
        "fix",
        "file",
        "files",
        "code",
        "way",
        "also",
        "each",
        "every",
        "any",
        "one",
        "two",
        "via",
        "using",
        "like",
        "more",
        "less",
        "have",
        "has",
        "will",
        "would",
        "could",
        "able",
        "need",
        "needs",
        "want",
        "about",
    ];
    let mut words = Vec::new();
    for word in task
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        if word.chars().count() >= 3 && !STOP.contains(&word.as_str()) && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// Paths the task spells out (`src/a.rs`, `README.md`): tokens with a `/` or a file extension.
fn mentioned_paths(task: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in task.split(|c: char| c.is_whitespace() || "`'\"(),;<>[]{}".contains(c)) {
        let token = token
            .trim_end_matches(['.', ':', '!', '?'])
            .trim_start_matches("./");
        let looks_like_path = token.contains('/')
            || token
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && is_known_extension(ext));
        if looks_like_path
            && !token.contains("://")
            && !token.starts_with('/')
            && !token.split('/').any(|part| part == "..")
            && !out.iter().any(|p| p == token)
        {
            out.push(token.to_string());
        }
    }
    out
}

fn is_known_extension(ext: &str) -> bool {
    matches!(
        ext,
        "rs" | "ts"
            | "tsx"
            | "js"
            | "jsx"
            | "mjs"
            | "cjs"
            | "py"
            | "go"
            | "java"
            | "kt"
            | "rb"
            | "c"
            | "h"
            | "cc"
            | "cpp"
            | "hpp"
            | "cs"
            | "swift"
            | "php"
            | "md"
            | "toml"
            | "yml"
            | "yaml"
            | "json"
            | "sql"
            | "sh"
            | "html"
            | "css"
            | "scss"
            | "vue"
            | "svelte"
    )
}

/// Scans the working tree under `root` for the files `task` touches.
pub(crate) fn scan(root: &Path, task: &str, options: &ScanOptions<'_>) -> ScanResult {
    let mentions = mentioned_paths(task);
    // A named path counts through the mention itself, not through its segments (`src`, `rs`).
    let mut words_text = task.to_string();
    for mention in &mentions {
        words_text = words_text.replace(mention.as_str(), " ");
    }
    let words = task_words(&words_text);
    let include = glob_set(options.include_paths);
    let exclude = glob_set(options.exclude_paths);
    let mut result = ScanResult::default();
    let mut found_mentions = BTreeSet::new();
    let mut candidates = Vec::new();
    // The index's walk (its ignore rules, skipped directories, file kinds and size limit), with
    // hidden files: a task about CI names `.github/workflows/*`.
    for file in walk_tree(root, None, Hidden::Include) {
        let path = file.path;
        if include.as_ref().is_some_and(|set| !set.is_match(&path))
            || exclude.as_ref().is_some_and(|set| set.is_match(&path))
        {
            continue;
        }
        if result.n_files_scanned >= MAX_FILES {
            result.truncated = true;
            break;
        }
        result.n_files_scanned += 1;
        let extension = path
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .filter(|ext| !ext.contains('/'))
            .unwrap_or_default();
        *result.extensions.entry(extension.clone()).or_default() += 1;
        let mentioned = mentions
            .iter()
            .any(|m| path == *m || path.ends_with(&format!("/{m}")));
        // Tollgate's own files (its configuration, state, ledger, reports) are no part of the
        // user's change unless the task names them.
        if !mentioned && is_tollgates_own(&path) {
            continue;
        }
        if mentioned {
            found_mentions.extend(
                mentions
                    .iter()
                    .filter(|m| path == **m || path.ends_with(&format!("/{m}")))
                    .cloned(),
            );
        }
        let path_tokens = tokens(&path);
        let path_words: Vec<&String> = words
            .iter()
            .filter(|w| path_tokens.iter().any(|t| same_word(t, w)))
            .collect();
        let content = if is_known_extension(&extension) || extension.is_empty() {
            read_prefix(&file.abs)
        } else {
            None
        };
        let Some(content) = content else {
            if mentioned {
                candidates.push(RankedFile {
                    path,
                    score: 100.0,
                    matched_words: Vec::new(),
                    hits: 0,
                    lines: 0,
                    content: String::new(),
                });
            }
            continue;
        };
        let mut counts: HashMap<String, usize> = HashMap::new();
        for token in tokens(&content) {
            *counts.entry(token).or_default() += 1;
        }
        let mut score = if mentioned { 100.0 } else { 0.0 };
        let mut matched = Vec::new();
        let mut hits = 0;
        for word in &words {
            let in_path = path_words.contains(&word);
            let count: usize = counts
                .iter()
                .filter(|(token, _)| same_word(token, word))
                .map(|(_, n)| n)
                .sum();
            hits += count;
            let count = count.min(50);
            if in_path {
                score += 4.0;
            }
            if count > 0 {
                score += 1.0 + (count as f64).ln();
            }
            if in_path || count > 0 {
                matched.push(word.clone());
            }
        }
        // A file matching several distinct words is worth more than one repeating a single word.
        if matched.len() > 1 {
            score *= 1.0 + 0.25 * (matched.len() - 1) as f64;
        }
        if !mentioned {
            score *= class_factor(&path, task);
        }
        if score > 0.0 {
            candidates.push(RankedFile {
                path,
                score,
                matched_words: matched,
                hits,
                lines: content.lines().count(),
                content,
            });
        }
    }
    // The code index, when the workspace has one, knows definitions, whole-token matches and
    // history: the files it ranks first gain most.
    for (rank, path) in index_ranking(root, task).iter().enumerate() {
        if let Some(file) = candidates.iter_mut().find(|f| &f.path == path) {
            file.score += SEARCH_BONUS * (1.0 - rank as f64 / SEARCH_FILES as f64);
        }
    }
    candidates.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.path.cmp(&b.path))
    });
    candidates.truncate(options.max_files);
    result.files = candidates;
    result.missing_mentions = mentions
        .into_iter()
        .filter(|m| !found_mentions.contains(m) && m.contains('.') && !exists_inside(root, m))
        .collect();
    result
}

/// Files Tollgate itself reads or writes in a repository: `tollgate.toml` and the reports
/// written beside it (`tollgate.json`, `tollgate.sarif`, `tollgate-publish.json`, …), the
/// `.tollgate/` state directory, the invariants and the learnings ledger (`.review-*`).
fn is_tollgates_own(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path == crate::workspace::STATE_DIR
        || path.starts_with(&format!("{}/", crate::workspace::STATE_DIR))
        || name.starts_with("tollgate.")
        || name.starts_with("tollgate-")
        || name.starts_with(".review-")
        || name == crate::config::DEFAULT_INVARIANTS_PATH
        || name == crate::learnings::LEDGER_FILE
}

/// Whether `mention` names a file under `root` that the walk left out (empty, over its size
/// limit): it exists, so it is no candidate for creation. Only plain relative paths are looked up.
fn exists_inside(root: &Path, mention: &str) -> bool {
    let relative = Path::new(mention);
    relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
        && root.join(relative).is_file()
}

fn glob_set(patterns: &[String]) -> Option<GlobSet> {
    if patterns.is_empty() {
        return None;
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        // A bad pattern matches nothing rather than everything.
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
        }
        if let Ok(glob) = Glob::new(&format!("{}/**", pattern.trim_end_matches('/'))) {
            builder.add(glob);
        }
    }
    builder.build().ok()
}

/// The start of a text file, or `None` for a binary or unreadable one.
fn read_prefix(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Endings that keep a word the same word (`limit`, `limits`, `limiting`).
const SAME_WORD_SUFFIXES: &[&str] = &["s", "es", "d", "ed", "ing", "er", "ers"];

/// Whether `token` (from the code) is the task's `word`, give or take an ending.
fn same_word(token: &str, word: &str) -> bool {
    let variant = |long: &str, short: &str| {
        short.len() >= 3
            && long
                .strip_prefix(short)
                .is_some_and(|rest| SAME_WORD_SUFFIXES.contains(&rest))
    };
    token == word || variant(token, word) || variant(word, token)
}

/// How much a file's kind counts for a task: tests, docs, changelogs, generated and vendored
/// files half unless the task asks for them; tool directories (`.github`, `.devcontainer`)
/// less, since a task's words (`dev`, `build`) name them by accident.
fn class_factor(path: &str, task: &str) -> f64 {
    let class = FileClass::of(path, false);
    // Manifests and examples are the index's classes; a plan weighs them as code.
    let as_code = matches!(
        class,
        FileClass::Code | FileClass::Manifest | FileClass::Example
    );
    let mut factor = if as_code || class.asked_for(task) {
        1.0
    } else {
        0.5
    };
    if path.split('/').any(|segment| segment.starts_with('.')) {
        factor *= 0.3;
    }
    factor
}

/// Files the code index ranks for a plan's task, and the bonus the first gets.
const SEARCH_FILES: usize = 30;
const SEARCH_BONUS: f64 = 6.0;

/// The workspace's code index's file ranking for `task`, best first; empty when it has no index
/// of the current format (a plan does not build one: that is `tollgate index`'s job).
#[cfg(feature = "index")]
fn index_ranking(root: &Path, task: &str) -> Vec<String> {
    use tollgate_index::SearchQuery;

    // Through the workspace's checks: a committed `.tollgate` link is not followed.
    let Ok(ws) = crate::workspace::IndexedWorkspace::open(root) else {
        return Vec::new();
    };
    if !tollgate_index::is_current(ws.index_config()) {
        return Vec::new();
    }
    let query = SearchQuery::new(task, SEARCH_FILES);
    let Ok(outcome) = tollgate_index::search(ws.index_config(), ws.embedder(), &query) else {
        return Vec::new();
    };
    let mut files: Vec<String> = Vec::new();
    for hit in outcome.hits {
        if !files.contains(&hit.path) {
            files.push(hit.path);
        }
    }
    files
}

/// Built without the code index (feature `index`): the scan ranks by paths and contents alone.
#[cfg(not(feature = "index"))]
fn index_ranking(_root: &Path, _task: &str) -> Vec<String> {
    Vec::new()
}

/// Import edges among `files`: `(importer, imported)` index pairs, sorted, without self-edges.
pub(crate) fn import_edges(files: &[RankedFile]) -> Vec<(usize, usize)> {
    let stems: Vec<String> = files.iter().map(|f| strip_extension(&f.path)).collect();
    let mut edges = BTreeSet::new();
    for (importer, file) in files.iter().enumerate() {
        for import in imports_of(file) {
            if let Some(imported) = resolve(&import, &file.path, &stems)
                && imported != importer
            {
                edges.insert((importer, imported));
            }
        }
    }
    edges.into_iter().collect()
}

/// An import as written: a relative path (`./x`) or module segments (`a::b`, `a.b`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Import {
    Relative(String),
    Module(Vec<String>),
}

fn imports_of(file: &RankedFile) -> Vec<Import> {
    let extension = file.path.rsplit_once('.').map_or("", |(_, ext)| ext);
    let mut out = Vec::new();
    for line in file.content.lines().take(2000) {
        let line = line.trim();
        match extension {
            "rs" => {
                let rest = line.strip_prefix("pub ").unwrap_or(line);
                let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
                if let Some(name) = rest.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                    out.push(Import::Relative(format!("./{}", name.trim())));
                } else if let Some(path) = rest.strip_prefix("use ") {
                    let segments: Vec<String> = path
                        .split("::")
                        .map(|s| s.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
                        .filter(|s| !s.is_empty() && !matches!(*s, "crate" | "self" | "super"))
                        .map(str::to_string)
                        .collect();
                    if !segments.is_empty() {
                        out.push(Import::Module(segments));
                    }
                }
            }
            "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs" | "vue" | "svelte" => {
                for quote in ['\'', '"'] {
                    for marker in ["from ", "require(", "import("] {
                        if let Some(idx) = line.find(&format!("{marker}{quote}")) {
                            let rest = &line[idx + marker.len() + 1..];
                            if let Some(end) = rest.find(quote) {
                                let spec = &rest[..end];
                                if spec.starts_with('.') {
                                    out.push(Import::Relative(spec.to_string()));
                                }
                            }
                        }
                    }
                }
            }
            "py" => {
                let module = line
                    .strip_prefix("from ")
                    .and_then(|r| r.split_whitespace().next())
                    .or_else(|| {
                        line.strip_prefix("import ")
                            .and_then(|r| r.split([',', ' ']).next())
                    });
                if let Some(module) = module {
                    let segments: Vec<String> = module
                        .split('.')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect();
                    if !segments.is_empty() {
                        out.push(Import::Module(segments));
                    }
                }
            }
            "c" | "h" | "cc" | "cpp" | "hpp" => {
                if let Some(rest) = line.strip_prefix("#include \"")
                    && let Some(end) = rest.find('"')
                {
                    out.push(Import::Relative(format!("./{}", &rest[..end])));
                }
            }
            _ => {}
        }
    }
    out
}

fn strip_extension(path: &str) -> String {
    match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') && !stem.is_empty() => stem.to_string(),
        _ => path.to_string(),
    }
}

/// The index of the file `import` (written in `from`) refers to, among `stems` (paths without
/// extensions).
fn resolve(import: &Import, from: &str, stems: &[String]) -> Option<usize> {
    const INDEX_NAMES: [&str; 3] = ["mod", "index", "__init__"];
    let find = |target: &str| {
        stems.iter().position(|stem| {
            stem == target
                || INDEX_NAMES
                    .iter()
                    .any(|index| *stem == format!("{target}/{index}"))
        })
    };
    match import {
        Import::Relative(spec) => {
            let dir = from.rsplit_once('/').map_or("", |(dir, _)| dir);
            let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
            // Rust's `mod x;` in `src/a.rs` means `src/a/x.rs`; in `lib.rs`/`main.rs`/`mod.rs`
            // it means a sibling.
            if from.ends_with(".rs") {
                let file_stem = from
                    .rsplit('/')
                    .next()
                    .unwrap_or(from)
                    .trim_end_matches(".rs");
                if !matches!(file_stem, "lib" | "main" | "mod") {
                    parts.push(file_stem);
                }
            }
            for part in spec.split('/') {
                match part {
                    "." | "" => {}
                    ".." => {
                        parts.pop()?;
                    }
                    part => parts.push(part),
                }
            }
            find(&strip_extension(&parts.join("/")))
        }
        Import::Module(segments) => (1..=segments.len()).rev().find_map(|len| {
            let suffix = segments[..len].join("/");
            stems.iter().position(|stem| {
                let matches =
                    |target: &str| stem == target || stem.ends_with(&format!("/{target}"));
                matches(&suffix)
                    || INDEX_NAMES
                        .iter()
                        .any(|index| matches(&format!("{suffix}/{index}")))
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &str) -> RankedFile {
        RankedFile {
            path: path.into(),
            score: 1.0,
            matched_words: Vec::new(),
            hits: 0,
            lines: content.lines().count(),
            content: content.into(),
        }
    }

    /// Issue 28: Tollgate's own files never enter a plan unless the task names them.
    #[test]
    fn tollgates_own_files_are_no_candidates_unless_named() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, content: &str| {
            let abs = dir.path().join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, content).unwrap();
        };
        let words = "payment retry handler\n";
        for path in [
            "tollgate.json",
            "tollgate.toml",
            "tollgate.sarif",
            "tollgate-publish.json",
            ".review-invariants.yml",
            ".review-learnings.jsonl",
            ".tollgate/notes.md",
            "src/payment.py",
        ] {
            write(path, words);
        }
        let options = ScanOptions {
            max_files: 20,
            include_paths: &[],
            exclude_paths: &[],
        };
        let result = scan(
            dir.path(),
            "make the payment retry handler back off",
            &options,
        );
        let paths: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/payment.py"]);
        let named = scan(
            dir.path(),
            "make the payment retry handler configurable in tollgate.toml",
            &options,
        );
        let paths: Vec<&str> = named.files.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&"tollgate.toml"), "{paths:?}");
        assert!(!paths.contains(&"tollgate.json"), "{paths:?}");
    }

    #[test]
    fn imports_resolve_across_languages() {
        let files = vec![
            file(
                "src/lib.rs",
                "pub mod retry;\nuse crate::http::client::Client;\n",
            ),
            file("src/retry.rs", "use super::http::client;\n"),
            file("src/http/client.rs", "pub struct Client;\n"),
            file(
                "web/app.ts",
                "import { x } from './util/fmt';\nconst y = require(\"../lib/z\");\n",
            ),
            file("web/util/fmt.ts", ""),
            file("lib/z.js", ""),
            file("py/pkg/main.py", "from pkg.helpers import a\nimport os\n"),
            file("py/pkg/helpers/__init__.py", ""),
        ];
        assert_eq!(
            import_edges(&files),
            vec![(0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (6, 7)]
        );
    }

    #[test]
    fn task_words_and_mentioned_paths() {
        assert_eq!(
            task_words("Add retry support to the HTTP client (src/http/client.rs)"),
            vec!["retry", "http", "client", "src"]
        );
        assert_eq!(
            mentioned_paths(
                "Change `src/http/client.rs`, README.md and ../etc/passwd or https://x.io/a"
            ),
            vec!["src/http/client.rs", "README.md"]
        );
    }

    fn write_file(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn words_match_whole_and_tool_directories_rank_low() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| write_file(dir.path(), rel, text);
        // Substrings of other words: `generate`, `separate` hold "rate".
        write(
            "src/app/helpers.py",
            &"def generate(x):\n    return separate(x)\n".repeat(40),
        );
        write(
            ".devcontainer/devcontainer.json",
            "{\"name\": \"dev server\"}\n",
        );
        write(
            "src/app/cli.py",
            &format!(
                "{}def run_server(dev=False):\n    \"\"\"Start the dev server.\"\"\"\n",
                "# filler\n".repeat(3000)
            ),
        );
        write(
            "src/app/limits.py",
            "RATE = 10\ndef limit(rate):\n    return rate\n",
        );
        let options = ScanOptions {
            max_files: 10,
            include_paths: &[],
            exclude_paths: &[],
        };
        let result = scan(dir.path(), "add rate limiting to the dev server", &options);
        let paths: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
        assert!(!paths.contains(&"src/app/helpers.py"), "{paths:?}");
        let position = |p: &str| paths.iter().position(|x| *x == p).unwrap();
        assert!(
            position("src/app/cli.py") < position(".devcontainer/devcontainer.json"),
            "{paths:?}"
        );
        // `limiting` finds `limit`; the long file with a few matches is a small change.
        let limits = &result.files[position("src/app/limits.py")];
        assert!(
            limits.matched_words.contains(&"limiting".to_string()),
            "{limits:?}"
        );
        let cli = &result.files[position("src/app/cli.py")];
        assert!(cli.lines > 3000 && cli.hits < 5, "{}", cli.hits);
    }

    #[test]
    fn the_scan_ranks_mentions_then_matches_and_honours_filters() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| write_file(dir.path(), rel, text);
        write("src/http/client.rs", "pub fn get() { /* http client */ }\n");
        write("src/retry.rs", "// retry with backoff\n");
        write("src/other.rs", "fn unrelated() {}\n");
        write("vendor/retry.rs", "// retry\n");
        write(".gitignore", "ignored/\n");
        write("ignored/retry.rs", "// retry\n");
        let options = ScanOptions {
            max_files: 10,
            include_paths: &[],
            exclude_paths: &["vendor".to_string()],
        };
        let result = scan(
            dir.path(),
            "Add retry with backoff to src/http/client.rs and src/new.rs",
            &options,
        );
        let paths: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["src/http/client.rs", "src/retry.rs"]);
        assert_eq!(result.missing_mentions, vec!["src/new.rs"]);
        assert!(
            result.files[1]
                .matched_words
                .contains(&"backoff".to_string())
        );
    }

    #[test]
    fn the_scan_walks_like_the_index_and_adds_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| write_file(dir.path(), rel, text);
        write(".github/workflows/ci.yml", "name: retry the flaky job\n");
        write("src/retry.rs", "// retry\n");
        // Build output and lock files are the index's to skip, and now the scan's.
        write("dist/retry.js", "// retry\n");
        write("package-lock.json", "{\"retry\": 1}\n");
        write("src/pkg/__init__.py", "");
        let options = ScanOptions {
            max_files: 10,
            include_paths: &[],
            exclude_paths: &[],
        };
        let result = scan(
            dir.path(),
            "retry the flaky job in src/pkg/__init__.py",
            &options,
        );
        let paths: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&".github/workflows/ci.yml"), "{paths:?}");
        assert!(paths.contains(&"src/retry.rs"), "{paths:?}");
        assert!(
            !paths
                .iter()
                .any(|p| p.starts_with("dist/") || p.ends_with(".json")),
            "{paths:?}"
        );
        // An empty file the walk leaves out still exists: no candidate for creation.
        assert!(
            result.missing_mentions.is_empty(),
            "{:?}",
            result.missing_mentions
        );
    }
}
