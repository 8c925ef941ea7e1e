//! The reviewer's instructions and the answer schema, per pass. Only trusted text lives here;
//! everything from the diff or the repository arrives fenced in the user message.

use serde_json::{Value, json};

use crate::findings::{Category, Severity};
use crate::llm::UNTRUSTED_DATA_RULE;

/// A review pass: what it looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Architecture, API compatibility, error handling, test gaps.
    Structural,
    /// Correctness, edge cases, security, performance.
    Detailed,
    /// `review_changes`: everything in one pass, with priorities and an overall verdict.
    Complete,
}

impl Pass {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Pass::Structural => "structural",
            Pass::Detailed => "detailed",
            Pass::Complete => "complete",
        }
    }

    fn focus(self) -> &'static str {
        match self {
            Pass::Structural => {
                "This is the STRUCTURAL pass. Look for: architecture problems (wrong layer, \
                 coupling, duplication of existing facilities), breaking API or behaviour \
                 changes for callers, error handling (swallowed errors, panics on bad input, \
                 missing cleanup), and test gaps (changed behaviour without a test)."
            }
            Pass::Detailed => {
                "This is the DETAILED pass. Look line by line for: correctness bugs (logic, \
                 off-by-one, wrong conditions, null/None handling), edge cases (empty input, \
                 limits, concurrency, encoding), security problems (injection, path traversal, \
                 unsafe deserialisation, secrets, authn/authz), and performance problems \
                 (quadratic loops, needless allocation or I/O in hot paths)."
            }
            Pass::Complete => {
                "This is a COMPLETE review in one pass: correctness, security, performance, \
                 maintainability, style and documentation. Give each finding a priority: 0 = \
                 must be fixed before merging (wrong results, data loss, security hole), 1 = \
                 should be fixed, 2 = worth fixing, 3 = nit. Add a suggestion when you know the \
                 fix; set can_auto_fix only when code_snippet is a complete replacement for the \
                 finding's lines. Then judge the whole change: overall_correctness is `patch is \
                 correct` when it has no bugs or blocking issues, `patch is incorrect` when it \
                 has at least one, else `needs attention`; explain why in overall_explanation \
                 and give your confidence in that verdict."
            }
        }
    }
}

/// The system prompt of a pass; `custom` is the caller's extra instructions (scrubbed).
pub(crate) fn system_prompt(pass: Pass, custom: Option<&str>) -> String {
    let mut prompt = format!(
        "You are a senior code reviewer. You review a change given as numbered unified-diff \
         hunks (the left column is the line number in the NEW file; removed lines have none), \
         optionally with surrounding code from the repository.\n\n{}\n\nReport only real, \
         specific problems introduced or exposed by this change, each pointing at the NEW-file \
         line numbers shown (`file` exactly as written after `File:` on the first line \
         inside each fenced block). Do not report style \
         preferences as bugs, do not invent code you were not shown, and return an empty list \
         when the change is fine. Confidence is your probability (0–1) that the finding is \
         real.\n\n{}",
        pass.focus(),
        UNTRUSTED_DATA_RULE
    );
    if let Some(custom) = custom {
        let custom = crate::secrets::scrub(custom, 0, 0).text;
        prompt.push_str("\n\nAdditional instructions from the team running this review:\n");
        prompt.push_str(&custom);
    }
    prompt
}

/// The answer schema of the review passes.
pub(crate) fn findings_schema() -> Value {
    let severities: Vec<&str> = Severity::ALL.iter().map(|s| s.as_str()).collect();
    let categories: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    json!({
        "type": "object",
        "required": ["findings"],
        "properties": {
            "findings": {
                "type": "array",
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "required": ["title", "severity", "category", "confidence", "file", "start_line", "message"],
                    "properties": {
                        "title": {"type": "string", "maxLength": 200},
                        "severity": {"enum": severities},
                        "category": {"enum": categories},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "file": {"type": "string"},
                        "start_line": {"type": "integer", "minimum": 1},
                        "end_line": {"type": "integer", "minimum": 1},
                        "message": {"type": "string"},
                        "impact": {"type": "string"},
                        "recommendation": {"type": "string"},
                        "evidence": {"type": "string"}
                    }
                }
            },
            "summary": {"type": "string"}
        }
    })
}

/// The answer schema of `review_changes`: findings with priorities, and a verdict.
pub(crate) fn changes_schema() -> Value {
    json!({
        "type": "object",
        "required": ["findings", "overall_correctness", "overall_explanation", "overall_confidence_score"],
        "properties": {
            "findings": {
                "type": "array",
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "required": ["title", "body", "priority", "category", "confidence_score", "file", "start_line"],
                    "properties": {
                        "title": {"type": "string", "maxLength": 200},
                        "body": {"type": "string"},
                        "priority": {"type": "integer", "minimum": 0, "maximum": 3},
                        "category": {"enum": ["correctness", "security", "performance", "maintainability", "style", "documentation"]},
                        "confidence_score": {"type": "number", "minimum": 0, "maximum": 1},
                        "file": {"type": "string"},
                        "start_line": {"type": "integer", "minimum": 1},
                        "end_line": {"type": "integer", "minimum": 1},
                        "suggestion": {
                            "type": "object",
                            "required": ["description"],
                            "properties": {
                                "description": {"type": "string"},
                                "code_snippet": {"type": "string"},
                                "can_auto_fix": {"type": "boolean"}
                            }
                        }
                    }
                }
            },
            "overall_correctness": {"enum": ["patch is correct", "patch is incorrect", "needs attention"]},
            "overall_explanation": {"type": "string"},
            "overall_confidence_score": {"type": "number", "minimum": 0, "maximum": 1}
        }
    })
}
