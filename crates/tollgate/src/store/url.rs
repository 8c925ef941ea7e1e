//! Where the store lives, as one URL: `sqlite:PATH` (the embedded default,
//! `.tollgate/tollgate.db` in the workspace) or `postgres://user@host:port/db?…` (a team's
//! shared database).
//!
//! A password never travels in the URL: URLs end up in `ps`, shell history, logs and error
//! messages. PostgreSQL takes it from `PGPASSWORD`, a `PGPASSFILE` or the URL's `passfile=`
//! parameter, so a URL holding one is refused (without quoting it), and `Display`/`Debug` have
//! nothing secret to print.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A parsed store location.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// An SQLite database file; a relative path is relative to the workspace root.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL without a password.
    Postgres(PostgresUrl),
}

/// A `postgres://` (or `postgresql://`) URL, checked to hold no password.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// The URL as given (it holds no password).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a store URL was refused. Never quotes the URL: it might hold a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreUrlError {
    #[error(
        "the store URL must start with `sqlite:` (a file) or `postgres://` (a PostgreSQL database)"
    )]
    Scheme,
    #[error("the store URL `sqlite:` names no file")]
    EmptyPath,
    #[error(
        "the store URL holds a password, which would show in process lists and logs; give it in PGPASSWORD, a PGPASSFILE or the URL's `passfile=` parameter instead"
    )]
    Password,
    #[error("the PostgreSQL store URL is malformed: {0}")]
    Malformed(&'static str),
}

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(text: &str) -> Result<StoreUrl, StoreUrlError> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(StoreUrlError::EmptyPath);
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(path)));
        }
        let Some(rest) = text
            .strip_prefix("postgres://")
            .or_else(|| text.strip_prefix("postgresql://"))
        else {
            return Err(StoreUrlError::Scheme);
        };
        let (authority, query) = match rest.split_once('?') {
            Some((before, query)) => (before, Some(query)),
            None => (rest, None),
        };
        // Up to the last `@` before the query, not the first `/`: a password written with an
        // unescaped `/` in it must still be caught (a false alarm only refuses the URL).
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && userinfo.contains(':')
        {
            return Err(StoreUrlError::Password);
        }
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            let key = pair.split('=').next().unwrap_or_default();
            if key.eq_ignore_ascii_case("password") {
                return Err(StoreUrlError::Password);
            }
        }
        if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(StoreUrlError::Malformed(
                "it contains spaces or control characters",
            ));
        }
        Ok(StoreUrl::Postgres(PostgresUrl(text.to_string())))
    }
}

impl StoreUrl {
    /// The workspace's default store, `sqlite:.tollgate/tollgate.db`.
    pub fn default_sqlite() -> StoreUrl {
        StoreUrl::Sqlite(PathBuf::from(super::DEFAULT_STORE_PATH))
    }

    /// Whether this is the workspace's default SQLite file.
    pub fn is_default(&self) -> bool {
        matches!(self, StoreUrl::Sqlite(path) if path == Path::new(super::DEFAULT_STORE_PATH))
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            StoreUrl::Postgres(url) => f.write_str(&url.0),
        }
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({self})")
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_postgres_urls_parse() {
        assert_eq!(
            "sqlite:.tollgate/tollgate.db".parse::<StoreUrl>().unwrap(),
            StoreUrl::default_sqlite()
        );
        assert_eq!(
            "sqlite:///var/lib/t.db".parse::<StoreUrl>().unwrap(),
            StoreUrl::Sqlite(PathBuf::from("/var/lib/t.db"))
        );
        let pg: StoreUrl = "postgres://tollgate@db.internal:5433/reviews?sslmode=require"
            .parse()
            .unwrap();
        assert!(matches!(pg, StoreUrl::Postgres(_)));
        assert_eq!(
            pg.to_string(),
            "postgres://tollgate@db.internal:5433/reviews?sslmode=require"
        );
        assert!(
            "postgresql://h/db?passfile=/run/pgpass"
                .parse::<StoreUrl>()
                .is_ok()
        );
    }

    #[test]
    fn a_password_in_the_url_is_refused_without_quoting_it() {
        for url in [
            "postgres://tollgate:hunter2secret@db/reviews",
            "postgres://db/reviews?sslmode=disable&password=hunter2secret",
            "postgresql://u:hunter2secret@db",
            "postgres://u:hun/ter2secret@db/reviews",
        ] {
            let err = url.parse::<StoreUrl>().unwrap_err();
            assert_eq!(err, StoreUrlError::Password, "{url}");
            assert!(!err.to_string().contains("hunter2"), "{err}");
            assert!(!format!("{err:?}").contains("hunter2"), "{err:?}");
        }
        // An `@` in the path or query is not a password.
        assert!(
            "postgres://db/reviews?application_name=a@b"
                .parse::<StoreUrl>()
                .is_ok()
        );
    }

    #[test]
    fn other_schemes_and_empty_paths_are_refused() {
        assert_eq!(
            "mysql://db".parse::<StoreUrl>().unwrap_err(),
            StoreUrlError::Scheme
        );
        assert_eq!(
            ".tollgate/tollgate.db".parse::<StoreUrl>().unwrap_err(),
            StoreUrlError::Scheme
        );
        assert_eq!(
            "sqlite:".parse::<StoreUrl>().unwrap_err(),
            StoreUrlError::EmptyPath
        );
    }
}
