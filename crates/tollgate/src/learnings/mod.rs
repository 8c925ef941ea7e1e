//! Review learnings: the team's decisions about findings, kept in a reviewable file at the
//! repository root (`.review-learnings.jsonl`, [`LEDGER_FILE`]), merged like code.
//!
//! Each line records a finding's fingerprint (or a path glob `scope` for a whole rule),
//! `dismissed`, `accepted` or `fixed`, the reason, who and when, and the evidence it was judged
//! on: a hash of the code the finding pointed at ([`evidence_of`]). [`Learnings::apply`] is the
//! gate's one use of it: a dismissed finding whose code is unchanged is set aside (kept in the
//! result's `dismissed` list, never dropped); when the code changed, the finding comes back
//! marked as returning. The ledger is read like the other gate files (the base commit in CI),
//! so a pull request cannot dismiss its own findings by editing it.
//!
//! Invariant: this module decides nothing else about findings (no severities, no filters); it
//! reads only its own file and the code at the findings it is asked about.

mod apply;
mod conventions;
mod file;
mod ledger;
mod propose;

pub use apply::{Applied, Learnings};
pub use conventions::{MAX_CONVENTIONS, MAX_CONVENTIONS_CHARS, conventions};
pub use file::{LedgerLock, MAX_CODE_BYTES, append, evidence_in_workspace, load, read_text};
pub use ledger::{
    Disposition, InvalidRecord, LEDGER_FILE, Ledger, MAX_FIELD_CHARS, MAX_LEDGER_BYTES,
    MAX_REASON_CHARS, Record,
};
pub use propose::{MIN_REPEATS, propose_invariants};

use sha2::{Digest, Sha256};

use crate::ErrorCode;
use crate::findings::normalize_anchor;

/// The ledger could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LearningsError {
    #[error("{path} line {line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error("Cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("Invalid learning: {message}")]
    Invalid { message: String },
}

impl LearningsError {
    pub fn code(&self) -> ErrorCode {
        match self {
            LearningsError::Parse { .. } | LearningsError::Invalid { .. } => {
                ErrorCode::InvalidInput
            }
            LearningsError::Read { .. } => ErrorCode::IoError,
        }
    }
}

/// A person's free text for a ledger record (a reason, a name), as it may be committed: every
/// control character (newlines, ESC, BEL, ...) becomes a space and every secret is masked. The
/// one rule for text entering the ledger, from the CLI, the MCP tools and pull-request comments.
pub fn clean_text(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    crate::secrets::redact_line(&flat)
}

/// The evidence of a finding: `sha256:` and the first 16 bytes in hex of its lines, each with
/// whitespace collapsed, so re-indenting keeps a dismissal and any other edit brings it back.
pub fn evidence_of<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut hasher = Sha256::new();
    for line in lines {
        hasher.update(normalize_anchor(line).as_bytes());
        hasher.update([b'\n']);
    }
    let digest = hasher.finalize();
    let mut hex = String::from("sha256:");
    for byte in &digest[..16] {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}
