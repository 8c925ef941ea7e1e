//! Reading a model's answer as JSON and checking it against the schema.

use serde_json::Value;

use super::LlmError;

/// A compiled schema.
pub(super) struct Validator {
    validator: jsonschema::Validator,
}

impl Validator {
    pub(super) fn new(name: &str, schema: &Value) -> Result<Validator, LlmError> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(LlmError::InvalidSchema {
                name: name.to_string(),
                message: "the root of the schema must be `\"type\": \"object\"`".to_string(),
            });
        }
        let validator =
            jsonschema::validator_for(schema).map_err(|err| LlmError::InvalidSchema {
                name: name.to_string(),
                message: err.to_string(),
            })?;
        Ok(Validator { validator })
    }

    /// The answer as a value valid for the schema, or why it is not.
    pub(super) fn parse(&self, text: &str) -> Result<Value, String> {
        let value = extract_json(text)?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(5)
            .map(|err| {
                let path = err.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_string()
                } else {
                    path
                };
                format!("at {path}: {err}")
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(format!("schema violations: {}", errors.join("; ")))
        }
    }
}

/// The JSON object in a model's text: the whole text, else inside a Markdown code fence, else
/// from the first `{` to the last `}` (models like to add a sentence around it).
pub(super) fn extract_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the answer is empty".to_string());
    }
    let first_error = match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => return Ok(value),
        Err(err) => err.to_string(),
    };
    if let Some(start) = trimmed.find("```") {
        let after = &trimmed[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        if let Some(end) = after[body_start..].find("```")
            && let Ok(value) = serde_json::from_str(after[body_start..body_start + end].trim())
        {
            return Ok(value);
        }
    }
    if let (Some(open), Some(close)) = (trimmed.find('{'), trimmed.rfind('}'))
        && open < close
        && let Ok(value) = serde_json::from_str(&trimmed[open..=close])
    {
        return Ok(value);
    }
    Err(format!("not JSON ({first_error})"))
}

/// The follow-up message asking for a corrected answer.
pub(super) fn repair_instruction(reason: &str) -> String {
    let reason: String = reason.chars().take(2000).collect();
    format!(
        "Your previous answer could not be used: {reason}. Answer again with only the corrected \
         JSON object that matches the schema, with no other text."
    )
}

/// What the cache keeps: the model's text when it was exactly the JSON, else the value
/// re-serialised (so a hit never needs the extraction heuristics again).
pub(super) fn canonical_text(value: &Value, text: &str) -> String {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(parsed) if &parsed == value => text.trim().to_string(),
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_json_in_fences_and_prose_and_checks_the_schema() {
        let schema =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        let v = Validator::new("t", &schema).unwrap();
        assert_eq!(v.parse("{\"n\": 1}").unwrap(), json!({"n": 1}));
        assert_eq!(
            v.parse("Here:\n```json\n{\"n\": 2}\n```\n").unwrap(),
            json!({"n": 2})
        );
        assert_eq!(
            v.parse("Sure! {\"n\": 3} Hope it helps.").unwrap(),
            json!({"n": 3})
        );
        assert!(v.parse("{\"n\": \"x\"}").unwrap_err().contains("/n"));
        assert!(v.parse("{\"m\": 1}").unwrap_err().contains("schema"));
        assert!(v.parse("not json at all").unwrap_err().contains("not JSON"));
        assert!(v.parse("").is_err());
        assert!(Validator::new("t", &json!({"type": "array"})).is_err());
    }
}
