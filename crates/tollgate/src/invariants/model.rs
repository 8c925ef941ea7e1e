//! The validated form of an invariants file: an [`InvariantSet`] of [`Invariant`]s, each holding
//! compiled globs and regexes. Only the loader builds these, so every value in them has been
//! checked once and nothing downstream re-parses strings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::findings::{Category, Severity};

use super::error::{InvariantsError, Problem};
use super::paths::PathFilter;
use super::pattern::Pattern;

/// The confidence of an invariant finding when the rule gives none: upstream's value. The
/// match itself is certain, but a regex cannot know intent.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// Rules loaded from one or more invariants files, in file order.
#[derive(Debug, Clone, Default)]
pub struct InvariantSet {
    pub(super) rules: Vec<Invariant>,
    /// Rendered `path:line:col: rule ID: message` lines.
    pub(super) warnings: Vec<String>,
    pub(super) sources: Vec<PathBuf>,
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Invariant {
    pub(super) id: String,
    pub(super) section: String,
    pub(super) text: String,
    pub(super) title: String,
    pub(super) severity: Severity,
    pub(super) category: Category,
    pub(super) check: Option<Check>,
    pub(super) paths: PathFilter,
    pub(super) lines: Lines,
    pub(super) message: Option<String>,
    pub(super) recommendation: Option<String>,
    pub(super) impact: Option<String>,
    pub(super) confidence: f64,
    pub(super) enabled: bool,
    pub(super) origin: Origin,
}

/// What a rule checks (its `action` with the regexes that action needs).
#[derive(Debug, Clone)]
pub enum Check {
    /// `deny`: every added line matching the pattern is a finding.
    Deny(Pattern),
    /// `require`: a matching file whose added lines never match the pattern is a finding.
    Require(Pattern),
    /// `when_require`: when `when` matches an added line, `require` must match one too.
    WhenRequire { when: Pattern, require: Pattern },
}

impl Check {
    /// The action's name as written in the file.
    pub fn action(&self) -> &'static str {
        match self {
            Check::Deny(_) => "deny",
            Check::Require(_) => "require",
            Check::WhenRequire { .. } => "when_require",
        }
    }
}

/// Which lines of a changed file a rule looks at (the `lines` extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Added lines (the default, and upstream's only behaviour).
    Added,
    /// Removed lines: for `deny` rules that guard against deleting something (a security check,
    /// a licence header). Deleted files are included.
    Removed,
}

impl Lines {
    pub fn as_str(self) -> &'static str {
        match self {
            Lines::Added => "added",
            Lines::Removed => "removed",
        }
    }
}

/// Where a rule was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub path: Arc<Path>,
    pub line: usize,
    pub column: usize,
}

impl InvariantSet {
    /// A set with no rules (what a repository without an invariants file gets).
    pub fn empty() -> InvariantSet {
        InvariantSet::default()
    }

    /// Every rule, including guidance-only and disabled ones, in file order.
    pub fn rules(&self) -> &[Invariant] {
        &self.rules
    }

    pub fn get(&self, id: &str) -> Option<&Invariant> {
        self.rules.iter().find(|rule| rule.id == id)
    }

    /// Rules that are evaluated against diffs: enabled and with an action.
    pub fn checks(&self) -> impl Iterator<Item = &Invariant> {
        self.rules
            .iter()
            .filter(|rule| rule.enabled && rule.check.is_some())
    }

    /// Enabled rules without an action: text for the model's prompt, never evaluated here.
    pub fn guidance(&self) -> impl Iterator<Item = &Invariant> {
        self.rules
            .iter()
            .filter(|rule| rule.enabled && rule.check.is_none())
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Warnings from loading (unknown keys, guidance-only rules, ignored sections), each
    /// rendered as `path:line:col: rule ID: message`.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The files the rules came from, in load order.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// Combines two sets (say, a shipped pack and the repository's own file). A rule id defined
    /// in both is an error reported against `other`, naming where the first definition is.
    pub fn merge(mut self, other: InvariantSet) -> Result<InvariantSet, InvariantsError> {
        let mut problems = Vec::new();
        for rule in &other.rules {
            if let Some(first) = self.get(&rule.id) {
                problems.push(Problem {
                    line: rule.origin.line,
                    column: rule.origin.column,
                    rule_id: Some(rule.id.clone()),
                    message: format!(
                        "duplicate rule id `{}` (already defined at {}:{}:{})",
                        rule.id,
                        first.origin.path.display(),
                        first.origin.line,
                        first.origin.column
                    ),
                });
            }
        }
        if let Some(first_problem) = problems.first() {
            let path = other
                .rules
                .iter()
                .find(|rule| Some(&rule.id) == first_problem.rule_id.as_ref())
                .map(|rule| rule.origin.path.to_path_buf())
                .unwrap_or_default();
            return Err(InvariantsError::Invalid {
                path,
                problems,
                warnings: Vec::new(),
            });
        }
        self.rules.extend(other.rules);
        self.warnings.extend(other.warnings);
        self.sources.extend(other.sources);
        Ok(self)
    }
}

impl Invariant {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The free-text section the rule was listed under.
    pub fn section(&self) -> &str {
        &self.section
    }

    /// The full `rule` text (what the model's prompt gets for guidance rules).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The first 80 characters of the rule text, whitespace collapsed.
    pub fn title(&self) -> &str {
        &self.title
    }

    pub fn severity(&self) -> Severity {
        self.severity
    }

    pub fn category(&self) -> Category {
        self.category
    }

    /// `None` for a guidance-only rule (no `action`).
    pub fn check(&self) -> Option<&Check> {
        self.check.as_ref()
    }

    pub fn paths(&self) -> &PathFilter {
        &self.paths
    }

    pub fn lines(&self) -> Lines {
        self.lines
    }

    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    pub fn recommendation(&self) -> Option<&str> {
        self.recommendation.as_deref()
    }

    pub fn impact(&self) -> Option<&str> {
        self.impact.as_deref()
    }

    pub fn confidence(&self) -> f64 {
        self.confidence
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn origin(&self) -> &Origin {
        &self.origin
    }
}
