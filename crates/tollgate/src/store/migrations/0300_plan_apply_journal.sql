-- The intent journal of `execute_plan`'s step runs that write files: a row is opened in the
-- transaction that starts the step, and closed in the transaction that completes or fails it.
-- A row left `open` belongs to a process that died mid-run (its lock file is free): the next plan
-- command rolls its batch back from `plan_applied_changes`, removes `temp_files` and frees the
-- step.
CREATE TABLE plan_apply_journal (
    batch_id TEXT PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES plans (id),
    step_number INTEGER NOT NULL,
    -- open | completed | failed | rolled_back
    state TEXT NOT NULL,
    -- Workspace-relative temporary files the writes may leave (JSON list).
    temp_files TEXT NOT NULL DEFAULT '[]',
    owner_pid INTEGER NOT NULL,
    reason TEXT,
    opened_at TEXT NOT NULL,
    closed_at TEXT
);
CREATE INDEX plan_apply_journal_open ON plan_apply_journal (state) WHERE state = 'open';
