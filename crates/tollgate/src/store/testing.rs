//! The store's tests run against every backend: SQLite always, PostgreSQL when the machine has
//! it (a throwaway cluster, `tollgate_testkit::postgres`; required under CI).
//!
//! [`backend_tests!`](crate::backend_tests) turns `fn name(store) { … }` into a module
//! `name` with one test per backend (`name::sqlite`, `name::postgres`), so one body is the
//! contract of both. Tests that need several handles on one database (concurrent writers,
//! reopening) use [`TestDb`].

use std::path::PathBuf;

use super::{Store, StoreUrl};
use tollgate_testkit::postgres::Database;

/// The backends a test can run against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// A database that test code may open any number of handles on.
#[derive(Debug)]
pub(crate) struct TestDb {
    location: Location,
}

#[derive(Debug)]
enum Location {
    Sqlite {
        _dir: tempfile::TempDir,
        path: PathBuf,
    },
    Postgres(Database),
}

impl TestDb {
    /// A fresh database on `backend`; `None` when PostgreSQL is not available here (skipped).
    pub(crate) fn new(backend: Backend) -> Option<TestDb> {
        let location = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let path = dir.path().join("tollgate.db");
                Location::Sqlite { _dir: dir, path }
            }
            Backend::Postgres => Location::Postgres(tollgate_testkit::postgres::database()?),
        };
        Some(TestDb { location })
    }

    /// The store URL of this database.
    pub(crate) fn url(&self) -> StoreUrl {
        match &self.location {
            Location::Sqlite { path, .. } => StoreUrl::Sqlite(path.clone()),
            Location::Postgres(db) => db.url().parse().expect("test database URL"),
        }
    }

    /// A new handle (its own connection) on this database.
    pub(crate) fn open(&self) -> Store {
        match &self.location {
            Location::Sqlite { path, .. } => Store::open(path).expect("open the SQLite store"),
            Location::Postgres(db) => match db.url().parse().expect("test database URL") {
                StoreUrl::Postgres(url) => {
                    Store::open_postgres(&url).expect("open the PostgreSQL store")
                }
                StoreUrl::Sqlite(_) => unreachable!("a postgres:// URL"),
            },
        }
    }

    /// The PostgreSQL test database, to reach behind the store (`psql`).
    pub(crate) fn postgres(&self) -> Option<&Database> {
        match &self.location {
            Location::Postgres(db) => Some(db),
            Location::Sqlite { .. } => None,
        }
    }
}

/// A store with the database it lives in (dropped after the store).
#[derive(Debug)]
pub(crate) struct TestStore {
    store: Store,
    _db: Option<TestDb>,
}

impl std::ops::Deref for TestStore {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.store
    }
}

/// A fresh store on `backend` (SQLite: in memory); `None` when PostgreSQL is not available.
pub(crate) fn store(backend: Backend) -> Option<TestStore> {
    match backend {
        Backend::Sqlite => Some(TestStore {
            store: Store::open_in_memory().expect("in-memory store"),
            _db: None,
        }),
        Backend::Postgres => {
            let db = TestDb::new(Backend::Postgres)?;
            Some(TestStore {
                store: db.open(),
                _db: Some(db),
            })
        }
    }
}

/// One test per backend from one body: `fn name(store) { … }` (`store` a [`TestStore`], a
/// `Store` by `Deref`) becomes the tests
/// `name::sqlite` and `name::postgres` (the latter skipped where PostgreSQL is not available,
/// failed under CI). The body sees the enclosing module's items.
#[macro_export]
#[doc(hidden)]
macro_rules! backend_tests {
    ($($(#[$meta:meta])* fn $name:ident($store:ident) $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                fn run($store: $crate::store::testing::TestStore) $body

                #[test]
                fn sqlite() {
                    let store = $crate::store::testing::store($crate::store::testing::Backend::Sqlite)
                        .expect("SQLite is always there");
                    run(store);
                }

                #[test]
                fn postgres() {
                    if let Some(store) =
                        $crate::store::testing::store($crate::store::testing::Backend::Postgres)
                    {
                        run(store);
                    }
                }
            }
        )*
    };
}

/// Like [`backend_tests!`](crate::backend_tests) for tests that build their own fixture:
/// `fn name(backend) { … }` runs once per backend with `backend` a [`Backend`]; the body skips
/// itself when its fixture cannot be had (PostgreSQL not available).
#[macro_export]
#[doc(hidden)]
macro_rules! backend_fixture_tests {
    ($($(#[$meta:meta])* fn $name:ident($backend:ident) $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                fn run($backend: $crate::store::testing::Backend) $body

                #[test]
                fn sqlite() {
                    run($crate::store::testing::Backend::Sqlite);
                }

                #[test]
                fn postgres() {
                    run($crate::store::testing::Backend::Postgres);
                }
            }
        )*
    };
}
