//! Which files a rule applies to: `paths` and `exclude_paths` globs compiled into [`PathFilter`].
//!
//! Semantics (a superset of upstream's `minimatch(path, glob, { dot: true })`):
//!
//! - Paths are repository-relative and `/`-separated, as in diffs.
//! - `*` and `?` never cross a `/`; `**` spans directories (`src/**` is everything below `src`,
//!   `**/*.ts` is every `.ts` file, including at the root). `{a,b}` alternates and `[…]` classes
//!   work as in minimatch.
//! - Dotfiles and dot-directories match like any other name (`dot: true`).
//! - A pattern without a `/` matches the file name at any depth, as in `.gitignore` and minimatch's
//!   `matchBase`: `*.ts` matches `src/a.ts`. Upstream matched it at the root only, which silently
//!   skipped almost every file; write `/*.ts` to mean "at the root only".
//! - A leading `/` or `./` anchors the pattern at the repository root; a trailing `/` means
//!   "everything below this directory".
//! - In `paths`, an entry starting with `!` is an exclusion, like gitignore (in upstream it was a
//!   negated match OR-ed with the others, which matched nearly everything).
//! - Matching is case-sensitive.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled `paths` / `exclude_paths` pair.
#[derive(Debug, Clone)]
pub struct PathFilter {
    include: GlobSet,
    exclude: GlobSet,
    include_patterns: Vec<String>,
    exclude_patterns: Vec<String>,
}

/// A glob that could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid glob `{pattern}`: {reason}")]
pub struct GlobError {
    pub pattern: String,
    pub reason: String,
}

impl PathFilter {
    /// Builds a filter; `include` must not be empty (the loader reports that with a position).
    pub fn new<I, E>(include: I, exclude: E) -> Result<PathFilter, GlobError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
        E: IntoIterator,
        E::Item: AsRef<str>,
    {
        let mut include_builder = GlobSetBuilder::new();
        let mut exclude_builder = GlobSetBuilder::new();
        let mut include_patterns = Vec::new();
        let mut exclude_patterns = Vec::new();
        for pattern in include {
            let pattern = pattern.as_ref();
            match pattern.strip_prefix('!') {
                Some(negated) => {
                    exclude_builder.add(compile(negated)?);
                    exclude_patterns.push(negated.to_string());
                }
                None => {
                    include_builder.add(compile(pattern)?);
                    include_patterns.push(pattern.to_string());
                }
            }
        }
        for pattern in exclude {
            let pattern = pattern.as_ref();
            exclude_builder.add(compile(pattern)?);
            exclude_patterns.push(pattern.to_string());
        }
        let build = |builder: GlobSetBuilder| {
            builder.build().map_err(|err| GlobError {
                pattern: err.glob().unwrap_or_default().to_string(),
                reason: err.kind().to_string(),
            })
        };
        Ok(PathFilter {
            include: build(include_builder)?,
            exclude: build(exclude_builder)?,
            include_patterns,
            exclude_patterns,
        })
    }

    /// Whether the rule applies to this repository-relative path.
    pub fn matches(&self, path: &str) -> bool {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.include.is_match(path) && !self.exclude.is_match(path)
    }

    /// The `paths` globs as written (without `!` exclusions).
    pub fn include_patterns(&self) -> &[String] {
        &self.include_patterns
    }

    /// The exclusions as written (from `exclude_paths` and `!` entries of `paths`).
    pub fn exclude_patterns(&self) -> &[String] {
        &self.exclude_patterns
    }

    pub(crate) fn has_includes(&self) -> bool {
        !self.include_patterns.is_empty()
    }
}

/// Validates and compiles one glob as described in the module docs.
pub(crate) fn compile(pattern: &str) -> Result<globset::Glob, GlobError> {
    let error = |reason: &str| GlobError {
        pattern: pattern.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = pattern.trim();
    if trimmed.is_empty() {
        return Err(error("the glob is empty"));
    }
    if trimmed.starts_with('!') {
        return Err(error(
            "negation is only allowed once, at the start of a `paths` entry",
        ));
    }
    let mut chars = trimmed.chars();
    while let Some(c) = chars.next() {
        // A backslash escapes a glob metacharacter; anything else is almost always a Windows
        // path separator, and diff paths use `/`.
        if c == '\\' && !chars.next().is_some_and(|next| "*?[]{}!,\\".contains(next)) {
            return Err(error(
                "globs use `/` as the path separator (`\\` only escapes a glob metacharacter)",
            ));
        }
    }
    let mut glob = trimmed.to_string();
    let anchored = if let Some(rest) = glob.strip_prefix("./") {
        glob = rest.to_string();
        true
    } else if let Some(rest) = glob.strip_prefix('/') {
        glob = rest.to_string();
        true
    } else {
        false
    };
    if glob.ends_with('/') {
        glob.push_str("**");
    }
    if glob.is_empty() {
        return Err(error("the glob names only the repository root"));
    }
    if !anchored && !glob.contains('/') {
        glob = format!("**/{glob}");
    }
    GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .map_err(|err| error(&err.kind().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> PathFilter {
        PathFilter::new(include, exclude).unwrap()
    }

    #[test]
    fn double_star_spans_directories_and_matches_the_root() {
        let ts = filter(&["**/*.ts"], &[]);
        assert!(ts.matches("a.ts"));
        assert!(ts.matches("src/deep/er/a.ts"));
        assert!(!ts.matches("src/a.tsx"));
        let src = filter(&["src/**"], &[]);
        assert!(src.matches("src/a.rs"));
        assert!(src.matches("src/x/y/z.rs"));
        assert!(!src.matches("lib/src/a.rs"));
        assert!(!src.matches("srcx/a.rs"));
    }

    #[test]
    fn single_star_does_not_cross_directories() {
        let f = filter(&["src/*.js"], &[]);
        assert!(f.matches("src/a.js"));
        assert!(!f.matches("src/x/a.js"));
        assert!(!f.matches("lib/src/a.js"));
    }

    #[test]
    fn bare_names_match_at_any_depth_and_slash_anchors_at_the_root() {
        let f = filter(&["*.ts"], &[]);
        assert!(f.matches("a.ts"));
        assert!(f.matches("src/a.ts"));
        let f = filter(&["Dockerfile"], &[]);
        assert!(f.matches("services/api/Dockerfile"));
        let root_only = filter(&["/*.ts"], &[]);
        assert!(root_only.matches("a.ts"));
        assert!(!root_only.matches("src/a.ts"));
        let dot_slash = filter(&["./src/*.ts"], &[]);
        assert!(dot_slash.matches("src/a.ts"));
    }

    #[test]
    fn dotfiles_match() {
        let f = filter(&["**/*.yml"], &[]);
        assert!(f.matches(".github/workflows/ci.yml"));
        let f = filter(&[".github/**"], &[]);
        assert!(f.matches(".github/workflows/ci.yml"));
        let f = filter(&["*"], &[]);
        assert!(f.matches(".env"));
        assert!(f.matches("config/.env"));
    }

    #[test]
    fn trailing_slash_means_the_whole_directory() {
        let f = filter(&["migrations/"], &[]);
        assert!(f.matches("migrations/001.sql"));
        assert!(f.matches("migrations/a/b.sql"));
    }

    #[test]
    fn braces_and_classes_work() {
        let f = filter(&["src/**/*.{ts,tsx}"], &[]);
        assert!(f.matches("src/a/b.tsx"));
        assert!(f.matches("src/b.ts"));
        assert!(!f.matches("src/b.js"));
        let f = filter(&["v[0-9].txt"], &[]);
        assert!(f.matches("docs/v1.txt"));
    }

    #[test]
    fn excludes_win_over_includes() {
        let f = filter(&["src/**/*.ts"], &["**/*.test.ts", "src/generated/**"]);
        assert!(f.matches("src/a.ts"));
        assert!(!f.matches("src/a.test.ts"));
        assert!(!f.matches("src/generated/api.ts"));
        let f = filter(&["src/**", "!src/vendor/**"], &[]);
        assert!(f.matches("src/a.ts"));
        assert!(!f.matches("src/vendor/x.ts"));
        assert_eq!(f.include_patterns(), ["src/**"]);
        assert_eq!(f.exclude_patterns(), ["src/vendor/**"]);
    }

    #[test]
    fn matching_is_case_sensitive() {
        let f = filter(&["*.MD"], &[]);
        assert!(!f.matches("readme.md"));
    }

    #[test]
    fn bad_globs_are_errors() {
        for bad in ["", "  ", "src/[a", "a/{b", "!!x", "src\\a.ts", "/"] {
            assert!(compile(bad).is_err(), "`{bad}` should be refused");
        }
        let err = PathFilter::new(["src/[a"], [""; 0]).unwrap_err();
        assert_eq!(err.pattern, "src/[a");
        assert!(!err.reason.is_empty());
    }
}
