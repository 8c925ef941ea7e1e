//! Placeholder.
#[derive(Debug, Default)]
pub struct ChangedLines;
