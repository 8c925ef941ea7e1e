//! Test helpers: small unified diffs into [`Diff`] values, through the real parser.

use crate::diff::Diff;

pub(crate) fn diff(text: &str) -> Diff {
    diff_bytes(text.as_bytes().to_vec())
}

pub(crate) fn diff_bytes(bytes: Vec<u8>) -> Diff {
    crate::diff::parse(bytes).unwrap_or_else(|err| panic!("test diff does not parse: {err}"))
}
