//! Upstream's post-filter, in its order: confidence threshold → changed lines only (priority 0
//! always kept) → categories → sort by priority → cap at `max_findings`.

use super::{Options, ReviewFinding};

/// The findings that pass, and how many were removed.
pub(super) fn apply(
    findings: Vec<ReviewFinding>,
    options: &Options,
) -> (Vec<ReviewFinding>, usize) {
    let n_found = findings.len();
    let mut kept: Vec<ReviewFinding> = findings
        .into_iter()
        .filter(|f| f.confidence_score >= options.confidence_threshold)
        .filter(|f| !options.changed_lines_only || f.is_on_changed_line || f.priority == 0)
        .filter(|f| options.categories.is_empty() || options.categories.contains(&f.category))
        .collect();
    // Stable, so equal priorities keep the order the model gave them in.
    kept.sort_by_key(|f| f.priority);
    kept.truncate(options.max_findings);
    let n_removed = n_found - kept.len();
    (kept, n_removed)
}
