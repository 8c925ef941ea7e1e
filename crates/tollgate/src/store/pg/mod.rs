//! The PostgreSQL backend: a team's shared database behind the same repositories as SQLite.
//!
//! Driver: the synchronous `postgres` crate. The repositories are synchronous, and every caller
//! reaches the store from a plain thread: the CLI, session runners (their own threads) and the
//! MCP server's tools (`spawn_blocking`). The driver runs a private current-thread runtime per
//! connection, so it must never be called on an async worker thread; a store dropped in a
//! runtime's context closes its connection on a thread of its own for the same reason.
//!
//! Transactions keep SQLite's promise. A write transaction takes one transaction-scoped
//! advisory lock first, so writers run one at a time across every process on the database,
//! as SQLite's `BEGIN IMMEDIATE` makes them: a read-decide-write never loses an update, no
//! transaction can fail serialisation (so none is retried: a retry would run the caller's
//! closure, and its side effects, twice), and it runs at READ COMMITTED, whose statements see
//! everything committed before the lock was granted. A read is a REPEATABLE READ, READ ONLY
//! snapshot. Waiting for the lock is bounded like SQLite's busy timeout.
//!
//! One connection per store, opened lazily again after it broke; calls on one store serialise
//! on it (as they do on SQLite's one connection), and other stores or processes have their own.

mod cache;
mod connect;
mod journal;
mod migrate;
mod plans;
mod sessions;
#[cfg(test)]
mod tests;
mod tx;

use std::fmt;
use std::sync::{Mutex, MutexGuard};

use postgres::{Client, IsolationLevel, NoTls};

use super::repo::{ReadTx, WriteTx};
use super::{PostgresUrl, StoreError, StoreUrl};

/// The advisory lock every write transaction holds (any number, unique to Tollgate's writes).
const WRITE_LOCK: i64 = 0x746f_6c6c_7772_6974; // "tollwrit"

/// How long a writer waits for another's write transaction (SQLite's busy timeout).
const LOCK_TIMEOUT: &str = "30s";

/// An open PostgreSQL store.
pub(super) struct PgStore {
    url: PostgresUrl,
    config: postgres::Config,
    client: Mutex<Option<Client>>,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the configuration: it may hold the password.
        f.debug_struct("PgStore").field("url", &self.url).finish()
    }
}

impl PgStore {
    /// Connects to `url` and brings its schema up to date.
    pub(super) fn open(url: &PostgresUrl) -> Result<PgStore, StoreError> {
        let config = connect::config(url)?;
        let store = PgStore {
            url: url.clone(),
            config,
            client: Mutex::new(None),
        };
        {
            let mut client = store.client()?;
            let client = client.as_mut().ok_or_else(|| store.gone())?;
            migrate::run(client, url.as_str())?;
        }
        Ok(store)
    }

    pub(super) fn url(&self) -> &PostgresUrl {
        &self.url
    }

    /// The connection, opened again when there is none or it broke.
    fn client(&self) -> Result<MutexGuard<'_, Option<Client>>, StoreError> {
        // A panic in another caller drops its transaction (rolled back), so the connection is
        // still sound.
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(Client::is_closed) {
            let client =
                self.config
                    .connect(NoTls)
                    .map_err(|source| StoreError::PostgresConnect {
                        url: StoreUrl::Postgres(self.url.clone()),
                        source,
                    })?;
            *guard = Some(client);
        }
        Ok(guard)
    }

    fn gone(&self) -> StoreError {
        StoreError::Corrupt {
            what: "PostgreSQL connection".to_string(),
            reason: "not open right after it was opened".to_string(),
        }
    }

    /// One write transaction, writers one at a time across processes.
    pub(super) fn transact<T, E>(
        &self,
        f: impl FnOnce(&dyn WriteTx) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.run(true, |tx| f(&tx::PgTx::new(tx)))
    }

    /// One consistent read-only snapshot.
    pub(super) fn snapshot<T, E>(&self, f: impl FnOnce(&dyn ReadTx) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.run(false, |tx| f(&tx::PgTx::new(tx)))
    }

    /// The driver's transaction itself, for store-wide work (copying a store): a write
    /// transaction as [`PgStore::transact`] opens it, or a read-only snapshot.
    pub(super) fn raw<T>(
        &self,
        read_only: bool,
        f: impl FnOnce(&mut postgres::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.run(!read_only, f)
    }

    /// Runs `f` in a write transaction (committed when it returns `Ok`) or a read-only
    /// snapshot. A connection the server closed (a restart, an idle timeout, a terminated
    /// backend) shows only when it is next used: then one new connection is opened and the
    /// transaction begun again, before anything of `f` ran.
    fn run<T, E>(
        &self,
        write: bool,
        f: impl FnOnce(&mut postgres::Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let failed = |err: postgres::Error| E::from(StoreError::from(err));
        let mut guard = self.client().map_err(E::from)?;
        let client = guard.as_mut().ok_or_else(|| E::from(self.gone()))?;
        let err = match begin(client, write) {
            Ok(tx) => return finish(tx, write, f),
            Err(err) => err,
        };
        if !client.is_closed() {
            return Err(failed(err));
        }
        tracing::info!(error = %describe(&err), "the PostgreSQL connection was closed; reconnecting");
        *guard = None;
        drop(guard);
        let mut guard = self.client().map_err(E::from)?;
        let client = guard.as_mut().ok_or_else(|| E::from(self.gone()))?;
        let tx = begin(client, write).map_err(failed)?;
        finish(tx, write, f)
    }
}

fn finish<T, E>(
    mut tx: postgres::Transaction<'_>,
    write: bool,
    f: impl FnOnce(&mut postgres::Transaction<'_>) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<StoreError>,
{
    let value = f(&mut tx)?;
    let ended = if write { tx.commit() } else { tx.rollback() };
    ended.map_err(|err| E::from(StoreError::from(err)))?;
    Ok(value)
}

/// What a driver error says: the server's message and SQLSTATE (the driver's own text is only
/// "db error"), or the driver's text and its cause.
pub(super) fn describe(err: &postgres::Error) -> String {
    if let Some(db) = err.as_db_error() {
        return format!("{} (SQLSTATE {})", db.message(), db.code().code());
    }
    match std::error::Error::source(err) {
        Some(cause) => format!("{err}: {cause}"),
        None => err.to_string(),
    }
}

/// A write transaction (READ COMMITTED, holding the write lock) or a read-only snapshot.
fn begin(client: &mut Client, write: bool) -> Result<postgres::Transaction<'_>, postgres::Error> {
    if !write {
        return client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start();
    }
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::ReadCommitted)
        .start()?;
    tx.batch_execute(&format!(
        "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
    ))?;
    Ok(tx)
}

impl Drop for PgStore {
    fn drop(&mut self) {
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // Closing blocks on the driver's runtime, which panics inside another runtime.
        if let Some(client) = client
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let _ = std::thread::Builder::new()
                .name("tollgate-pg-close".into())
                .spawn(move || drop(client));
        }
    }
}
