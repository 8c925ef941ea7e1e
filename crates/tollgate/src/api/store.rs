//! `store_migrate`: copy one store into another (SQLite to PostgreSQL and back, or file to
//! file), verified table by table by row counts and checksums.

use std::path::Path;

use crate::ErrorCode;
use crate::api::ApiError;
use crate::store::{CopyReport, Store, StoreError, StoreUrl};

/// Copies the store `from` names into the one `to` names (URLs as `--store` takes them; a
/// relative SQLite path is relative to `workspace`). A target with any plan, session or cached
/// answer is refused unless `force`, which replaces its contents (the result equals the source).
pub fn store_migrate(
    workspace: &Path,
    from: &str,
    to: &str,
    force: bool,
) -> Result<CopyReport, ApiError> {
    let parse = |field: &str, text: &str| {
        text.parse::<StoreUrl>()
            .map_err(|err| ApiError::invalid(field, err.to_string()))
    };
    let (from_url, to_url) = (parse("from", from)?, parse("to", to)?);
    if from_url == to_url {
        return Err(ApiError::invalid(
            "to",
            "the source and the target are the same store",
        ));
    }
    // Opening an SQLite store creates it: a mistyped source must not read as an empty store.
    if let StoreUrl::Sqlite(path) = &from_url
        && !workspace.join(path).is_file()
    {
        return Err(ApiError::invalid(
            "from",
            format!("the source store {} does not exist", path.display()),
        ));
    }
    let source = Store::open_url(workspace, &from_url, false).map_err(store_error)?;
    let target = Store::open_url(workspace, &to_url, false).map_err(store_error)?;
    source.copy_into(&target, force).map_err(store_error)
}

fn store_error(err: StoreError) -> ApiError {
    let code = match err {
        StoreError::Conflict(_) => ErrorCode::Conflict,
        ref other => other.code(),
    };
    ApiError::new(code, err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_source_or_the_same_store_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = store_migrate(dir.path(), "sqlite:nope.db", "sqlite:t.db", false).unwrap_err();
        assert_eq!(
            (err.code, err.field.as_deref()),
            (ErrorCode::InvalidInput, Some("from"))
        );
        assert!(!dir.path().join("nope.db").exists());
        let err = store_migrate(dir.path(), "sqlite:a.db", "sqlite:a.db", false).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("to"));
        let err =
            store_migrate(dir.path(), "sqlite:a.db", "postgres://u:pw@h/db", false).unwrap_err();
        assert!(!err.message.contains("pw@"), "{}", err.message);
    }

    #[test]
    fn a_copy_into_a_store_with_rows_is_a_conflict_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
        for path in [&a, &b] {
            let store = Store::open(path).unwrap();
            store
                .transact(|tx| {
                    tx.cache_put(
                        &path.display().to_string(),
                        &crate::store::CachedResponse {
                            model: "m".into(),
                            response: "r".into(),
                            input_tokens: 0,
                            output_tokens: 0,
                        },
                    )
                })
                .unwrap();
        }
        let err = store_migrate(dir.path(), "sqlite:a.db", "sqlite:b.db", false).unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict, "{}", err.message);
        let report = store_migrate(dir.path(), "sqlite:a.db", "sqlite:b.db", true).unwrap();
        assert_eq!(report.replaced_rows, 1);
        let cache = report
            .tables
            .iter()
            .find(|t| t.table == "llm_cache")
            .unwrap();
        assert_eq!(cache.rows, 1);
    }
}
