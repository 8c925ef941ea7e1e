//! Definitions a change uses, drawn from the workspace's code index: for each name the added
//! lines mention that the index knows as a definition in another file, that definition's code.
//! A reviewer needs it to judge a call (its signature, its error cases) without guessing.
//!
//! Only an index that already exists is read; a review never builds or updates one. The index
//! may be older than the working tree, so a definition is shown only when its first line still
//! names it; the code itself is read from the working tree, confined to the workspace.
//!
//! A build without the code index (the core's `index` feature off, as `tollgate-action` is
//! built) has no `UsedDefinitions` value at all: the review context goes without them.

#[cfg(feature = "index")]
pub(crate) use with_index::UsedDefinitions;
#[cfg(not(feature = "index"))]
pub(crate) use without_index::UsedDefinitions;

#[cfg(not(feature = "index"))]
mod without_index {
    use std::path::Path;

    use crate::diff::{Diff, FileDiff};

    /// Never built: this build has no code index to read definitions from.
    pub(crate) enum UsedDefinitions {}

    impl UsedDefinitions {
        /// Always `None`: built without the `index` feature.
        pub(crate) fn open(_root: &Path) -> Option<UsedDefinitions> {
            tracing::debug!(
                "built without the code index (feature `index`): no used definitions in the review context"
            );
            None
        }

        pub(crate) fn excerpt(
            &self,
            _diff: &Diff,
            _file: &FileDiff,
            _root: &Path,
        ) -> Option<String> {
            match *self {}
        }
    }
}

#[cfg(feature = "index")]
mod with_index {
    use std::collections::HashSet;
    use std::fmt::Write as _;
    use std::path::Path;

    use tollgate_index::IndexConfig;
    use tollgate_index::symbols::{Definition, Outlines};

    use crate::diff::{Diff, FileDiff};
    use crate::review::llm::sections::read_confined;

    /// Definitions shown per changed file at most.
    const MAX_PER_FILE: usize = 4;
    /// Lines of one definition shown at most (the rest is elided).
    const MAX_LINES: usize = 30;
    /// A name defined in more places than this is too ambiguous to show.
    const MAX_CANDIDATES: usize = 3;
    /// Names shorter than this (`i`, `ok`, `id`) say little.
    const MIN_NAME_LEN: usize = 3;

    /// The code index's outlines of a workspace.
    pub(crate) struct UsedDefinitions {
        outlines: Outlines,
    }

    impl UsedDefinitions {
        /// The outlines of the index at `<root>/.tollgate/index`; `None` when there is none (or it
        /// cannot be read, or `.tollgate` is a link a repository could point anywhere: the review
        /// goes on without it).
        pub(crate) fn open(root: &Path) -> Option<UsedDefinitions> {
            let mut config = IndexConfig::new(root);
            config.dir = crate::workspace::Workspace::new(root)
                .ok()?
                .state_dir("index")
                .ok()?;
            if !config.dir.join("meta.json").is_file() {
                return None;
            }
            match Outlines::load(&config) {
                Ok(Some(outlines)) => Some(UsedDefinitions { outlines }),
                Ok(None) => None,
                Err(err) => {
                    tracing::warn!("code index not used for review context: {err}");
                    None
                }
            }
        }

        /// The definitions `file`'s added lines use that live in other files, numbered, or `None`.
        pub(crate) fn excerpt(&self, diff: &Diff, file: &FileDiff, root: &Path) -> Option<String> {
            let path = file.new_path.as_deref()?;
            let language = self
                .outlines
                .language_of(path)
                .map(str::to_string)
                .or_else(|| {
                    tollgate_index::walk::detect_language(Path::new(path))
                        .map(|l| l.as_str().to_string())
                })?;
            let mut names: Vec<String> = Vec::new();
            let mut seen = HashSet::new();
            for line in file.added_lines() {
                for name in identifiers(&diff.line_text(line)) {
                    if seen.insert(name.to_string()) {
                        names.push(name.to_string());
                    }
                }
            }
            let mut out = String::new();
            let mut shown = 0;
            for name in names {
                if shown == MAX_PER_FILE {
                    break;
                }
                let candidates: Vec<Definition> = self
                    .outlines
                    .definitions(&name)
                    .into_iter()
                    .filter(|d| d.language == language)
                    .collect();
                // Defined in the file itself: its surrounding code is the better context.
                if candidates.is_empty()
                    || candidates.len() > MAX_CANDIDATES
                    || candidates.iter().any(|d| d.path == path)
                {
                    continue;
                }
                let Some(code) = candidates.iter().find_map(|d| render(d, root)) else {
                    continue;
                };
                out.push_str(&code);
                shown += 1;
            }
            (!out.is_empty()).then_some(out)
        }
    }

    /// Identifier-like words of a line, long enough to mean something.
    fn identifiers(line: &str) -> impl Iterator<Item = &str> {
        line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() >= MIN_NAME_LEN && !w.starts_with(|c: char| c.is_ascii_digit()))
    }

    /// The definition's lines from the working tree, when its first line still names it.
    fn render(definition: &Definition, root: &Path) -> Option<String> {
        let text = read_confined(root, &definition.path)?;
        let lines: Vec<&str> = text.lines().collect();
        let first = definition.line.checked_sub(1)?;
        if !lines.get(first)?.contains(definition.name.as_str()) {
            return None; // The index is older than this file.
        }
        let last = definition.end_line.max(definition.line).min(lines.len());
        let shown_last = last.min(definition.line + MAX_LINES - 1);
        let mut out = format!(
            "`{}` ({}) at {}:{}-{}\n",
            definition.name,
            definition.kind,
            definition.path.escape_debug(),
            definition.line,
            last
        );
        for n in definition.line..=shown_last {
            let _ = writeln!(out, "{n:>6} | {}", lines[n - 1]);
        }
        if shown_last < last {
            let _ = writeln!(out, "   ... ({} more lines)", last - shown_last);
        }
        Some(out)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn identifiers_skip_short_words_and_numbers() {
            let words: Vec<&str> =
                identifiers("let ok = parse_quota(x, 42, 3rd) + self.limit_v2;").collect();
            assert_eq!(words, ["let", "parse_quota", "self", "limit_v2"]);
        }
    }
}
