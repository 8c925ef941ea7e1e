//! Script sources: a Lua file declaring `function source.fetch(since)`, run in the user tools'
//! sandbox under their limits and with their host API. It returns the source's documents, a
//! list of `{id, title, body, url, updated_at}` (or `{documents = {…}}`); `since` is the
//! latest `updated_at` stored from it (nil the first time). Every current document is
//! returned, since an id left out is deleted; one whose `updated_at` equals `since`'s stored
//! value may come without its body (it is kept as stored).

use serde_json::Value;

use super::{Document, ScriptRunner, SourceError, check_bounds};
use crate::config::SourceConfig;
use crate::workspace::RepoPath;

const FIELDS: [&str; 5] = ["id", "title", "body", "url", "updated_at"];

pub(super) fn fetch(
    run: ScriptRunner<'_>,
    source: &SourceConfig,
    script: &RepoPath,
    since: Option<String>,
) -> Result<Vec<Document>, SourceError> {
    let returned = run(source, script, since).map_err(|(code, message)| SourceError::Script {
        name: source.name.clone(),
        code,
        message,
    })?;
    let list = match returned {
        Value::Array(list) => list,
        Value::Object(mut map) if map.contains_key("documents") => {
            match map.remove("documents") {
                Some(Value::Array(list)) => list,
                // An empty Lua table is read as an object.
                Some(Value::Object(empty)) if empty.is_empty() => Vec::new(),
                _ => return Err(bad(source, "`documents` must be a list")),
            }
        }
        Value::Object(empty) if empty.is_empty() => Vec::new(),
        Value::Null => Vec::new(),
        _ => {
            return Err(bad(
                source,
                "source.fetch must return a list of documents {id, title, body, url, updated_at}",
            ));
        }
    };
    let mut documents = Vec::with_capacity(list.len());
    let mut bytes = 0u64;
    for (idx, item) in list.into_iter().enumerate() {
        let at = format!("documents[{}]", idx + 1);
        let Value::Object(map) = item else {
            return Err(bad(source, format!("{at} is not a table")));
        };
        if let Some(unknown) = map.keys().find(|key| !FIELDS.contains(&key.as_str())) {
            return Err(bad(
                source,
                format!(
                    "{at}.{unknown} is not a document field (id, title, body, url, updated_at)"
                ),
            ));
        }
        let text = |key: &str| -> Result<Option<String>, SourceError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(Value::Number(number)) if key == "id" => Ok(Some(number.to_string())),
                Some(_) => Err(bad(source, format!("{at}.{key} must be a string"))),
            }
        };
        let id = text("id")?
            .filter(|id| !id.trim().is_empty())
            .ok_or_else(|| bad(source, format!("{at}.id is missing")))?;
        let body = text("body")?;
        bytes += body.as_ref().map_or(0, |body| body.len() as u64);
        check_bounds(source, idx + 1, bytes)?;
        documents.push(Document {
            title: text("title")?
                .filter(|title| !title.trim().is_empty())
                .unwrap_or_else(|| id.clone()),
            id,
            body,
            url: text("url")?,
            updated_at: text("updated_at")?,
        });
    }
    Ok(documents)
}

fn bad(source: &SourceConfig, message: impl Into<String>) -> SourceError {
    SourceError::invalid(source, message)
}
