//! The ledger file's own format: one JSON object per line, parsed once into [`Record`]s, and
//! written back one line per record.

use std::fmt;
use std::str::FromStr;

use globset::{Glob, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::findings::UnknownValue;
use crate::learnings::LearningsError;

/// The ledger's file name at the repository root, beside `.review-invariants.yml`.
pub const LEDGER_FILE: &str = ".review-learnings.jsonl";
/// A ledger larger than this is refused (a reviewable file, not a database).
pub const MAX_LEDGER_BYTES: u64 = 4 * 1024 * 1024;
/// Longest reason kept, in characters; longer ones are refused when recorded.
pub const MAX_REASON_CHARS: usize = 1000;
/// Longest `by`, `rule_id` and `path`, in characters.
pub const MAX_FIELD_CHARS: usize = 300;

/// What a team decided about a finding.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Not a problem here: kept out of the gate while its evidence is unchanged.
    Dismissed,
    /// A real problem the team wants flagged (a convention worth a rule).
    Accepted,
    /// Was fixed; if it is found again, it is marked as returning.
    Fixed,
}

impl Disposition {
    pub const ALL: [Disposition; 3] = [
        Disposition::Dismissed,
        Disposition::Accepted,
        Disposition::Fixed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Dismissed => "dismissed",
            Disposition::Accepted => "accepted",
            Disposition::Fixed => "fixed",
        }
    }
}

impl fmt::Display for Disposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Disposition {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Disposition::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownValue {
                what: "disposition",
                given: s.to_string(),
                expected: "dismissed, accepted, fixed",
            })
    }
}

/// One line of the ledger: a decision about one finding (by fingerprint), or, with `scope`,
/// about every finding of `rule_id` whose path matches the glob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub fingerprint: String,
    pub rule_id: String,
    pub path: String,
    /// A path glob: the record covers every finding of `rule_id` under it, whatever its
    /// fingerprint or evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    pub disposition: Disposition,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub by: String,
    /// RFC 3339 UTC.
    #[serde(default)]
    pub at: String,
    /// `sha256:<hex>` of the code the finding pointed at when it was judged
    /// ([`crate::learnings::evidence_of`]); a finding whose code differs is judged again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Record {
    /// The record as one ledger line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a record always serialises")
    }

    /// Checks the fields a record must have.
    pub fn validate(&self) -> Result<(), InvalidRecord> {
        let invalid = |field, problem: String| Err(InvalidRecord { field, problem });
        if self.fingerprint.is_empty() && self.scope.is_none() {
            return invalid("fingerprint", "is empty (and there is no `scope`)".into());
        }
        if self.fingerprint.len() > 128
            || !self
                .fingerprint
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '-' | '_'))
        {
            return invalid(
                "fingerprint",
                "must be at most 128 letters, digits, `:`, `-` or `_`".into(),
            );
        }
        for (name, value) in [
            ("rule_id", &self.rule_id),
            ("path", &self.path),
            ("by", &self.by),
        ] {
            if value.chars().count() > MAX_FIELD_CHARS {
                return invalid(name, format!("is over {MAX_FIELD_CHARS} characters"));
            }
        }
        if self.rule_id.trim().is_empty() {
            return invalid("rule_id", "is empty".into());
        }
        if self.path.starts_with('/') || self.path.split('/').any(|part| part == "..") {
            return invalid(
                "path",
                format!(
                    "`{}` must be relative to the repository root",
                    self.path.escape_debug()
                ),
            );
        }
        if self.reason.chars().count() > MAX_REASON_CHARS {
            return invalid("reason", format!("is over {MAX_REASON_CHARS} characters"));
        }
        if let Some(scope) = &self.scope
            && let Err(err) = Glob::new(scope)
        {
            return invalid("scope", format!("is not a glob: {err}"));
        }
        Ok(())
    }
}

/// The field of a [`Record`] that [`Record::validate`] refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {problem}")]
pub struct InvalidRecord {
    /// The record's field, by its name in the ledger (`rule_id`).
    pub field: &'static str,
    pub problem: String,
}

/// A parsed ledger: its records in file order (a later record about the same finding wins).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    records: Vec<Record>,
    scopes: Vec<Option<GlobMatcher>>,
}

impl Ledger {
    /// Parses the ledger `text`; `label` names the file in errors (`path` or `path@<sha>`).
    /// Blank lines are skipped; any bad line is an error naming the file and line.
    pub fn parse(text: &str, label: &str) -> Result<Ledger, LearningsError> {
        let mut ledger = Ledger::default();
        for (idx, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parse_error = |message: String| LearningsError::Parse {
                path: label.to_string(),
                line: idx + 1,
                message,
            };
            let record: Record =
                serde_json::from_str(line).map_err(|err| parse_error(err.to_string()))?;
            record
                .validate()
                .map_err(|invalid| parse_error(invalid.to_string()))?;
            ledger.push(record);
        }
        Ok(ledger)
    }

    /// Appends `record` (already validated).
    pub fn push(&mut self, record: Record) {
        let scope = record
            .scope
            .as_deref()
            .and_then(|glob| Glob::new(glob).ok())
            .map(|glob| glob.compile_matcher());
        self.records.push(record);
        self.scopes.push(scope);
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// The ledger as its file text, one record a line.
    pub fn to_text(&self) -> String {
        self.records
            .iter()
            .map(|record| record.to_line() + "\n")
            .collect()
    }

    /// The last record about the finding with this fingerprint, if any.
    pub(crate) fn by_fingerprint(&self, fingerprint: &str) -> Option<&Record> {
        self.records
            .iter()
            .rev()
            .find(|record| record.scope.is_none() && record.fingerprint == fingerprint)
    }

    /// The last scoped record covering `rule_id` at `path`, if any.
    pub(crate) fn by_scope(&self, rule_id: &str, path: &str) -> Option<&Record> {
        self.records
            .iter()
            .zip(&self.scopes)
            .rev()
            .find(|(record, scope)| {
                record.rule_id == rule_id && scope.as_ref().is_some_and(|glob| glob.is_match(path))
            })
            .map(|(record, _)| record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"fingerprint":"ab12","rule_id":"TG003","path":"src/a.rs","disposition":"dismissed","reason":"test fixture","by":"alice","at":"2026-01-01T00:00:00Z","evidence":"sha256:00"}"#;

    #[test]
    fn parses_round_trips_and_later_records_win() {
        let accepted = LINE.replace("dismissed", "accepted");
        let text = format!("{LINE}\n\n{accepted}\n");
        let ledger = Ledger::parse(&text, LEDGER_FILE).expect("parses");
        assert_eq!(ledger.len(), 2);
        assert_eq!(
            ledger.by_fingerprint("ab12").unwrap().disposition,
            Disposition::Accepted
        );
        assert_eq!(Ledger::parse(&ledger.to_text(), "x").unwrap().len(), 2);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let text = format!("{LINE}\n{{not json\n");
        let err = Ledger::parse(&text, ".review-learnings.jsonl@abc").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(".review-learnings.jsonl@abc line 2:"),
            "{err}"
        );
        for (bad, says) in [
            (LINE.replace("dismissed", "ignored"), "unknown variant"),
            (LINE.replace("src/a.rs", "../x"), "relative"),
            (LINE.replace("ab12", "a b"), "fingerprint"),
            (LINE.replace("\"by\"", "\"who\""), "unknown field"),
        ] {
            let err = Ledger::parse(&bad, "l").unwrap_err().to_string();
            assert!(err.contains("line 1") && err.contains(says), "{err}");
        }
    }

    #[test]
    fn scoped_records_cover_a_rule_under_a_glob() {
        let scoped = LINE.replace(r#""path""#, r#""scope":"vendor/**","path""#);
        let ledger = Ledger::parse(&scoped, "l").unwrap();
        assert!(ledger.by_scope("TG003", "vendor/x/y.rs").is_some());
        assert!(ledger.by_scope("TG003", "src/y.rs").is_none());
        assert!(ledger.by_scope("TG004", "vendor/y.rs").is_none());
        assert!(ledger.by_fingerprint("ab12").is_none());
    }
}
