//! What only the PostgreSQL backend has to prove: its schema records, refusals and errors.
//! (The repositories' contract is the backend-parameterised suite beside each SQL module.)

use crate::store::testing::{Backend, TestDb};
use crate::store::{Store, StoreUrl};

fn postgres() -> Option<TestDb> {
    TestDb::new(Backend::Postgres)
}

#[test]
fn a_postgres_store_records_the_migrations_by_id_and_reopens_without_reapplying() {
    let Some(db) = postgres() else { return };
    drop(db.open());
    drop(db.open());
    let pg = db.postgres().unwrap();
    let ids = pg.psql("SELECT string_agg(id, ',' ORDER BY id) FROM schema_migrations");
    assert_eq!(
        ids,
        "0001_llm_cache,0100_plans,0200_sessions,0300_plan_apply_journal,0400_session_gate"
    );
}

#[test]
fn concurrent_first_opens_of_a_fresh_postgres_store_all_succeed() {
    let Some(db) = postgres() else { return };
    let failures: Vec<String> = std::thread::scope(|scope| {
        let openers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| match db.url() {
                    StoreUrl::Postgres(url) => {
                        Store::open_postgres(&url).err().map(|e| e.to_string())
                    }
                    StoreUrl::Sqlite(_) => unreachable!(),
                })
            })
            .collect();
        openers
            .into_iter()
            .filter_map(|o| o.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn a_postgres_store_from_a_newer_version_is_refused() {
    let Some(db) = postgres() else { return };
    drop(db.open());
    db.postgres()
        .unwrap()
        .psql("INSERT INTO schema_migrations (id, applied_at) VALUES ('9999_future', 'x')");
    let StoreUrl::Postgres(url) = db.url() else {
        unreachable!()
    };
    let err = Store::open_postgres(&url).unwrap_err();
    assert_eq!(err.code(), "STORE_VERSION_MISMATCH");
    assert!(err.to_string().contains("9999_future"), "{err}");
}

#[test]
fn the_configured_postgres_url_opens_the_shared_database() {
    let Some(db) = postgres() else { return };
    let dir = tempfile::tempdir().unwrap();
    let settings = crate::config::RawStore {
        url: Some(db.url().to_string()),
        from_repository: false,
        ..crate::config::RawStore::default()
    };
    let store = Store::open_configured(dir.path(), &settings).unwrap();
    assert!(store.is_postgres());
    assert_eq!(store.path(), None);
    assert_eq!(store.location(), db.url().to_string());
    // Nothing was created in the workspace.
    assert!(!dir.path().join(".tollgate").exists());
}

#[cfg(feature = "index")]
#[test]
fn the_knowledge_store_on_postgres_is_refused_with_a_clear_error() {
    let Some(db) = postgres() else { return };
    let store = db.open();
    let embedder = crate::workspace::HashedEmbedder;
    let memory = crate::memory::Memory::new(&store, &embedder);
    let err = memory.threads().unwrap_err();
    assert_eq!(err.code(), "STORE_UNAVAILABLE");
    let message = err.to_string();
    assert!(message.contains("knowledge store"), "{message}");
    assert!(message.contains("SQLite"), "{message}");
}

#[test]
fn an_unreachable_server_is_store_unavailable_and_names_the_url() {
    // A loopback port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://tollgate@127.0.0.1:{port}/x?connect_timeout=2");
    let StoreUrl::Postgres(url) = url.parse().unwrap() else {
        unreachable!()
    };
    let err = Store::open_postgres(&url).unwrap_err();
    assert_eq!(err.code(), "STORE_UNAVAILABLE", "{err}");
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn a_server_refusal_is_named_in_the_error_text() {
    let Some(db) = postgres() else { return };
    drop(db.open());
    let text = db.url().to_string().replace("tollgate@", "no_such_role@");
    let StoreUrl::Postgres(url) = text.parse().unwrap() else {
        unreachable!()
    };
    let err = Store::open_postgres(&url).unwrap_err();
    assert_eq!(err.code(), "STORE_UNAVAILABLE");
    assert!(err.to_string().contains("no_such_role"), "{err}");
    assert!(err.to_string().contains("SQLSTATE 28000"), "{err}");
}

#[test]
fn a_connection_the_server_closed_is_opened_again() {
    let Some(db) = postgres() else { return };
    let store = db.open();
    store.snapshot(|tx| tx.cache_stats()).unwrap();
    let pg = db.postgres().unwrap();
    let ended = pg.psql(&format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
         WHERE datname = '{}' AND application_name = 'tollgate'",
        pg.name()
    ));
    assert_eq!(ended, "1", "the store's connection was not found");
    // Both kinds of transaction begin on a new connection, nothing lost or doubled.
    store.snapshot(|tx| tx.cache_stats()).unwrap();
    pg.psql(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = '{}' AND application_name = 'tollgate'",
        pg.name()
    ));
    let entry = crate::store::CachedResponse {
        model: "m".into(),
        response: "r".into(),
        input_tokens: 1,
        output_tokens: 1,
    };
    store.transact(|tx| tx.cache_put("k", &entry)).unwrap();
    assert_eq!(store.snapshot(|tx| tx.cache_stats()).unwrap().entries, 1);
}
