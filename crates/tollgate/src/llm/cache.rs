//! The response cache key: a hash of everything that determines a model's answer.

use sha2::{Digest, Sha256};

use super::JsonRequest;

/// Bumped when the way prompts are sent changes, so old answers stop matching.
const KEY_VERSION: &str = "tollgate-llm-cache-v1";

/// `sha256(version, provider, server, model, schema name, schema, token limit, system, user)`,
/// hex. Each part is length-prefixed so that no two different inputs concatenate alike.
pub(super) fn key(
    provider: &str,
    base_url: &str,
    model: &str,
    request: &JsonRequest<'_>,
    max_output_tokens: u32,
) -> String {
    let schema = serde_json::to_string(request.schema).unwrap_or_default();
    let limit = max_output_tokens.to_string();
    let mut hasher = Sha256::new();
    for part in [
        KEY_VERSION,
        provider,
        base_url,
        model,
        request.schema_name,
        &schema,
        &limit,
        request.system,
        request.user,
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_changes_the_key() {
        let schema = serde_json::json!({"type": "object"});
        let other_schema = serde_json::json!({"type": "object", "required": ["a"]});
        let base = JsonRequest::new("sys", "user", "s", &schema);
        let k = key("openai", "http://x", "m", &base, 100);
        assert_eq!(k, key("openai", "http://x", "m", &base, 100));
        assert_ne!(k, key("anthropic", "http://x", "m", &base, 100));
        assert_ne!(k, key("openai", "http://x", "m2", &base, 100));
        assert_ne!(k, key("openai", "http://x", "m", &base, 101));
        assert_ne!(
            k,
            key(
                "openai",
                "http://x",
                "m",
                &JsonRequest::new("sys", "user2", "s", &schema),
                100
            )
        );
        assert_ne!(
            k,
            key(
                "openai",
                "http://x",
                "m",
                &JsonRequest::new("sys", "user", "s", &other_schema),
                100
            )
        );
        // Moving text between system and user is a different prompt.
        assert_ne!(
            key(
                "openai",
                "",
                "m",
                &JsonRequest::new("ab", "c", "s", &schema),
                1
            ),
            key(
                "openai",
                "",
                "m",
                &JsonRequest::new("a", "bc", "s", &schema),
                1
            )
        );
    }
}
