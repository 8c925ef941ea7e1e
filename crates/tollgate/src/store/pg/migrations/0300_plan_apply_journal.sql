-- The intent journal of `execute_plan`'s step runs that write files (the SQLite script's twin).
CREATE TABLE plan_apply_journal (
    batch_id TEXT PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number BIGINT NOT NULL,
    state TEXT NOT NULL,
    temp_files TEXT NOT NULL DEFAULT '[]',
    owner_pid BIGINT NOT NULL,
    reason TEXT,
    opened_at TEXT NOT NULL,
    closed_at TEXT
);
CREATE INDEX plan_apply_journal_open ON plan_apply_journal (state) WHERE state = 'open';
