-- Reactive review sessions, their steps and findings (the SQLite script's twin). Times are Unix
-- milliseconds. Findings keep the order they were found in `seq` (SQLite uses its rowid).
CREATE TABLE review_sessions (
    id TEXT PRIMARY KEY,
    commit_hash TEXT NOT NULL,
    base_ref TEXT NOT NULL,
    base_sha TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    title TEXT,
    author TEXT,
    additions BIGINT,
    deletions BIGINT,
    changed_files TEXT NOT NULL,
    max_workers BIGINT NOT NULL,
    max_attempts BIGINT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    warnings TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    last_activity_at BIGINT NOT NULL,
    active_ms BIGINT NOT NULL DEFAULT 0,
    owner_token TEXT,
    owner_pid BIGINT,
    owner_boot TEXT,
    heartbeat_at BIGINT
);
CREATE INDEX review_sessions_state ON review_sessions (state);

CREATE TABLE review_session_steps (
    session_id TEXT NOT NULL REFERENCES review_sessions (id) ON DELETE CASCADE,
    idx BIGINT NOT NULL,
    kind TEXT NOT NULL,
    files TEXT NOT NULL,
    changed_lines BIGINT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    next_attempt_at BIGINT NOT NULL DEFAULT 0,
    worker BIGINT,
    started_at BIGINT,
    finished_at BIGINT,
    duration_ms DOUBLE PRECISION,
    findings_reported BIGINT,
    findings_new BIGINT,
    llm_passes BIGINT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE PRECISION,
    cache_hits BIGINT,
    PRIMARY KEY (session_id, idx)
);

CREATE TABLE review_session_findings (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    session_id TEXT NOT NULL REFERENCES review_sessions (id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL,
    step_idx BIGINT NOT NULL,
    severity TEXT NOT NULL,
    finding TEXT NOT NULL,
    PRIMARY KEY (session_id, fingerprint)
);
CREATE INDEX review_session_findings_order ON review_session_findings (session_id, seq);
