-- The knowledge store (issue 19): entries agents and people keep beside the code index, with
-- tags, images, embeddings and a full-text index. Times are Unix milliseconds (UTC), so date
-- ranges compare as integers.
CREATE TABLE memory_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('user', 'agent')),
    text TEXT NOT NULL,
    -- A JSON object; filtered with json_extract.
    metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata) AND json_type(metadata) = 'object'),
    content_type TEXT NOT NULL CHECK (content_type IN ('text', 'multimodal')),
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE INDEX memory_entries_thread ON memory_entries (thread_id, created_ms);
CREATE INDEX memory_entries_created ON memory_entries (created_ms);

CREATE TABLE memory_tags (
    entry_id INTEGER NOT NULL REFERENCES memory_entries (id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (entry_id, tag)
) WITHOUT ROWID;
CREATE INDEX memory_tags_tag ON memory_tags (tag, entry_id);

CREATE TABLE memory_images (
    entry_id INTEGER NOT NULL REFERENCES memory_entries (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    mime_type TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (entry_id, position)
);

-- One vector per entry: little-endian f32, L2-normalised, from the embedder named in `model`.
CREATE TABLE memory_embeddings (
    entry_id INTEGER PRIMARY KEY REFERENCES memory_entries (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);

-- External-content FTS5 index over the entries' text, kept in step by the triggers below.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
    text,
    content = 'memory_entries',
    content_rowid = 'id',
    tokenize = 'porter unicode61'
);
CREATE TRIGGER memory_entries_ai AFTER INSERT ON memory_entries BEGIN
    INSERT INTO memory_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER memory_entries_ad AFTER DELETE ON memory_entries BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER memory_entries_au AFTER UPDATE OF text ON memory_entries BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memory_fts (rowid, text) VALUES (new.id, new.text);
END;
