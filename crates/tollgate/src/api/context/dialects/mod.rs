//! Other seeds' dialects of the context operations: their tool names, parameter names,
//! defaults and result shapes as thin adapters over the one search pipeline
//! ([`super::ops::searched`]), never a search of their own. [`ck`] speaks seed 003's,
//! [`context_engine`] seed 000's indexer's.

pub mod ck;
pub mod context_engine;
pub mod info_request;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::ContextError;
use super::files::resolve;
use super::ops::invalid;
use crate::workspace::IndexedWorkspace;

/// A path argument as a scope inside the workspace: `None` for the workspace itself, else the
/// path relative to its root. Absolute paths are taken inside the workspace; one outside it, one
/// climbing out with `..`, one that does not exist or Tollgate's own state is `INVALID_INPUT`
/// naming `field` (a seed's "any directory" is this workspace's directories here).
pub(crate) fn scope(
    ws: &IndexedWorkspace,
    field: &'static str,
    path: &str,
) -> Result<Option<String>, ContextError> {
    // The workspace itself, named absolute (as ck's agents do) or as `.`.
    let given = std::path::Path::new(path.trim());
    let is_root = if given.is_absolute() {
        given.canonicalize().is_ok_and(|p| p == ws.root())
    } else {
        given
            .components()
            .all(|c| c == std::path::Component::CurDir)
    };
    if is_root {
        return Ok(None);
    }
    let resolved = resolve(ws, path).map_err(|err| match err {
        ContextError::OutsideWorkspace { .. } => invalid(
            field,
            format!(
                "`{}` is outside the workspace this server serves ({}); give the workspace or a path inside it",
                path.escape_debug(),
                ws.root().display()
            ),
        ),
        ContextError::FileNotFound { .. } => invalid(
            field,
            format!("`{}`: no such file or directory in the workspace", path.escape_debug()),
        ),
        ContextError::InvalidInput { message, .. } => invalid(field, message),
        other => invalid(field, other.to_string()),
    })?;
    let relative = resolved
        .strip_prefix(ws.root())
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    Ok(Some(relative).filter(|r| !r.is_empty()))
}

/// A page's cursor: base64 of `{"offset":N}` (the seed's own example decodes so).
pub(crate) fn cursor_at(offset: usize) -> String {
    STANDARD.encode(serde_json::json!({ "offset": offset }).to_string())
}

/// The offset a cursor names; `INVALID_INPUT` on `cursor` for one this server did not give.
pub(crate) fn offset_of(cursor: Option<&str>) -> Result<usize, ContextError> {
    let Some(cursor) = cursor.filter(|c| !c.trim().is_empty()) else {
        return Ok(0);
    };
    let bad = || {
        invalid(
            "cursor",
            "not a cursor this server gave (pass `next_cursor` back as it is)",
        )
    };
    let bytes = STANDARD.decode(cursor.trim()).map_err(|_| bad())?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    value["offset"]
        .as_u64()
        .map(|offset| offset as usize)
        .ok_or_else(bad)
}

/// The first `max` characters of `text` (whole characters).
pub(crate) fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => text[..end].to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_the_seeds_example_decodes() {
        assert_eq!(offset_of(Some(&cursor_at(25))).unwrap(), 25);
        assert_eq!(offset_of(Some("eyJvZmZzZXQiOjI1fQ==")).unwrap(), 25);
        assert_eq!(offset_of(None).unwrap(), 0);
        let err = offset_of(Some("not a cursor")).unwrap_err();
        assert_eq!(err.field(), Some("cursor"));
    }

    #[test]
    fn cut_chars_keeps_whole_characters() {
        assert_eq!(cut_chars("héllo", 2), "hé");
        assert_eq!(cut_chars("ab", 5), "ab");
    }
}
