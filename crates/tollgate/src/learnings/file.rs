//! The ledger in a working tree: read it, append to it, and the evidence of code in it. Every
//! path goes through [`Workspace`], so nothing outside the root is read or written.

use std::path::Path;

use crate::learnings::{LEDGER_FILE, Learnings, LearningsError, Ledger, MAX_LEDGER_BYTES, Record};
use crate::workspace::{PathError, RepoPath, Workspace};

/// Source files larger than this give no evidence (the anchored line stands in).
pub const MAX_CODE_BYTES: u64 = 4 * 1024 * 1024;

/// The workspace's ledger; empty when there is none.
pub fn load(workspace: &Path) -> Result<Ledger, LearningsError> {
    let root = open(workspace)?;
    let path = ledger_path();
    match root.read(&path, MAX_LEDGER_BYTES) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| LearningsError::Parse {
                path: LEDGER_FILE.to_string(),
                line: 1,
                message: "the file is not valid UTF-8".to_string(),
            })?;
            Ledger::parse(&text, LEDGER_FILE)
        }
        Err(PathError::NotFound { .. }) => Ok(Ledger::default()),
        Err(err) => Err(LearningsError::Read {
            path: LEDGER_FILE.to_string(),
            message: err.to_string(),
        }),
    }
}

/// Appends `record` to the workspace's ledger (validated first; the existing file must parse,
/// so a broken ledger is never extended) and returns how many records it now holds. The file
/// is replaced atomically.
pub fn append(workspace: &Path, record: Record) -> Result<usize, LearningsError> {
    record
        .validate()
        .map_err(|invalid| LearningsError::Invalid {
            message: invalid.to_string(),
        })?;
    let mut ledger = load(workspace)?;
    ledger.push(record);
    open(workspace)?
        .write(&ledger_path(), ledger.to_text().as_bytes())
        .map_err(|err| LearningsError::Read {
            path: LEDGER_FILE.to_string(),
            message: err.to_string(),
        })?;
    Ok(ledger.len())
}

/// The evidence of lines `start..=end` of `path` in the working tree, `None` when the file or
/// the lines are not there.
pub fn evidence_in_workspace(workspace: &Path, path: &str, start: u32, end: u32) -> Option<String> {
    let root = Workspace::new(workspace).ok()?;
    let bytes = root.read(&RepoPath::new(path).ok()?, MAX_CODE_BYTES).ok()?;
    Learnings::evidence_of_text(&String::from_utf8_lossy(&bytes), start, end)
}

fn open(workspace: &Path) -> Result<Workspace, LearningsError> {
    Workspace::new(workspace).map_err(|err| LearningsError::Read {
        path: workspace.display().to_string(),
        message: err.to_string(),
    })
}

fn ledger_path() -> RepoPath {
    RepoPath::new(LEDGER_FILE).expect("the ledger's name is a valid repository path")
}
