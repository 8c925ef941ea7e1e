-- Plans and everything that happens to them (the SQLite script's twin). Times are RFC 3339 text,
-- as on SQLite, so both backends sort and return them alike.
CREATE TABLE plans (
    id TEXT PRIMARY KEY,
    name TEXT,
    goal TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    current_version BIGINT NOT NULL,
    step_count BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
);
-- A name identifies one live plan; a deleted plan frees its name.
CREATE UNIQUE INDEX plans_live_name ON plans (name) WHERE deleted_at IS NULL AND name IS NOT NULL;

CREATE TABLE plan_versions (
    plan_id TEXT NOT NULL REFERENCES plans (id),
    version BIGINT NOT NULL,
    plan_json TEXT NOT NULL,
    change_type TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (plan_id, version)
);

CREATE TABLE plan_approvals (
    id TEXT PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    plan_version BIGINT NOT NULL,
    kind TEXT NOT NULL,
    step_numbers TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    requested_by TEXT NOT NULL DEFAULT '',
    requested_at TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    responded_by TEXT,
    responded_at TEXT,
    comment TEXT,
    modifications TEXT
);
CREATE INDEX plan_approvals_by_plan ON plan_approvals (plan_id, requested_at);

CREATE TABLE plan_step_states (
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number BIGINT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    notes TEXT NOT NULL DEFAULT '',
    files_changed TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    started_at TEXT,
    finished_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (plan_id, step_number)
);

CREATE TABLE plan_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number BIGINT,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX plan_events_by_plan ON plan_events (plan_id, seq);

CREATE TABLE plan_applied_changes (
    batch_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number BIGINT NOT NULL,
    operation TEXT NOT NULL,
    path TEXT NOT NULL,
    new_path TEXT,
    backup_path TEXT,
    before_sha256 TEXT,
    after_sha256 TEXT,
    applied_at TEXT NOT NULL,
    undone_at TEXT,
    PRIMARY KEY (batch_id, seq)
);
CREATE INDEX plan_applied_changes_by_plan ON plan_applied_changes (plan_id, applied_at);
