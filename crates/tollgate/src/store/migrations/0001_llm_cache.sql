-- Model responses keyed by the content hash of what was asked (provider, model, schema, prompt),
-- so a re-run on the same commit costs nothing.
CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    last_hit_at TEXT,
    hits INTEGER NOT NULL DEFAULT 0
);
