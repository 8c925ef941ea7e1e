//! The gate's use of the ledger: which findings are set aside, which come back.

use std::collections::{BTreeMap, HashSet};

use crate::findings::{Finding, LearningNote, LearningStatus};
use crate::learnings::{Disposition, Ledger, Record, evidence_of};
use crate::secrets::redact_line;

/// A finding spanning more lines than this is judged on its first lines only.
const MAX_EVIDENCE_LINES: u32 = 200;

/// A ledger plus the code its findings point at (the reviewed head), ready for the gate.
#[derive(Debug, Clone, Default)]
pub struct Learnings {
    ledger: Ledger,
    /// Lines of each file the ledger names; `None` when it could not be read.
    code: BTreeMap<String, Option<Vec<String>>>,
}

/// What [`Learnings::apply`] decided.
#[derive(Debug, Default)]
pub struct Applied {
    /// Findings for the gate (returning ones carry a [`LearningNote`]).
    pub kept: Vec<Finding>,
    /// Dismissed findings whose evidence is unchanged, each with its note.
    pub dismissed: Vec<Finding>,
}

impl Learnings {
    /// `read` returns a file's text at the reviewed head, or `None`; it is asked once for each
    /// path a fingerprint record names (the only files whose evidence can matter).
    pub fn new(ledger: Ledger, mut read: impl FnMut(&str) -> Option<String>) -> Learnings {
        let mut code = BTreeMap::new();
        for record in ledger.records() {
            if record.scope.is_none() && !code.contains_key(&record.path) {
                let lines = read(&record.path).map(|text| text.lines().map(String::from).collect());
                code.insert(record.path.clone(), lines);
            }
        }
        Learnings { ledger, code }
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The evidence of `finding` against this head's code: its lines when the file was read,
    /// else its anchored line.
    pub fn evidence(&self, finding: &Finding) -> String {
        let lines = self
            .code
            .get(&finding.location.file)
            .and_then(Option::as_ref)
            .and_then(|lines| {
                evidence_in(
                    lines,
                    finding.location.start_line,
                    finding.location.end_line,
                )
            });
        lines.unwrap_or_else(|| evidence_of([finding.anchor_text.as_str()]))
    }

    /// Sets aside dismissed findings whose evidence is unchanged and marks the ones that came
    /// back (dismissed or fixed before, code changed since). A dismissal whose finding is gone
    /// marks a new finding of the same rule in the same file as returning: editing the
    /// dismissed line changes its fingerprint, and it is the same finding to a reader.
    pub fn apply(&self, findings: Vec<Finding>) -> Applied {
        let mut applied = Applied::default();
        if self.ledger.is_empty() {
            applied.kept = findings;
            return applied;
        }
        let mut matched: HashSet<&str> = HashSet::new();
        for mut finding in findings {
            let record = self
                .ledger
                .by_fingerprint(&finding.fingerprint)
                .or_else(|| {
                    self.ledger
                        .by_scope(&finding.rule_id, &finding.location.file)
                });
            let Some(record) = record else {
                applied.kept.push(finding);
                continue;
            };
            matched.insert(record.fingerprint.as_str());
            match record.disposition {
                Disposition::Accepted => applied.kept.push(finding),
                Disposition::Fixed => {
                    finding.learning = Some(note(record, LearningStatus::Returning));
                    applied.kept.push(finding);
                }
                Disposition::Dismissed => {
                    let unchanged = record.scope.is_some()
                        || record
                            .evidence
                            .as_deref()
                            .is_none_or(|evidence| evidence == self.evidence(&finding));
                    if unchanged {
                        finding.learning = Some(note(record, LearningStatus::Dismissed));
                        applied.dismissed.push(finding);
                    } else {
                        finding.learning = Some(note(record, LearningStatus::Returning));
                        applied.kept.push(finding);
                    }
                }
            }
        }
        // Dismissals whose finding was not seen, latest first, each claiming one new finding.
        let mut seen = HashSet::new();
        for record in self.ledger.records().iter().rev() {
            if record.scope.is_some()
                || record.disposition != Disposition::Dismissed
                || matched.contains(record.fingerprint.as_str())
                || !seen.insert(record.fingerprint.as_str())
            {
                continue;
            }
            // A later record about the same fingerprint decides (seen above).
            if let Some(finding) = applied.kept.iter_mut().find(|finding| {
                finding.learning.is_none()
                    && finding.rule_id == record.rule_id
                    && finding.location.file == record.path
                    && self.ledger.by_fingerprint(&finding.fingerprint).is_none()
            }) {
                finding.learning = Some(note(record, LearningStatus::Returning));
            }
        }
        applied
    }
}

/// The evidence of lines `start..=end` (1-based) of `lines`, or `None` when they are not there.
pub(crate) fn evidence_in(lines: &[String], start: u32, end: u32) -> Option<String> {
    let start = start.max(1);
    let end = end
        .max(start)
        .min(start.saturating_add(MAX_EVIDENCE_LINES - 1));
    let slice = lines.get(start as usize - 1..(end as usize).min(lines.len()))?;
    (!slice.is_empty()).then(|| evidence_of(slice.iter().map(String::as_str)))
}

impl Learnings {
    /// The evidence of lines `start..=end` of the file `text`: what a dismissal records.
    pub fn evidence_of_text(text: &str, start: u32, end: u32) -> Option<String> {
        let lines: Vec<String> = text.lines().map(String::from).collect();
        evidence_in(&lines, start, end)
    }
}

fn note(record: &Record, status: LearningStatus) -> LearningNote {
    LearningNote {
        status,
        reason: redact_line(&record.reason),
        by: record.by.clone(),
        at: record.at.clone(),
        fingerprint: record.fingerprint.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Category, Location, Severity, Source, assign_identities};

    fn finding(rule: &str, line: u32, anchor: &str) -> Finding {
        Finding::new(
            rule,
            Severity::High,
            Category::Security,
            Source::Invariants,
            "t",
            Location::line("src/a.rs", line),
        )
        .with_anchor(anchor)
    }

    fn dismissal(finding: &Finding, evidence: &str) -> Record {
        Record {
            fingerprint: finding.fingerprint.clone(),
            rule_id: finding.rule_id.clone(),
            path: finding.location.file.clone(),
            scope: None,
            disposition: Disposition::Dismissed,
            reason: "fixture data".into(),
            by: "alice".into(),
            at: "2026-01-01T00:00:00Z".into(),
            evidence: Some(evidence.into()),
        }
    }

    #[test]
    fn a_dismissal_holds_while_the_code_is_unchanged_and_returns_when_it_changes() {
        let code = "fn a() {\n    eval(x);\n}\n";
        let mut findings = vec![finding("R1", 2, "eval(x);"), finding("R2", 1, "fn a() {")];
        assign_identities(&mut findings);
        let evidence = Learnings::evidence_of_text(code, 2, 2).unwrap();
        let mut ledger = Ledger::default();
        ledger.push(dismissal(&findings[0], &evidence));
        let learnings = Learnings::new(ledger.clone(), |_| Some(code.to_string()));

        let applied = learnings.apply(findings.clone());
        assert_eq!(applied.dismissed.len(), 1);
        assert_eq!(applied.dismissed[0].rule_id, "R1");
        let note = applied.dismissed[0].learning.as_ref().unwrap();
        assert_eq!(
            (note.status, note.by.as_str()),
            (LearningStatus::Dismissed, "alice")
        );
        assert_eq!(applied.kept.len(), 1);
        assert!(applied.kept[0].learning.is_none());

        // Re-indented: still dismissed. Edited (same anchor, as a multi-line range): returns.
        let reindented =
            Learnings::new(ledger.clone(), |_| Some("fn a() {\n  eval(x);\n}\n".into()));
        assert_eq!(reindented.apply(findings.clone()).dismissed.len(), 1);
        let mut wide = findings.clone();
        wide[0].location.end_line = 3;
        let mut wide_ledger = Ledger::default();
        wide_ledger.push(dismissal(
            &wide[0],
            &Learnings::evidence_of_text(code, 2, 3).unwrap(),
        ));
        let edited = Learnings::new(wide_ledger, |_| {
            Some("fn a() {\n    eval(x);\n} // x\n".into())
        });
        let applied = edited.apply(wide);
        assert!(applied.dismissed.is_empty());
        let back = applied.kept.iter().find(|f| f.rule_id == "R1").unwrap();
        assert_eq!(
            back.learning.as_ref().unwrap().status,
            LearningStatus::Returning
        );
    }

    #[test]
    fn an_edited_dismissed_line_comes_back_marked_returning() {
        let mut before = vec![finding("R1", 2, "eval(x);")];
        assign_identities(&mut before);
        let mut ledger = Ledger::default();
        ledger.push(dismissal(&before[0], &evidence_of(["eval(x);"])));
        let learnings = Learnings::new(ledger, |_| None);
        let mut after = vec![finding("R1", 2, "eval(y);"), finding("R2", 2, "eval(y);")];
        assign_identities(&mut after);
        let applied = learnings.apply(after);
        assert!(applied.dismissed.is_empty());
        let status = |rule: &str| {
            applied
                .kept
                .iter()
                .find(|f| f.rule_id == rule)
                .and_then(|f| f.learning.as_ref())
                .map(|note| note.status)
        };
        assert_eq!(status("R1"), Some(LearningStatus::Returning));
        assert_eq!(status("R2"), None);
    }

    #[test]
    fn later_records_win_and_scopes_cover_a_rule() {
        let mut findings = vec![finding("R1", 2, "eval(x);")];
        assign_identities(&mut findings);
        let mut ledger = Ledger::default();
        ledger.push(dismissal(&findings[0], &evidence_of(["eval(x);"])));
        let mut accepted = dismissal(&findings[0], "");
        accepted.disposition = Disposition::Accepted;
        ledger.push(accepted);
        let applied = Learnings::new(ledger, |_| None).apply(findings.clone());
        assert!(applied.dismissed.is_empty());
        assert!(applied.kept[0].learning.is_none());

        let mut scoped = dismissal(&findings[0], "");
        scoped.fingerprint = String::new();
        scoped.scope = Some("src/**".into());
        scoped.evidence = None;
        let mut ledger = Ledger::default();
        ledger.push(scoped);
        assert_eq!(
            Learnings::new(ledger, |_| None)
                .apply(findings)
                .dismissed
                .len(),
            1
        );
    }
}
