//! Persistence: an embedded SQLite database (`.tollgate/tollgate.db` in the workspace, the
//! default) or a team's shared PostgreSQL database (`postgres://…`, module `pg`), behind the
//! same repositories ([`Store::transact`], [`Store::snapshot`]).
//!
//! One SQLite file holds everything that must outlive a process: the LLM response cache, plans with their
//! versions, approvals and step states, review sessions and their findings, the knowledge store.
//! Each concern keeps its SQL in its own submodule, as functions on a connection; this module owns
//! opening, pragmas, migrations and transactions. One way to persist: a caller runs those
//! functions in [`Store::write`] (functions that change rows take a `&Transaction`) or
//! [`Store::read`] (which hands out only a `&Connection`, so no write can land in a snapshot
//! that is rolled back), one transaction per operation, several functions in one when they must
//! change together.
//!
//! Concurrency: WAL mode lets readers run beside one writer, across processes (the MCP server and
//! the CLI at once); writers take the write lock up front (`BEGIN IMMEDIATE`) and wait for it up to
//! a busy timeout instead of failing on first contention. Every change is one transaction, so a
//! process killed mid-write leaves the previous state, never half of the new one.

pub(crate) mod apply_journal;
mod copy;
pub mod llm_cache;
#[cfg(feature = "index")]
pub(crate) mod memory;
mod migrate;
mod pg;
pub(crate) mod plans;
#[cfg(feature = "index")]
mod quota;
mod repo;
pub(crate) mod sessions;
#[cfg(test)]
pub(crate) mod testing;
mod url;

use crate::ErrorCode;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::workspace::Workspace;

pub use copy::{CopyReport, TableCopy};
pub use llm_cache::{CachedResponse, LlmCacheStats};
#[cfg(feature = "index")]
pub use quota::MemoryQuota;
pub use repo::{
    CacheReads, CacheWrites, JournalReads, JournalWrites, PlanReads, PlanWrites, ReadTx,
    SessionReads, SessionWrites, WriteTx,
};
pub use url::{PostgresUrl, StoreUrl, StoreUrlError};

/// Where the store lives inside a workspace, unless configured otherwise.
pub const DEFAULT_STORE_PATH: &str = ".tollgate/tollgate.db";

/// How long a writer waits for another process's write transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("Cannot open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("Cannot create the store's directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Store migration `{id}` failed: {source}")]
    Migration {
        id: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "The store at {location} was written by a newer Tollgate (it has migration `{id}`, unknown to this version); upgrade Tollgate or use another store"
    )]
    NewerSchema { location: String, id: String },
    #[error("Cannot lock {path}: {source}")]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Cannot keep the store in this workspace: {0}")]
    Location(#[source] crate::workspace::PathError),
    #[error("Store error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("Store error (PostgreSQL): {}", pg::describe(.0))]
    Postgres(#[from] postgres::Error),
    #[error("Cannot connect to the store {url}: {}", pg::describe(.source))]
    PostgresConnect {
        url: StoreUrl,
        #[source]
        source: postgres::Error,
    },
    #[error("Store migration `{id}` failed on PostgreSQL: {}", pg::describe(.source))]
    PostgresMigration {
        id: &'static str,
        #[source]
        source: postgres::Error,
    },
    #[error("The PostgreSQL store URL is not understood: {reason}")]
    PostgresConfig { reason: String },
    #[error("Cannot read the PostgreSQL password file {path}: {reason}")]
    Passfile { path: PathBuf, reason: String },
    /// An operation this build keeps on SQLite only.
    #[error(
        "{what} needs an SQLite store in this build of Tollgate, and the configured store {location} is PostgreSQL; keep it on an sqlite: store (the workspace's default when no --store, TOLLGATE_STORE_URL or [store] url is set)"
    )]
    NeedsSqlite {
        what: &'static str,
        location: String,
    },
    #[error("Stored data is invalid ({what}): {reason}")]
    Corrupt { what: String, reason: String },
    /// A uniqueness rule refused the change (a live plan's name).
    #[error("Refused by the store: {0}")]
    Conflict(String),
    /// A write would take the knowledge store (or a thread) past its quota.
    #[error(
        "{scope} would keep {used} bytes, over its quota of {quota} bytes; delete entries, or raise `[store] {setting}`"
    )]
    Full {
        scope: String,
        used: u64,
        quota: u64,
        setting: &'static str,
    },
    #[error("Invalid store URL: {0}")]
    Url(#[from] StoreUrlError),
    #[error(
        "The store URL in tollgate.toml is refused: {reason}; the operator sets another store with TOLLGATE_STORE_URL or --store"
    )]
    RepositoryUrl { reason: &'static str },
}

impl StoreError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::Open { .. }
            | StoreError::CreateDir { .. }
            | StoreError::Lock { .. }
            | StoreError::Location(_)
            | StoreError::PostgresConnect { .. }
            | StoreError::Passfile { .. }
            | StoreError::NeedsSqlite { .. } => ErrorCode::StoreUnavailable,
            StoreError::NewerSchema { .. } => ErrorCode::StoreVersionMismatch,
            StoreError::Url(_)
            | StoreError::RepositoryUrl { .. }
            | StoreError::PostgresConfig { .. } => ErrorCode::InvalidInput,
            StoreError::Full { .. } => ErrorCode::StoreFull,
            StoreError::Migration { .. }
            | StoreError::PostgresMigration { .. }
            | StoreError::Postgres(_)
            | StoreError::Sqlite(_)
            | StoreError::Corrupt { .. }
            | StoreError::Conflict(_) => ErrorCode::StoreError,
        }
    }
}

/// The openers' lock, `<store>-open.lock` beside the store file, held while a connection is
/// set up; released on drop.
struct OpenLock {
    #[cfg(unix)]
    _flock: nix::fcntl::Flock<std::fs::File>,
}

impl OpenLock {
    const SUFFIX: &'static str = "-open.lock";

    fn acquire(store: &Path) -> Result<OpenLock, StoreError> {
        let mut name = store.as_os_str().to_os_string();
        name.push(OpenLock::SUFFIX);
        let path = PathBuf::from(name);
        let failed = |source| StoreError::Lock {
            path: path.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(failed)?;
        #[cfg(unix)]
        {
            use nix::fcntl::{Flock, FlockArg};
            Flock::lock(file, FlockArg::LockExclusive)
                .map(|flock| OpenLock { _flock: flock })
                .map_err(|(_, errno)| failed(std::io::Error::from(errno)))
        }
        #[cfg(not(unix))]
        {
            drop(file);
            Ok(OpenLock {})
        }
    }
}

/// An open store. Cheap to share behind an `Arc`: calls serialise on one connection per
/// store, which is what SQLite allows for writers anyway; other processes open their own.
#[derive(Debug)]
pub struct Store {
    backend: Backend,
    #[cfg(feature = "index")]
    memory_quota: MemoryQuota,
}

#[derive(Debug)]
enum Backend {
    Sqlite {
        conn: Mutex<Connection>,
        path: Option<PathBuf>,
    },
    /// Boxed: the driver's configuration and client are large beside SQLite's connection.
    Postgres(Box<pg::PgStore>),
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        // Opening a fresh file switches it to WAL and migrates it, and two connections doing
        // that at once can deadlock in SQLite ("database is locked", which no busy timeout
        // waits out): openers take turns, across processes.
        let _opening = OpenLock::acquire(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // WAL: readers never block on the writer; NORMAL sync is durable across process crashes
        // (only a power loss may drop the last transactions, never corrupt the file).
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), mode, "the store could not switch to WAL mode");
        }
        // secure_delete: what a delete frees is zeroed, so a deleted entry's text cannot be
        // read back from the file (the memory store's delete promises it is gone).
        conn.execute_batch(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;",
        )
        .map_err(open_err)?;
        let mut conn = conn;
        migrate::run(&mut conn, path)?;
        Ok(Store {
            backend: Backend::Sqlite {
                conn: Mutex::new(conn),
                path: Some(path.to_path_buf()),
            },
            #[cfg(feature = "index")]
            memory_quota: MemoryQuota::default(),
        })
    }

    /// Opens the store of `workspace` at [`DEFAULT_STORE_PATH`]. A `.tollgate` that is a
    /// symbolic link is refused: a repository could commit one to move the store anywhere.
    pub fn open_in_workspace(workspace: &Path) -> Result<Store, StoreError> {
        let root = Workspace::new(workspace).map_err(|source| StoreError::CreateDir {
            path: workspace.to_path_buf(),
            source,
        })?;
        let dir = root.create_state_dir("").map_err(StoreError::Location)?;
        let file = Path::new(DEFAULT_STORE_PATH)
            .file_name()
            .unwrap_or_default();
        let path = dir.join(file);
        // SQLite writes beside the database too.
        for suffix in ["", "-wal", "-shm", "-journal", OpenLock::SUFFIX] {
            let mut name = file.to_os_string();
            name.push(suffix);
            if (dir.join(&name).symlink_metadata()).is_ok_and(|meta| meta.file_type().is_symlink())
            {
                return Err(StoreError::Location(
                    crate::workspace::PathError::NotAllowed {
                        path: format!("{DEFAULT_STORE_PATH}{suffix}"),
                        reason: "it is a symbolic link; Tollgate does not write through links",
                    },
                ));
            }
        }
        Store::open(&path)
    }

    /// The one way a front end opens the store of `workspace`: the URL the configuration
    /// names (`[store] url` < `TOLLGATE_STORE_URL` < `--store`, already stacked in `settings`),
    /// else the workspace's SQLite file.
    pub fn open_configured(
        workspace: &Path,
        settings: &crate::config::RawStore,
    ) -> Result<Store, StoreError> {
        let store = match settings.url.as_deref().map(str::trim) {
            None | Some("") => Store::open_in_workspace(workspace)?,
            Some(text) => Store::open_url(workspace, &text.parse()?, settings.from_repository)?,
        };
        #[cfg(feature = "index")]
        let store = store.with_memory_quota(MemoryQuota::from_mb(
            settings.memory_quota_mb,
            settings.thread_quota_mb,
        ));
        Ok(store)
    }

    /// The same store with the knowledge store's quota set to `quota`.
    #[cfg(feature = "index")]
    pub fn with_memory_quota(mut self, quota: MemoryQuota) -> Store {
        self.memory_quota = quota;
        self
    }

    #[cfg(feature = "index")]
    pub(crate) fn memory_quota(&self) -> &MemoryQuota {
        &self.memory_quota
    }

    /// Opens the store `url` names for `workspace` (a relative SQLite path is relative to it).
    /// A URL from the repository's own `tollgate.toml` (`from_repository`) may only name an
    /// SQLite file inside the workspace: a repository must not move the store out of it, nor
    /// send the operator's database credentials to a server of its choosing.
    pub fn open_url(
        workspace: &Path,
        url: &StoreUrl,
        from_repository: bool,
    ) -> Result<Store, StoreError> {
        match url {
            _ if url.is_default() => Store::open_in_workspace(workspace),
            StoreUrl::Sqlite(path) if from_repository => {
                let relative = path.to_str().filter(|_| path.is_relative()).ok_or(
                    StoreError::RepositoryUrl {
                        reason: "an sqlite: path there must be relative to the workspace",
                    },
                )?;
                let outside = |_| StoreError::RepositoryUrl {
                    reason: "an sqlite: path there must stay inside the workspace",
                };
                let repo_path = crate::workspace::RepoPath::new(relative).map_err(outside)?;
                let root = Workspace::new(workspace).map_err(|source| StoreError::CreateDir {
                    path: workspace.to_path_buf(),
                    source,
                })?;
                let located = root.writable(&repo_path).map_err(outside)?;
                Store::open(&located)
            }
            StoreUrl::Sqlite(path) => Store::open(&workspace.join(path)),
            StoreUrl::Postgres(_) if from_repository => Err(StoreError::RepositoryUrl {
                reason: "a repository's file may not name a database server",
            }),
            StoreUrl::Postgres(url) => Store::open_postgres(url),
        }
    }

    /// A private in-memory store (tests, one-off runs that must not touch the disk).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let mut conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: PathBuf::from(":memory:"),
            source,
        })?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        migrate::run(&mut conn, Path::new(":memory:"))?;
        Ok(Store {
            backend: Backend::Sqlite {
                conn: Mutex::new(conn),
                path: None,
            },
            #[cfg(feature = "index")]
            memory_quota: MemoryQuota::default(),
        })
    }

    /// Connects to the PostgreSQL database `url` names and brings its schema up to date.
    pub fn open_postgres(url: &PostgresUrl) -> Result<Store, StoreError> {
        Ok(Store {
            backend: Backend::Postgres(Box::new(pg::PgStore::open(url)?)),
            #[cfg(feature = "index")]
            memory_quota: MemoryQuota::default(),
        })
    }

    /// The database file, `None` for an in-memory or PostgreSQL store.
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Sqlite { path, .. } => path.as_deref(),
            Backend::Postgres(_) => None,
        }
    }

    /// Where the store is, for messages: its file, `:memory:` or its URL (which holds no
    /// password).
    pub fn location(&self) -> String {
        match &self.backend {
            Backend::Sqlite {
                path: Some(path), ..
            } => path.display().to_string(),
            Backend::Sqlite { path: None, .. } => ":memory:".to_string(),
            Backend::Postgres(pg) => pg.url().as_str().to_string(),
        }
    }

    /// Whether this is a PostgreSQL store.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// The SQLite connection; operations kept on SQLite only (the knowledge store) are refused
    /// on PostgreSQL with [`StoreError::NeedsSqlite`].
    fn sqlite(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        match &self.backend {
            // A panic in another caller leaves no open transaction behind (rusqlite rolls
            // back on drop), so the connection is still sound.
            Backend::Sqlite { conn, .. } => {
                Ok(conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
            }
            Backend::Postgres(pg) => Err(StoreError::NeedsSqlite {
                what: "The knowledge store (memory and learnings)",
                location: pg.url().as_str().to_string(),
            }),
        }
    }

    /// Runs `f` in one SQLite write transaction (`BEGIN IMMEDIATE`): committed when `f` returns
    /// `Ok`, rolled back otherwise, so nothing is ever half written. SQLite only (the knowledge
    /// store's SQL): a PostgreSQL store refuses with [`StoreError::NeedsSqlite`].
    pub fn write<T, E>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut conn = self.sqlite()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| E::from(StoreError::from(err)))?;
        let value = f(&tx)?;
        tx.commit().map_err(|err| E::from(StoreError::from(err)))?;
        Ok(value)
    }

    /// Runs `f` in one read transaction: a consistent snapshot even while others write. `f` gets
    /// the connection, not the transaction, so a function that writes (they take a
    /// `&Transaction`) cannot be called here, where its change would be rolled back. SQLite
    /// only, like [`Store::write`].
    pub fn read<T, E>(&self, f: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut conn = self.sqlite()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|err| E::from(StoreError::from(err)))?;
        let value = f(&tx)?;
        // A read transaction has nothing to commit; ending it releases the snapshot.
        tx.rollback()
            .map_err(|err| E::from(StoreError::from(err)))?;
        Ok(value)
    }

    /// Runs `f` in one write transaction with every repository: committed when `f` returns
    /// `Ok`, rolled back otherwise, so nothing is ever half written. Writers serialise (SQLite:
    /// `BEGIN IMMEDIATE`; PostgreSQL: one advisory lock), so a read-decide-write in `f` never
    /// loses an update.
    pub fn transact<T, E>(&self, f: impl FnOnce(&dyn WriteTx) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match &self.backend {
            Backend::Sqlite { .. } => self.write(|tx| f(&repo::SqliteTx(tx))),
            Backend::Postgres(pg) => pg.transact(f),
        }
    }

    /// Runs `f` on a consistent snapshot with the repositories' reads only.
    pub fn snapshot<T, E>(&self, f: impl FnOnce(&dyn ReadTx) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match &self.backend {
            Backend::Sqlite { .. } => self.read(|conn| f(&repo::SqliteTx(conn))),
            Backend::Postgres(pg) => pg.snapshot(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many connections opening one fresh store at once all succeed.
    #[test]
    fn concurrent_first_opens_of_a_fresh_store_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..15 {
            let path = dir.path().join(format!("fresh{round}.db"));
            let failures: Vec<String> = std::thread::scope(|scope| {
                let openers: Vec<_> = (0..16)
                    .map(|_| scope.spawn(|| Store::open(&path).err().map(|err| err.to_string())))
                    .collect();
                openers
                    .into_iter()
                    .filter_map(|opener| opener.join().unwrap())
                    .collect()
            });
            assert!(failures.is_empty(), "round {round}: {failures:?}");
        }
    }

    #[test]
    fn opens_creates_and_reopens_with_wal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/dir/tollgate.db");
        let store = Store::open(&path).unwrap();
        assert_eq!(store.path(), Some(path.as_path()));
        let mode: String = store
            .read(|tx| {
                tx.query_row("PRAGMA journal_mode", [], |row| row.get(0))
                    .map_err(StoreError::from)
            })
            .unwrap();
        assert_eq!(mode, "wal");
        drop(store);
        // Reopening applies nothing twice.
        Store::open(&path).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let store = Store::open_in_memory().unwrap();
        let result: Result<(), StoreError> = store.write(|tx| {
            tx.execute(
                "INSERT INTO llm_cache (key, model, response, created_at) VALUES ('k', 'm', 'r', 'now')",
                [],
            )?;
            Err(StoreError::Corrupt {
                what: "test".into(),
                reason: "abort".into(),
            })
        });
        assert!(result.is_err());
        let count: i64 = store
            .read(|tx| {
                tx.query_row("SELECT count(*) FROM llm_cache", [], |row| row.get(0))
                    .map_err(StoreError::from)
            })
            .unwrap();
        assert_eq!(count, 0);
    }

    /// Eight writers, each with its own handle (connection), append versions to one plan with
    /// a read-decide-write; every version is recorded once, none lost or doubled.
    fn eight_writers_record_every_version_once(backend: testing::Backend) {
        use crate::store::plans::{NewPlan, PlanFacts, VersionMeta};
        const WRITERS: u32 = 8;
        const EACH: u32 = 10;
        let Some(db) = testing::TestDb::new(backend) else {
            return;
        };
        let facts = PlanFacts {
            goal: "g",
            step_count: 1,
        };
        fn meta(summary: &str) -> VersionMeta<'_> {
            VersionMeta {
                change_type: "refined",
                summary,
                author: "writer",
            }
        }
        db.open()
            .transact(|tx| {
                tx.insert_plan(&NewPlan {
                    id: "p",
                    name: Some("shared"),
                    status: "draft",
                    tags: &[],
                    facts,
                    plan_json: "{}",
                    meta: meta("created"),
                })
            })
            .unwrap();
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let db = &db;
                scope.spawn(move || {
                    let store = db.open();
                    for i in 0..EACH {
                        let summary = format!("w{writer}-{i}");
                        store
                            .transact(|tx| {
                                let current = tx.plan_by_id("p", false)?.unwrap().current_version;
                                let json = format!("{{\"writer\":{writer},\"i\":{i}}}");
                                let version =
                                    tx.append_version("p", facts, &json, meta(&summary))?;
                                assert_eq!(version, current + 1, "another writer slipped in");
                                Ok::<_, StoreError>(())
                            })
                            .unwrap();
                    }
                });
            }
        });
        let store = db.open();
        let (plan, versions) = store
            .snapshot(|tx| {
                Ok::<_, StoreError>((
                    tx.plan_by_id("p", false)?.unwrap(),
                    tx.versions("p", 1000, true)?,
                ))
            })
            .unwrap();
        let total = WRITERS * EACH + 1;
        assert_eq!(plan.current_version, total);
        let mut numbers: Vec<u32> = versions.iter().map(|v| v.version).collect();
        numbers.sort_unstable();
        assert_eq!(numbers, (1..=total).collect::<Vec<_>>());
        let mut summaries: Vec<&str> = versions.iter().map(|v| v.summary.as_str()).collect();
        summaries.sort_unstable();
        let mut expected: Vec<String> = (0..WRITERS)
            .flat_map(|w| (0..EACH).map(move |i| format!("w{w}-{i}")))
            .chain(["created".to_string()])
            .collect();
        expected.sort_unstable();
        assert_eq!(summaries, expected, "every save recorded exactly once");
    }

    #[test]
    fn eight_writers_record_every_version_once_sqlite() {
        eight_writers_record_every_version_once(testing::Backend::Sqlite);
    }

    #[test]
    fn eight_writers_record_every_version_once_postgres() {
        eight_writers_record_every_version_once(testing::Backend::Postgres);
    }

    fn settings(url: &str, from_repository: bool) -> crate::config::RawStore {
        crate::config::RawStore {
            url: Some(url.to_string()),
            from_repository,
            ..crate::config::RawStore::default()
        }
    }

    #[test]
    fn the_configured_store_is_the_one_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let default = Store::open_configured(root, &crate::config::RawStore::default()).unwrap();
        assert_eq!(
            default.path().unwrap().canonicalize().unwrap(),
            root.join(DEFAULT_STORE_PATH).canonicalize().unwrap()
        );
        // The operator's URL (environment or flag) may name any file.
        let elsewhere = tempfile::tempdir().unwrap();
        let file = elsewhere.path().join("shared.db");
        let store = Store::open_configured(
            root,
            &settings(&format!("sqlite:{}", file.display()), false),
        )
        .unwrap();
        assert_eq!(store.path(), Some(file.as_path()));
        assert!(file.is_file());
        // A repository's tollgate.toml may name a file inside the workspace only.
        let inside = Store::open_configured(root, &settings("sqlite:state/t.db", true)).unwrap();
        assert!(inside.path().unwrap().ends_with("state/t.db"));
        for url in [
            format!("sqlite:{}", elsewhere.path().join("evil.db").display()),
            "sqlite:../outside.db".to_string(),
            "postgres://someone@attacker.example/db".to_string(),
        ] {
            let err = Store::open_configured(root, &settings(&url, true)).unwrap_err();
            assert_eq!(err.code(), "INVALID_INPUT", "{url}: {err}");
        }
        assert!(!elsewhere.path().join("evil.db").exists());
        assert!(!root.parent().unwrap().join("outside.db").exists());
    }

    #[test]
    fn a_bad_store_url_is_a_clear_error_without_the_password() {
        let dir = tempfile::tempdir().unwrap();
        let err =
            Store::open_configured(dir.path(), &settings("postgres://u:s3cretpass@db/x", false))
                .unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains("PGPASSWORD"), "{err}");
        assert!(!err.to_string().contains("s3cretpass"), "{err}");
        let err = Store::open_configured(dir.path(), &settings("redis://x", false)).unwrap_err();
        assert!(err.to_string().contains("sqlite:"), "{err}");
    }

    #[test]
    fn an_unopenable_path_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, "x").unwrap();
        // A directory cannot be created under a regular file.
        let err = Store::open(&file.join("sub/tollgate.db")).unwrap_err();
        assert_eq!(err.code(), "STORE_UNAVAILABLE");
        assert!(err.to_string().contains("plain-file"), "{err}");
        // A file that is not a database.
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, vec![0x42u8; 8192]).unwrap();
        let err = Store::open(&junk).unwrap_err();
        assert!(err.to_string().contains("junk.db"), "{err}");
    }
}
