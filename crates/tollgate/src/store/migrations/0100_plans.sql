-- Plans and everything that happens to them. A plan's content lives only in `plan_versions`
-- (append-only full JSON snapshots); `plans` is the index row pointing at the current version.
-- Deletion is soft (`deleted_at`), so nothing is ever lost by a mistaken call.
CREATE TABLE plans (
    id TEXT PRIMARY KEY,
    name TEXT,
    goal TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    current_version INTEGER NOT NULL,
    step_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
);
-- A name identifies one live plan; a deleted plan frees its name.
CREATE UNIQUE INDEX plans_live_name ON plans (name) WHERE deleted_at IS NULL AND name IS NOT NULL;

CREATE TABLE plan_versions (
    plan_id TEXT NOT NULL REFERENCES plans (id),
    version INTEGER NOT NULL,
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
    plan_version INTEGER NOT NULL,
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

-- Execution state per step, keyed by its step number (stable: plans never renumber a step).
-- A step without a row is pending.
CREATE TABLE plan_step_states (
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number INTEGER NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    notes TEXT NOT NULL DEFAULT '',
    files_changed TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    started_at TEXT,
    finished_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (plan_id, step_number)
);

-- Who did what, when and why: every lifecycle change (steps, approvals, status, deletion).
CREATE TABLE plan_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number INTEGER,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX plan_events_by_plan ON plan_events (plan_id, seq);

-- Files written by `execute_plan` with `apply_changes`: one batch per step application, one row
-- per file operation with what it takes to undo it (the backup of the previous content).
CREATE TABLE plan_applied_changes (
    batch_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number INTEGER NOT NULL,
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
