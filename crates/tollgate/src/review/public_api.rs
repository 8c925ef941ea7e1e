//! What a change does to a package's public surface (rule `TG002`).
//!
//! Two questions, answered per file: is this file part of what the package publishes (a
//! library's source, not its config, scripts, benches, examples, tests or docs), and which
//! exported names did the change add, remove or change? Additions cannot break a caller; a
//! removal or a changed signature can, so only those are worth a reviewer's attention.
//!
//! A declaration removed and one added under the same name is a changed signature; the same text
//! removed and added (a move inside the file) is no change at all. Names added to an export list
//! that spans lines (`export { a, b }` in TypeScript/JavaScript, `__all__ = [...]` in Python)
//! count, as the one-line patterns alone would miss them.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::language::{Language, LanguageRules};
use crate::diff::{Diff, FileDiff, Hunk, LineKind};

/// What happened to one exported name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ApiChangeKind {
    Added,
    Changed,
    Removed,
}

impl ApiChangeKind {
    pub(crate) fn verb(self) -> &'static str {
        match self {
            ApiChangeKind::Added => "added",
            ApiChangeKind::Changed => "changed",
            ApiChangeKind::Removed => "removed",
        }
    }
}

/// One exported name the change touches.
#[derive(Debug, Clone)]
pub(crate) struct ApiChange {
    pub(crate) kind: ApiChangeKind,
    /// The exported name (`parse`, `Config`, `module.exports`).
    pub(crate) name: String,
    /// The declaration as it reads after the change (as it read before, for a removal).
    pub(crate) text: String,
    /// A new-side line inside the hunk: the added declaration, or where the removed one was.
    pub(crate) line: u32,
    /// The new-side text of `line`, for the fingerprint and GitHub's line hash.
    pub(crate) anchor_text: String,
    /// Whether `line` is an added line (a removal is anchored on the line beside it).
    pub(crate) on_added_line: bool,
}

/// Whether `path` is part of what its package publishes, by the conventions of `language`.
/// Config files, dotfiles, build and setup scripts, benches, examples, docs, fixtures and (by
/// the caller) tests are not; neither are a Go, Java or Kotlin `internal` package, a Go `main` package's command
/// directory, a Rust binary or a Python module whose name starts with `_`.
pub(crate) fn is_public_surface(language: Language, path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let components: Vec<&str> = lower.split('/').collect();
    let (dirs, name) = components.split_at(components.len().saturating_sub(1));
    let name = name.first().copied().unwrap_or_default();
    if name.starts_with('.') || dirs.iter().any(|dir| dir.starts_with('.')) {
        return false;
    }
    let non_surface_dir = |dir: &&str| {
        matches!(
            *dir,
            "scripts"
                | "script"
                | "tools"
                | "bench"
                | "benches"
                | "benchmark"
                | "benchmarks"
                | "examples"
                | "example"
                | "docs"
                | "doc"
                | "fixtures"
                | "testdata"
                | "test-data"
                | "e2e"
                | "demo"
                | "demos"
                | "sample"
                | "samples"
                | "playground"
                | "xtask"
        )
    };
    if dirs.iter().any(non_surface_dir) {
        return false;
    }
    // `vite.config.ts`, `karma.conf.js`, `jest.setup.js`, `gulpfile.js`: tool configuration.
    let stem = name.split('.').next().unwrap_or_default();
    let tool_config = name.contains(".config.")
        || name.contains(".conf.")
        || name.contains(".setup.")
        || matches!(stem, "gulpfile" | "gruntfile" | "jakefile");
    if tool_config {
        return false;
    }
    if stem.contains("bench") || name.contains(".bench.") || stem.starts_with("example") {
        return false;
    }
    match language {
        // Binaries and build scripts export nothing to other crates.
        Language::Rust => {
            name != "build.rs"
                && name != "main.rs"
                && !components.windows(2).any(|pair| pair == ["src", "bin"])
        }
        Language::Python => {
            !matches!(
                name,
                "setup.py" | "conftest.py" | "noxfile.py" | "fabfile.py" | "manage.py"
            ) && !name.starts_with('_')
                || name == "__init__.py"
        }
        Language::Go => !dirs.contains(&"internal") && !dirs.contains(&"cmd") && name != "main.go",
        // An `internal` package is implementation by convention (gson, ktor, …).
        Language::Java | Language::Kotlin => !dirs.contains(&"internal"),
        _ => true,
    }
}

/// The exported names `file` adds, removes or changes; empty for a file outside the public
/// surface (the caller decides that with [`is_public_surface`]).
pub(crate) fn api_changes(diff: &Diff, file: &FileDiff, language: Language) -> Vec<ApiChange> {
    let mut added: Vec<ApiChange> = Vec::new();
    let mut removed: Vec<ApiChange> = Vec::new();
    for hunk in &file.hunks {
        declarations_in_hunk(diff, hunk, language, &mut added, &mut removed);
    }

    // Pair removals with additions of the same name: a changed signature, or a move.
    let mut removed_by_name: BTreeMap<String, Vec<ApiChange>> = BTreeMap::new();
    for change in removed {
        removed_by_name
            .entry(change.name.clone())
            .or_default()
            .push(change);
    }
    let mut changes = Vec::new();
    for mut change in added {
        match removed_by_name
            .get_mut(&change.name)
            .and_then(|old| (!old.is_empty()).then(|| old.remove(0)))
        {
            Some(old) if normalized(&old.text) == normalized(&change.text) => {}
            Some(_) => {
                change.kind = ApiChangeKind::Changed;
                changes.push(change);
            }
            None => changes.push(change),
        }
    }
    changes.extend(removed_by_name.into_values().flatten());
    changes.sort_by(|a, b| b.kind.cmp(&a.kind).then(a.line.cmp(&b.line)));
    changes
}

fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Collects the declarations of exported names on the changed lines of `hunk`, following
/// multi-line export lists through context lines too.
fn declarations_in_hunk(
    diff: &Diff,
    hunk: &Hunk,
    language: Language,
    added: &mut Vec<ApiChange>,
    removed: &mut Vec<ApiChange>,
) {
    let mut in_export_list = false;
    for (idx, line) in hunk.lines.iter().enumerate() {
        // Context lines matter only inside an export list or where one opens: most are skipped
        // before their text is even looked at.
        if line.kind == LineKind::Context
            && !in_export_list
            && !matches!(
                language,
                Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Python
            )
        {
            continue;
        }
        let text = diff.line_text(line);
        if line.kind == LineKind::Context && !in_export_list && !may_open_export_list(&text) {
            continue;
        }
        let mut names = Vec::new();
        if in_export_list {
            let (body, closed) = match text.find(export_list_close(language)) {
                Some(at) => (&text[..at], true),
                None => (&text[..], false),
            };
            names.extend(list_names(body));
            in_export_list = !closed;
        } else if let Some(rest) = export_list_opening(language, &text) {
            // `export {` or `__all__ = [` with the list continuing on later lines.
            let close = export_list_close(language);
            match rest.find(close) {
                Some(at) => names.extend(list_names(&rest[..at])),
                None => {
                    names.extend(list_names(rest));
                    in_export_list = true;
                }
            }
        } else if language.declares_public_api(&text) {
            names.extend(declared_name(language, &text));
        }
        if line.kind == LineKind::Context || names.is_empty() {
            continue;
        }
        let (line_no, anchor_text, on_added_line) = match line.kind {
            LineKind::Added => (line.new_line.unwrap_or(1), text.to_string(), true),
            _ => {
                let (line_no, anchor) = new_side_beside(diff, hunk, idx);
                (line_no, anchor, false)
            }
        };
        let target = if line.kind == LineKind::Added {
            &mut *added
        } else {
            &mut *removed
        };
        for name in names {
            target.push(ApiChange {
                kind: if line.kind == LineKind::Added {
                    ApiChangeKind::Added
                } else {
                    ApiChangeKind::Removed
                },
                name,
                text: text.trim().to_string(),
                line: line_no,
                anchor_text: anchor_text.clone(),
                on_added_line,
            });
        }
    }
}

/// The new-side line where a removed line was: the next line of the hunk that exists after the
/// change, else the last one before it (with its text); line 1 when the hunk keeps nothing.
fn new_side_beside(diff: &Diff, hunk: &Hunk, idx: usize) -> (u32, String) {
    let kept = |line: &&crate::diff::Line| line.kind != LineKind::Removed;
    hunk.lines[idx..]
        .iter()
        .find(kept)
        .or_else(|| hunk.lines[..idx].iter().rev().find(kept))
        .and_then(|line| Some((line.new_line?, diff.line_text(line).into_owned())))
        .unwrap_or((1, String::new()))
}

/// A cheap test before [`export_list_opening`]'s regex: every opening has one of these words.
fn may_open_export_list(text: &str) -> bool {
    text.contains("export") || text.starts_with("__all__")
}

/// After `export {` (TypeScript/JavaScript) or `__all__ = [` (Python): the rest of the line.
fn export_list_opening(language: Language, text: &str) -> Option<&str> {
    let pattern: &Regex = match language {
        Language::TypeScript | Language::Tsx | Language::JavaScript => &JS_EXPORT_LIST,
        Language::Python => &PY_ALL_LIST,
        _ => return None,
    };
    if !may_open_export_list(text) {
        return None;
    }
    pattern.find(text).map(|m| &text[m.end()..])
}

/// The names in a piece of an export list: `a, b as c, type D` → `a`, `c`, `D`; `"x", 'y'` → x, y.
fn list_names(body: &str) -> Vec<String> {
    body.split(',')
        .filter_map(|item| {
            let item = item.trim().trim_matches(|c| c == '"' || c == '\'');
            let item = item.strip_prefix("type ").unwrap_or(item).trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
            is_name.then(|| name.to_string())
        })
        .collect()
}

/// The name a one-line declaration exports; the declaration itself when no name pattern fits
/// (a Java member with unusual modifiers, say), so it still counts.
fn declared_name(language: Language, text: &str) -> Option<String> {
    let pattern: &Regex = match language {
        // Read by hand: a capturing regex here cost more than the rest of the rule.
        Language::Rust => {
            return Some(rust_declared_name(text).unwrap_or_else(|| normalized(text)));
        }
        Language::TypeScript | Language::Tsx | Language::JavaScript => &JS_NAME,
        Language::Python => &PY_NAME,
        Language::Go => &GO_NAME,
        Language::Java | Language::Kotlin | Language::CSharp => &JAVA_NAME,
        _ => return None,
    };
    let name = pattern
        .captures(text)
        .and_then(|caps| {
            ["name", "path", "field", "cjs"]
                .iter()
                .find_map(|group| caps.name(group))
        })
        .map(|name| normalized(name.as_str()))
        .unwrap_or_else(|| normalized(text));
    Some(name)
}

/// The name a Rust `pub` line declares: the item after `pub [const|async|unsafe|extern "…"]*
/// fn|struct|…`, the path of a `pub use`, or a field before its `:`.
fn rust_declared_name(text: &str) -> Option<String> {
    let mut rest = text.trim_start().strip_prefix("pub")?;
    let mut item_keyword_seen = false;
    loop {
        rest = rest.trim_start();
        if let Some(after_quote) = rest.strip_prefix('"') {
            // The ABI of `extern "C"`.
            rest = &after_quote[after_quote.find('"')? + 1..];
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        if word.is_empty() {
            return None;
        }
        if item_keyword_seen {
            if word == "mut" {
                rest = after;
                continue;
            }
            return Some(word.to_string());
        }
        match word {
            "unsafe" | "async" | "extern" => {}
            // `pub const fn f` (a modifier) or `pub const N: u8` (the item itself).
            "const" => {
                let next = after.trim_start();
                let is_modifier = ["fn", "unsafe", "async", "extern"]
                    .iter()
                    .any(|m| next.starts_with(m));
                item_keyword_seen = !is_modifier;
            }
            "fn" | "struct" | "enum" | "trait" | "type" | "mod" | "static" | "union" | "macro" => {
                item_keyword_seen = true;
            }
            "use" => return Some(normalized(after.split(';').next().unwrap_or(after))),
            field => {
                return after
                    .trim_start()
                    .starts_with(':')
                    .then(|| field.to_string());
            }
        }
        rest = after;
    }
}

/// What closes an export list opened by [`export_list_opening`].
fn export_list_close(language: Language) -> char {
    if language == Language::Python {
        ']'
    } else {
        '}'
    }
}

static JS_EXPORT_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:export\s*(?:type\s*)?\{|module\.exports\s*=\s*\{)").expect("static regex")
});
static PY_ALL_LIST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^__all__\s*\+?=\s*[\[(]").expect("static regex"));
static JS_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|const|let|var|interface|type|enum|namespace)\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)|exports\.(?P<cjs>[A-Za-z_$][A-Za-z0-9_$]*))",
    )
    .expect("static regex")
});
static PY_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:async\s+)?def|class)\s+(?P<name>[A-Za-z][A-Za-z0-9_]*)")
        .expect("static regex")
});
static GO_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)(?P<name>[A-Z][A-Za-z0-9_]*)")
        .expect("static regex")
});
static JAVA_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\(|=|;|\{|$)").expect("static regex")
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::parse;

    fn changes_in(path: &str, hunk: &str) -> Vec<ApiChange> {
        let text = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunk}");
        let diff = parse(text.into_bytes()).unwrap();
        let file = &diff.files()[0];
        api_changes(&diff, file, Language::of_path(path))
    }

    fn summary(changes: &[ApiChange]) -> Vec<(ApiChangeKind, &str, u32, bool)> {
        changes
            .iter()
            .map(|c| (c.kind, c.name.as_str(), c.line, c.on_added_line))
            .collect()
    }

    #[test]
    fn only_a_packages_published_files_are_public_surface() {
        let public = [
            "src/lib.rs",
            "crates/core/src/parse.rs",
            "packages/zod/src/types.ts",
            "src/index.d.ts",
            "flask/app.py",
            "flask/__init__.py",
            "pkg/server/handler.go",
            "lib/src/main/java/a/Api.java",
        ];
        for path in public {
            assert!(
                is_public_surface(Language::of_path(path), path),
                "{path} is public surface"
            );
        }
        let private = [
            "rollup.config.js",
            ".eslintrc.js",
            "babel.config.js",
            "packages/x/vitest.config.ts",
            "karma.conf.js",
            "benchmarks/parse.ts",
            "bench/run.js",
            "src/parse.bench.ts",
            "examples/basic.rs",
            "scripts/release.py",
            "docs/conf.py",
            ".github/scripts/x.js",
            "build.rs",
            "src/main.rs",
            "src/bin/tool.rs",
            "setup.py",
            "src/pkg/_internal.py",
            "internal/auth/token.go",
            "pkg/internal/auth/token.go",
            // Issue 28: `internal` packages are not public surface in Java and Kotlin either.
            "gson/src/main/java/com/google/gson/internal/Excluder.java",
            "core/src/main/kotlin/io/ktor/internal/Utils.kt",
            "cmd/server/main.go",
            "xtask/src/lib.rs",
        ];
        for path in private {
            assert!(
                !is_public_surface(Language::of_path(path), path),
                "{path} is not public surface"
            );
        }
    }

    #[test]
    fn additions_removals_and_changed_signatures_are_told_apart() {
        let changes = changes_in(
            "src/lib.rs",
            "@@ -1,5 +1,5 @@\n fn keep() {}\n-pub fn parse(input: &str) -> Ast {\n+pub fn parse(input: &str, options: Options) -> Ast {\n-pub fn old_helper() {}\n+pub fn new_helper() {}\n context();\n pub struct Unchanged;\n",
        );
        assert_eq!(
            summary(&changes),
            vec![
                (ApiChangeKind::Removed, "old_helper", 3, false),
                (ApiChangeKind::Changed, "parse", 2, true),
                (ApiChangeKind::Added, "new_helper", 3, true),
            ]
        );
        // The removal is anchored on the new side, inside the hunk: the line that follows it.
        assert_eq!(changes[0].anchor_text, "pub fn new_helper() {}");
    }

    #[test]
    fn rust_names_are_read_past_modifiers() {
        let cases = [
            ("pub fn parse(x: u8) {", Some("parse")),
            ("    pub async unsafe fn run() {", Some("run")),
            ("pub const fn new() -> Self {", Some("new")),
            ("pub const LIMIT: usize = 3;", Some("LIMIT")),
            ("pub static mut COUNT: u8 = 0;", Some("COUNT")),
            ("pub extern \"C\" fn callback() {}", Some("callback")),
            ("pub struct Config {", Some("Config")),
            ("pub use crate::a::{b, c};", Some("crate::a::{b, c}")),
            ("    pub name: String,", Some("name")),
            ("pub(crate) fn hidden() {}", None),
        ];
        for (line, name) in cases {
            assert_eq!(rust_declared_name(line).as_deref(), name, "{line}");
        }
    }

    #[test]
    fn a_declaration_moved_within_the_file_is_no_change() {
        let changes = changes_in(
            "src/lib.rs",
            "@@ -1,2 +1,2 @@\n-pub fn parse() {}\n fn middle() {}\n+pub fn parse() {}\n",
        );
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn names_added_to_a_multi_line_export_list_count() {
        let changes = changes_in(
            "src/index.ts",
            "@@ -1,4 +1,5 @@\n export {\n   parse,\n+  safeParse as trySafeParse,\n-  legacy,\n+  type Infer,\n } from \"./types\";\n",
        );
        assert_eq!(
            summary(&changes),
            vec![
                (ApiChangeKind::Removed, "legacy", 4, false),
                (ApiChangeKind::Added, "trySafeParse", 3, true),
                (ApiChangeKind::Added, "Infer", 4, true),
            ]
        );
        let python = changes_in(
            "pkg/__init__.py",
            "@@ -1,3 +1,4 @@\n __all__ = [\n     \"Client\",\n+    \"Session\",\n ]\n",
        );
        assert_eq!(
            summary(&python),
            vec![(ApiChangeKind::Added, "Session", 3, true)]
        );
    }

    #[test]
    fn a_removal_at_the_end_of_a_hunk_is_anchored_on_the_line_before() {
        let changes = changes_in(
            "pkg/api.go",
            "@@ -1,2 +1,1 @@\n package api\n-func Serve() error { return nil }\n",
        );
        assert_eq!(
            summary(&changes),
            vec![(ApiChangeKind::Removed, "Serve", 1, false)]
        );
        assert_eq!(changes[0].anchor_text, "package api");
    }
}
