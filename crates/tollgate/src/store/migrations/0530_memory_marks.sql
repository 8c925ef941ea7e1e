-- What a mirror into the knowledge store last saw of its source (issue 32): the learnings
-- ledger's modification time, size and hash, so opening the store re-syncs the mirror only when
-- the ledger changed.
CREATE TABLE memory_marks (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
