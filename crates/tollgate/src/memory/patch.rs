//! RFC 7396 JSON Merge Patch, for `metadata_patch`: new keys are added, existing ones replaced,
//! `null` deletes, objects merge recursively, arrays are replaced whole.

use serde_json::{Map, Value};

/// Applies `patch` to `target`.
pub fn merge_patch(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(inner) => {
                let slot = target
                    .entry(key.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                if let Value::Object(existing) = slot {
                    merge_patch(existing, inner);
                }
            }
            other => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn follows_rfc_7396() {
        let mut target = json!({"a": "b", "c": {"d": "e", "f": "g"}, "keep": [1, 2]})
            .as_object()
            .cloned()
            .unwrap();
        let patch = json!({"a": "z", "c": {"f": null}, "new": true, "keep": [3]});
        merge_patch(&mut target, patch.as_object().unwrap());
        assert_eq!(
            Value::Object(target),
            json!({"a": "z", "c": {"d": "e"}, "new": true, "keep": [3]})
        );
    }
}
