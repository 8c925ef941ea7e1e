//! Placeholder replaced by the parser.
use super::Diff;
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct DiffError {
    pub line: usize,
    pub message: String,
}
pub fn parse(bytes: Vec<u8>) -> Result<Diff, DiffError> {
    let _ = bytes;
    Err(DiffError {
        line: 0,
        message: "unimplemented".into(),
    })
}
