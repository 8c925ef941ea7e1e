-- A deleted entry's words leave the full-text index at once (FTS5 otherwise keeps them in old
-- segments until a merge), so they cannot be read back from the file. The pages SQLite frees are
-- zeroed by `PRAGMA secure_delete`, set on every connection.
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
