-- Reactive review sessions: one row per session, its steps, and its findings (deduplicated by
-- fingerprint across steps). Times are Unix milliseconds. The owner_* columns are the lease of the
-- process running the session: a heartbeat older than the lease time means that process died.
CREATE TABLE review_sessions (
    id TEXT PRIMARY KEY,
    commit_hash TEXT NOT NULL,
    base_ref TEXT NOT NULL,
    base_sha TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    title TEXT,
    author TEXT,
    additions INTEGER,
    deletions INTEGER,
    changed_files TEXT NOT NULL,
    max_workers INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    warnings TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    last_activity_at INTEGER NOT NULL,
    active_ms INTEGER NOT NULL DEFAULT 0,
    owner_token TEXT,
    owner_pid INTEGER,
    owner_boot TEXT,
    heartbeat_at INTEGER
);
CREATE INDEX review_sessions_state ON review_sessions (state);

CREATE TABLE review_session_steps (
    session_id TEXT NOT NULL REFERENCES review_sessions (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    files TEXT NOT NULL,
    changed_lines INTEGER NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    worker INTEGER,
    started_at INTEGER,
    finished_at INTEGER,
    duration_ms REAL,
    findings_reported INTEGER,
    findings_new INTEGER,
    llm_passes INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,
    cache_hits INTEGER,
    PRIMARY KEY (session_id, idx)
);

CREATE TABLE review_session_findings (
    session_id TEXT NOT NULL REFERENCES review_sessions (id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL,
    step_idx INTEGER NOT NULL,
    severity TEXT NOT NULL,
    finding TEXT NOT NULL,
    PRIMARY KEY (session_id, fingerprint)
);
