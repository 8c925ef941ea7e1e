//! The review-learnings operations (`tollgate learn …`, the MCP `learn_*` tools): record a
//! disposition of a finding, list the ledger, export it.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::api::ApiError;
use crate::learnings::{
    self, Disposition, LEDGER_FILE, LearningsError, MAX_FIELD_CHARS, MAX_REASON_CHARS, Record,
};

/// Most records one `learn_list` call returns.
pub const MAX_LIST_LIMIT: usize = 1000;

/// A decision about one finding, named as a review reports it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnRecordRequest {
    /// From a review result.
    pub fingerprint: String,
    /// The finding's `rule_id`.
    pub rule_id: String,
    /// `location.file`.
    pub path: String,
    /// `location.start_line`.
    pub start_line: u32,
    /// Default: `start_line`.
    #[serde(default)]
    pub end_line: Option<u32>,
    /// Why (required to dismiss).
    #[serde(default)]
    pub reason: String,
    /// Who decided.
    #[serde(default)]
    pub by: String,
    /// A path glob: every finding of `rule_id` under it.
    #[serde(default)]
    pub scope: Option<String>,
}

/// What was recorded.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LearnRecordResponse {
    pub record: Record,
    /// The ledger file (repository-relative).
    pub ledger: String,
    pub n_records: usize,
}

/// Which records to list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnListRequest {
    /// Only this disposition.
    #[serde(default)]
    pub disposition: Option<Disposition>,
    /// Only this rule.
    #[serde(default)]
    pub rule_id: Option<String>,
    /// Only paths starting with this.
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// At most this many, newest first (1–1000, default 100).
    #[serde(default = "default_limit")]
    pub limit: usize,
}

fn default_limit() -> usize {
    100
}

/// The matching records, newest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LearnListResponse {
    pub records: Vec<Record>,
    /// Matching records before `limit`.
    pub total: usize,
}

/// Records `disposition` for the finding in the workspace's `.review-learnings.jsonl`, with the
/// evidence read from the working tree. `at` is the RFC 3339 time to record.
pub fn learn_record(
    workspace: &Path,
    disposition: Disposition,
    request: LearnRecordRequest,
    at: &str,
) -> Result<LearnRecordResponse, ApiError> {
    let reason = learnings::clean_text(&request.reason).trim().to_string();
    let by = learnings::clean_text(&request.by).trim().to_string();
    if disposition == Disposition::Dismissed && reason.is_empty() {
        return Err(ApiError::invalid(
            "reason",
            "a dismissal needs a reason: say why the finding does not apply here",
        ));
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(ApiError::invalid(
            "reason",
            format!("reason must be at most {MAX_REASON_CHARS} characters"),
        ));
    }
    if by.chars().count() > MAX_FIELD_CHARS {
        return Err(ApiError::invalid(
            "by",
            format!("by must be at most {MAX_FIELD_CHARS} characters"),
        ));
    }
    if request.start_line == 0 {
        return Err(ApiError::invalid("start_line", "start_line is 1-based"));
    }
    let end_line = request.end_line.unwrap_or(request.start_line);
    if end_line < request.start_line {
        return Err(ApiError::invalid(
            "end_line",
            "end_line is before start_line",
        ));
    }
    let evidence =
        learnings::evidence_in_workspace(workspace, &request.path, request.start_line, end_line);
    let record = Record {
        fingerprint: request.fingerprint.trim().to_string(),
        rule_id: request.rule_id.trim().to_string(),
        path: request.path.trim_start_matches("./").to_string(),
        scope: request.scope.filter(|scope| !scope.trim().is_empty()),
        disposition,
        reason,
        by,
        at: at.to_string(),
        evidence,
    };
    if let Err(invalid) = record.validate() {
        return Err(ApiError::invalid(invalid.field, invalid.to_string()));
    }
    let n_records = learnings::append(workspace, record.clone()).map_err(from_learnings)?;
    Ok(LearnRecordResponse {
        record,
        ledger: LEDGER_FILE.to_string(),
        n_records,
    })
}

/// The workspace's records that match `request`, newest first.
pub fn learn_list(
    workspace: &Path,
    request: &LearnListRequest,
) -> Result<LearnListResponse, ApiError> {
    if !(1..=MAX_LIST_LIMIT).contains(&request.limit) {
        return Err(ApiError::invalid(
            "limit",
            format!(
                "limit must be between 1 and {MAX_LIST_LIMIT}, got {}",
                request.limit
            ),
        ));
    }
    let ledger = learnings::load(workspace).map_err(from_learnings)?;
    let matching: Vec<&Record> = ledger
        .records()
        .iter()
        .rev()
        .filter(|record| request.disposition.is_none_or(|d| record.disposition == d))
        .filter(|record| {
            request
                .rule_id
                .as_deref()
                .is_none_or(|rule| record.rule_id == rule)
        })
        .filter(|record| {
            request
                .path_prefix
                .as_deref()
                .is_none_or(|prefix| record.path.starts_with(prefix))
        })
        .collect();
    Ok(LearnListResponse {
        total: matching.len(),
        records: matching.into_iter().take(request.limit).cloned().collect(),
    })
}

/// The workspace's ledger as its lines (validated), ready to commit or to merge into another.
pub fn learn_export(workspace: &Path) -> Result<String, ApiError> {
    Ok(learnings::load(workspace)
        .map_err(from_learnings)?
        .to_text())
}

/// Invariant rules proposed from repeated decisions in the workspace's ledger (YAML for a human
/// to review; nothing is written).
pub fn learn_propose_invariants(workspace: &Path) -> Result<String, ApiError> {
    let ledger = learnings::load(workspace).map_err(from_learnings)?;
    Ok(learnings::propose_invariants(&ledger))
}

fn from_learnings(err: LearningsError) -> ApiError {
    let code = err.code();
    let api = ApiError::new(code, err.to_string());
    if code == ErrorCode::InvalidInput {
        api.at(LEDGER_FILE)
    } else {
        api
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(reason: &str) -> LearnRecordRequest {
        LearnRecordRequest {
            fingerprint: "0123abcd".into(),
            rule_id: "TG003".into(),
            path: "src/a.rs".into(),
            start_line: 2,
            end_line: None,
            reason: reason.into(),
            by: "alice".into(),
            scope: None,
        }
    }

    #[test]
    fn a_refused_record_names_its_field() {
        let dir = tempfile::tempdir().unwrap();
        type Spoil = fn(&mut LearnRecordRequest);
        let cases: [(&str, Spoil); 4] = [
            ("rule_id", |r| r.rule_id = " ".into()),
            ("path", |r| r.path = "../outside.rs".into()),
            ("fingerprint", |r| r.fingerprint = "a b".into()),
            ("scope", |r| r.scope = Some("src/[".into())),
        ];
        for (field, spoil) in cases {
            let mut bad = request("test data");
            spoil(&mut bad);
            let err = learn_record(dir.path(), Disposition::Dismissed, bad, "t").unwrap_err();
            assert_eq!(err.field.as_deref(), Some(field), "{err:?}");
            assert!(err.message.contains(&format!("`{field}`")), "{err:?}");
        }
    }

    #[test]
    fn records_list_and_export_through_the_ledger_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn a() {\n    eval(x);\n}\n").unwrap();
        let err = learn_record(dir.path(), Disposition::Dismissed, request(" "), "t").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("reason"));

        let done = learn_record(
            dir.path(),
            Disposition::Dismissed,
            request("test data"),
            "t",
        )
        .unwrap();
        assert_eq!(done.n_records, 1);
        assert_eq!(
            done.record.evidence,
            Some(learnings::evidence_of(["eval(x);"]))
        );
        learn_record(dir.path(), Disposition::Accepted, request(""), "t").unwrap();

        let all = learn_list(
            dir.path(),
            &LearnListRequest {
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(all.total, 2);
        assert_eq!(
            all.records[0].disposition,
            Disposition::Accepted,
            "newest first"
        );
        let dismissed = learn_list(
            dir.path(),
            &LearnListRequest {
                disposition: Some(Disposition::Dismissed),
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(dismissed.total, 1);
        let bad = learn_list(dir.path(), &LearnListRequest::default()).unwrap_err();
        assert_eq!(bad.field.as_deref(), Some("limit"));

        let text = learn_export(dir.path()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(LEDGER_FILE)).unwrap(),
            text
        );

        let mut escaping = request("x");
        escaping.path = "../etc/passwd".into();
        let err = learn_record(dir.path(), Disposition::Dismissed, escaping, "t").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("path"));
    }
}
