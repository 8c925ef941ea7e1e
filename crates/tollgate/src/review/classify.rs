//! Classification of a change (feature, bugfix, refactor, infra, docs, test) and its risk score,
//! with the contribution of every signal spelled out.

use std::sync::LazyLock;

use regex::Regex;

use super::signals::{self, FileFacts, is_new_file};
use crate::diff::{Diff, LineKind};
use crate::findings::{Classification, RiskFactor, Signals};

/// Classifies a change; the first rule that matches wins.
///
/// Unlike upstream, "bugfix" is not triggered by words such as `null` or `error` in code: it needs
/// a fix-like commit subject (format-patch input) or a small in-place edit that adds a guard or a
/// regression test.
pub(crate) fn classify(diff: &Diff, facts: &[FileFacts<'_>]) -> Classification {
    if facts.is_empty() {
        return Classification::Refactor;
    }
    if facts.iter().all(|f| f.is_docs) {
        return Classification::Docs;
    }
    if facts.iter().all(|f| f.is_test || f.is_docs) {
        return Classification::Test;
    }
    let n_infra = facts
        .iter()
        .filter(|f| f.is_config || f.is_dependency)
        .count();
    if n_infra * 2 >= facts.len() {
        return Classification::Infra;
    }
    let adds_source_file = facts
        .iter()
        .any(|f| is_new_file(f) && f.language.is_code() && !f.is_test && !f.is_docs);
    if adds_source_file {
        return Classification::Feature;
    }
    let (added, removed) = facts.iter().fold((0usize, 0usize), |(a, r), f| {
        (a + f.lines_added, r + f.lines_removed)
    });
    if looks_like_bugfix(diff, facts, added + removed) {
        return Classification::Bugfix;
    }
    let (small, large) = (added.min(removed), added.max(removed));
    let public_api_changed = facts.iter().any(|f| !f.api_changes.is_empty());
    if added + removed >= 20 && small as f64 >= 0.6 * large as f64 && !public_api_changed {
        return Classification::Refactor;
    }
    Classification::Feature
}

fn looks_like_bugfix(diff: &Diff, facts: &[FileFacts<'_>], changed_lines: usize) -> bool {
    if FIX_SUBJECT.is_match(preamble(diff)) {
        return true;
    }
    if changed_lines > 60 {
        return false;
    }
    let adds_regression_test = facts.iter().filter(|f| f.is_test).any(|f| {
        f.file
            .added_lines()
            .any(|line| REGRESSION_WORD.is_match(&diff.line_text(line)))
    });
    let adds_guard = facts.iter().filter(|f| f.is_source()).any(|f| {
        f.file
            .hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .any(|line| line.kind == LineKind::Added && GUARD.is_match(&diff.line_text(line)))
    });
    adds_regression_test || (adds_guard && facts.iter().all(|f| !is_new_file(f)))
}

/// Text before the first file section: a format-patch email carries the commit subject there.
fn preamble(diff: &Diff) -> &str {
    let bytes = diff.as_bytes();
    let end = diff
        .files()
        .first()
        .map(|f| {
            // `diff_line` is 1-based; find the byte offset where that line starts.
            bytes
                .split(|b| *b == b'\n')
                .take(f.diff_line.saturating_sub(1))
                .map(|l| l.len() + 1)
                .sum::<usize>()
        })
        .unwrap_or(0)
        .min(bytes.len())
        .min(64 * 1024);
    std::str::from_utf8(&bytes[..end]).unwrap_or("")
}

static FIX_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)^Subject:.*\b(fix(es|ed)?|bug|hotfix|regression|patch)\b")
        .expect("static regex")
});
static REGRESSION_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(regression|issue\s*#?\d+|bug\s*#?\d+)\b").expect("static regex")
});
// Guard clauses typical of fixes: null/None/nil checks, bounds checks, early returns on error.
static GUARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(if|elif|else if|guard|unless)\b.*(==|!=|===|!==|\bis\b|\bis not\b)\s*(null|nil|None|undefined)\b|^\s*if\b.*\.(len|length|size)\(?\)?\s*[<>]=?|^\s*if\s+err\s*!=\s*nil")
        .expect("static regex")
});

/// Risk score 1–5: 1 plus the points of each signal present, rounded up and clamped.
pub(crate) fn risk(
    facts: &[FileFacts<'_>],
    signals: &Signals,
    large_change_lines: usize,
    large_change_files: usize,
) -> (u8, Vec<RiskFactor>) {
    let mut factors = Vec::new();
    let mut add = |signal: &str, points: f64, detail: String| {
        factors.push(RiskFactor {
            signal: signal.to_string(),
            points,
            detail,
        });
    };
    let n_files = signals::n_files(facts);
    if n_files > 10 {
        add(
            "many_files",
            1.0,
            format!("{n_files} files changed (more than 10)"),
        );
    }
    let (reviewed_lines, reviewed_files) = signals::reviewed_size(facts);
    if reviewed_lines > large_change_lines || reviewed_files > large_change_files {
        add(
            "large_change",
            1.0,
            format!(
                "{reviewed_lines} lines in {reviewed_files} files, lockfiles and generated files not counted (limits: {large_change_lines} lines, {large_change_files} files)"
            ),
        );
    }
    if !signals.hotspot_files.is_empty() {
        add(
            "hotspots",
            0.5,
            format!("touches {}", list_preview(&signals.hotspot_files)),
        );
    }
    if !signals.public_api_files.is_empty() {
        add(
            "public_api_changed",
            1.5,
            format!(
                "public API changes in {}",
                list_preview(&signals.public_api_files)
            ),
        );
    }
    if !signals.config_files.is_empty() {
        add(
            "config_changed",
            0.5,
            format!("config/CI: {}", list_preview(&signals.config_files)),
        );
    }
    if !signals.dependency_files.is_empty() {
        add(
            "dependencies_changed",
            0.5,
            format!("manifests: {}", list_preview(&signals.dependency_files)),
        );
    }
    let source_changed = facts.iter().any(|f| f.is_source());
    if source_changed && !signals.tests_touched {
        add(
            "no_tests",
            1.0,
            "source code changed without any test change".to_string(),
        );
    }
    if !signals.binary_files.is_empty() {
        add(
            "binary_change",
            0.5,
            format!("binary: {}", list_preview(&signals.binary_files)),
        );
    }
    if signals.secrets_found > 0 {
        add(
            "secrets",
            2.0,
            format!("{} added line(s) hold a secret", signals.secrets_found),
        );
    }
    let total: f64 = 1.0 + factors.iter().map(|f| f.points).sum::<f64>();
    let score = total.ceil().clamp(1.0, 5.0) as u8;
    (score, factors)
}

fn list_preview(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}
