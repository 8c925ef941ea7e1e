-- The knowledge store's quota (issue 32): each entry records the bytes it keeps (text, metadata,
-- tags, images, embedding), and `memory_usage` sums them per thread, kept in step by triggers, so
-- a write checks the quota without scanning the entries.
ALTER TABLE memory_entries ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE memory_entries SET stored_bytes =
    length(CAST(text AS BLOB)) + length(CAST(metadata AS BLOB))
    + COALESCE((SELECT SUM(length(CAST(tag AS BLOB))) FROM memory_tags WHERE entry_id = memory_entries.id), 0)
    + COALESCE((SELECT SUM(length(data)) FROM memory_images WHERE entry_id = memory_entries.id), 0)
    + COALESCE((SELECT length(vector) FROM memory_embeddings WHERE entry_id = memory_entries.id), 0);

CREATE TABLE memory_usage (
    thread_id TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO memory_usage (thread_id, bytes)
    SELECT thread_id, SUM(stored_bytes) FROM memory_entries GROUP BY thread_id;

CREATE TRIGGER memory_usage_ai AFTER INSERT ON memory_entries BEGIN
    INSERT INTO memory_usage (thread_id, bytes) VALUES (new.thread_id, new.stored_bytes)
        ON CONFLICT (thread_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER memory_usage_au AFTER UPDATE OF stored_bytes ON memory_entries BEGIN
    UPDATE memory_usage SET bytes = bytes + new.stored_bytes - old.stored_bytes
        WHERE thread_id = new.thread_id;
END;
CREATE TRIGGER memory_usage_ad AFTER DELETE ON memory_entries BEGIN
    UPDATE memory_usage SET bytes = bytes - old.stored_bytes WHERE thread_id = old.thread_id;
    DELETE FROM memory_usage WHERE thread_id = old.thread_id AND bytes <= 0;
END;
