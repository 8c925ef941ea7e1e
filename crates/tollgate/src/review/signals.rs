//! Preflight signals: what kind of files a diff touches (tests, config, dependency manifests,
//! docs, hotspots, binaries) and where it changes public API.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::language::{Language, LanguageRules};
use super::public_api::{self, ApiChange};
use crate::config::{PathPatterns, PreflightConfig};
use crate::diff::{Diff, FileDiff, FileStatus, LineKind};
use crate::findings::Signals;

/// What preflight learned about one changed file.
#[derive(Debug)]
pub(crate) struct FileFacts<'d> {
    pub(crate) file: &'d FileDiff,
    pub(crate) path: &'d str,
    pub(crate) language: Language,
    pub(crate) is_test: bool,
    pub(crate) is_config: bool,
    pub(crate) is_dependency: bool,
    pub(crate) is_docs: bool,
    pub(crate) is_hotspot: bool,
    /// A lockfile (`Cargo.lock`, `package-lock.json`, `uv.lock`, …): written by a tool.
    pub(crate) is_lockfile: bool,
    /// Generated code: by its name (`*.min.js`, `*.pb.go`, `generated/`) or a generator's
    /// header (`@generated`, `Code generated … DO NOT EDIT`) on its first lines.
    pub(crate) is_generated: bool,
    /// Added lines that add Rust inline tests (`#[test]`, `#[cfg(test)]`).
    pub(crate) adds_inline_tests: bool,
    /// Exported names the change adds, removes or changes, removals first; empty outside a
    /// package's public surface.
    pub(crate) api_changes: Vec<ApiChange>,
    /// The first added line (new side), else the first removed line (old side).
    pub(crate) first_changed_line: Option<u32>,
    pub(crate) lines_added: usize,
    pub(crate) lines_removed: usize,
}

impl FileFacts<'_> {
    /// Written by a person, so read line by line: not a lockfile, not generated.
    pub(crate) fn is_reviewed(&self) -> bool {
        !self.is_lockfile && !self.is_generated
    }

    /// Source code that is not a test.
    pub(crate) fn is_source(&self) -> bool {
        self.language.is_code() && !self.is_test && !self.file.binary
    }
}

/// The size of the change a reviewer reads: (changed lines, files) without lockfiles and
/// generated files. The one count of `TG007` and the risk score's `large_change`.
pub(crate) fn reviewed_size(facts: &[FileFacts<'_>]) -> (usize, usize) {
    let reviewed = facts.iter().filter(|f| f.is_reviewed());
    let lines = reviewed
        .clone()
        .map(|f| f.lines_added + f.lines_removed)
        .sum();
    let not_reviewed = facts.len() - reviewed.count();
    (lines, n_files(facts).saturating_sub(not_reviewed))
}

/// How many files the change touches, as `git diff --numstat` counts them: a type change (a
/// file replaced by a symlink, or back) is a deletion and an addition of one path, two sections
/// of the diff but one file.
pub(crate) fn n_files(facts: &[FileFacts<'_>]) -> usize {
    let deleted: BTreeSet<&str> = facts
        .iter()
        .filter(|f| f.file.status == FileStatus::Deleted)
        .map(|f| f.path)
        .collect();
    let type_changes: BTreeSet<&str> = facts
        .iter()
        .filter(|f| f.file.status == FileStatus::Added && deleted.contains(f.path))
        .map(|f| f.path)
        .collect();
    facts.len() - type_changes.len()
}

/// Computes per-file facts and the summary signals for the files under review.
pub(crate) fn compute<'d>(
    diff: &'d Diff,
    files: &[&'d FileDiff],
    config: &PreflightConfig,
) -> (Vec<FileFacts<'d>>, Signals) {
    let facts: Vec<FileFacts<'d>> = files
        .iter()
        .map(|file| file_facts(diff, file, config))
        .collect();
    let collect = |pred: &dyn Fn(&FileFacts<'_>) -> bool| -> Vec<String> {
        facts
            .iter()
            .filter(|f| pred(f))
            .map(|f| f.path.to_string())
            .collect()
    };
    let signals = Signals {
        tests_touched: facts.iter().any(|f| f.is_test || f.adds_inline_tests),
        test_files: collect(&|f| f.is_test || f.adds_inline_tests),
        config_files: collect(&|f| f.is_config),
        dependency_files: collect(&|f| f.is_dependency),
        public_api_files: collect(&|f| !f.api_changes.is_empty()),
        binary_files: collect(&|f| f.file.binary),
        hotspot_files: collect(&|f| f.is_hotspot),
        docs_files: collect(&|f| f.is_docs),
        secrets_found: 0,
    };
    (facts, signals)
}

fn file_facts<'d>(diff: &'d Diff, file: &'d FileDiff, config: &PreflightConfig) -> FileFacts<'d> {
    let path = file.path();
    let language = Language::of_path(path);
    let is_test = tollgate_lang::is_test_path(path) || config.extra_test_paths.is_match(path);
    let is_dependency = DEPENDENCY_FILES.is_match(path);
    let is_config =
        !is_dependency && (CONFIG_FILES.is_match(path) || config.extra_config_paths.is_match(path));
    let is_docs = DOCS_FILES.is_match(path);

    let mut adds_inline_tests = false;
    let mut first_added = None;
    let mut first_removed = None;
    for line in file.hunks.iter().flat_map(|h| h.lines.iter()) {
        match line.kind {
            LineKind::Context => continue,
            LineKind::Added => first_added = first_added.or(line.new_line),
            LineKind::Removed => first_removed = first_removed.or(line.old_line),
        }
        if line.kind == LineKind::Added
            && !adds_inline_tests
            && language.is_code()
            && language.is_inline_test_marker(&diff.line_text(line))
        {
            adds_inline_tests = true;
        }
    }
    let api_changes = if language.is_code()
        && !is_test
        && !file.binary
        && public_api::is_public_surface(language, path)
    {
        public_api::api_changes(diff, file, language)
    } else {
        Vec::new()
    };
    let (lines_added, lines_removed) = file.line_counts();
    FileFacts {
        file,
        path,
        language,
        is_test,
        is_config,
        is_dependency,
        is_docs,
        is_hotspot: config.hotspots.is_match(path),
        is_lockfile: LOCKFILES.is_match(path),
        is_generated: GENERATED_FILES.is_match(path) || has_generated_header(diff, file),
        adds_inline_tests,
        api_changes,
        first_changed_line: first_added.or(first_removed),
        lines_added,
        lines_removed,
    }
}

/// Whether a file is new and not docs (feeds classification).
pub(crate) fn is_new_file(facts: &FileFacts<'_>) -> bool {
    matches!(facts.file.status, FileStatus::Added | FileStatus::Copied)
}

fn patterns(list: &[&str]) -> PathPatterns {
    let owned: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    PathPatterns::new(&owned).expect("built-in globs are valid")
}

static CONFIG_FILES: LazyLock<PathPatterns> = LazyLock::new(|| {
    patterns(&[
        // CI
        ".github/**",
        ".gitlab-ci.yml",
        ".gitlab/**",
        ".circleci/**",
        "Jenkinsfile",
        "azure-pipelines.yml",
        ".buildkite/**",
        ".travis.yml",
        "bitbucket-pipelines.yml",
        ".ci/**",
        // containers and infrastructure
        "Dockerfile",
        "Dockerfile.*",
        "*.dockerfile",
        "docker-compose*.yml",
        "docker-compose*.yaml",
        "compose.yml",
        "compose.yaml",
        "*.tf",
        "*.tfvars",
        "k8s/**",
        "kubernetes/**",
        "helm/**",
        "charts/**",
        // build and tool configuration
        "Makefile",
        "CMakeLists.txt",
        "tsconfig*.json",
        ".eslintrc*",
        "eslint.config.*",
        ".prettierrc*",
        "*.config.js",
        "*.config.ts",
        "*.config.mjs",
        "*.config.cjs",
        ".babelrc",
        ".npmrc",
        ".env",
        ".env.*",
        "rust-toolchain",
        "rust-toolchain.toml",
        ".cargo/config",
        ".cargo/config.toml",
        "clippy.toml",
        "rustfmt.toml",
        "deny.toml",
        "setup.cfg",
        "tox.ini",
        ".pre-commit-config.yaml",
        "tollgate.toml",
        ".review-invariants.yml",
        ".semgrep.yml",
        "CODEOWNERS",
    ])
});

static DEPENDENCY_FILES: LazyLock<PathPatterns> = LazyLock::new(|| {
    patterns(&[
        "Cargo.toml",
        "Cargo.lock",
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "requirements*.txt",
        "pyproject.toml",
        "poetry.lock",
        "Pipfile",
        "Pipfile.lock",
        "uv.lock",
        "setup.py",
        "go.mod",
        "go.sum",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "gradle.lockfile",
        "Gemfile",
        "Gemfile.lock",
        "composer.json",
        "composer.lock",
        "*.csproj",
        "packages.lock.json",
        "mix.exs",
        "mix.lock",
    ])
});

/// Whether one of the first added lines carries a code generator's marker.
fn has_generated_header(diff: &Diff, file: &FileDiff) -> bool {
    file.added_lines()
        .take_while(|line| line.new_line.is_some_and(|n| n <= 5))
        .any(|line| {
            let text = diff.line_text(line);
            text.contains("@generated")
                || text.contains("DO NOT EDIT")
                || text.contains("do not edit")
                || text.contains("autogenerated")
                || text.contains("auto-generated")
        })
}

static LOCKFILES: LazyLock<PathPatterns> = LazyLock::new(|| {
    patterns(&[
        "Cargo.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "bun.lock",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "go.sum",
        "gradle.lockfile",
        "Gemfile.lock",
        "composer.lock",
        "packages.lock.json",
        "mix.lock",
        "flake.lock",
        "Package.resolved",
        "pubspec.lock",
    ])
});

static GENERATED_FILES: LazyLock<PathPatterns> = LazyLock::new(|| {
    patterns(&[
        "**/generated/**",
        "**/__generated__/**",
        "*.generated.*",
        "*_generated.*",
        "*.min.js",
        "*.min.css",
        "*.pb.go",
        "*_pb2.py",
        "*_pb2.pyi",
        "*.pb.rs",
        "*.snap",
    ])
});

static DOCS_FILES: LazyLock<PathPatterns> = LazyLock::new(|| {
    patterns(&[
        "*.md",
        "*.mdx",
        "*.rst",
        "*.adoc",
        "docs/**",
        "doc/**",
        "LICENSE",
        "LICENSE.*",
        "CHANGELOG",
        "AUTHORS",
    ])
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_file_kinds() {
        assert!(CONFIG_FILES.is_match(".github/workflows/ci.yml"));
        assert!(CONFIG_FILES.is_match("services/api/Dockerfile"));
        assert!(
            !CONFIG_FILES.is_match("src/data/fixtures.yml"),
            "any YAML is not config"
        );
        assert!(DEPENDENCY_FILES.is_match("crates/x/Cargo.toml"));
        assert!(DEPENDENCY_FILES.is_match("web/package-lock.json"));
        assert!(DEPENDENCY_FILES.is_match("requirements-dev.txt"));
        assert!(DOCS_FILES.is_match("README.md"));
        assert!(DOCS_FILES.is_match("docs/guide/intro.html"));
        assert!(!DOCS_FILES.is_match("src/main.rs"));
    }
}
