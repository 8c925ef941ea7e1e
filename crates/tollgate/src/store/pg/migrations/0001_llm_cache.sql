-- Model responses keyed by the content hash of what was asked (the SQLite script's twin).
CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    last_hit_at TEXT,
    hits BIGINT NOT NULL DEFAULT 0
);
