//! The registry: every tool the server answers, owned. Built-in entries are fixed when the
//! server starts (those of its profiles); user tools come from a [`UserEntries`] source that
//! may change while the server runs (a script edited, added or broken), so every lookup asks it.
//! MCP's `tools/list`, `GET /tools/list`, `POST /tools/{name}` and `tool_manifest` all read here.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::tool::Entry;

/// Tools defined while the server runs (the team's Lua scripts).
pub(crate) trait UserEntries: Send + Sync + 'static {
    /// The tools that are served now, each with a name no built-in has.
    fn entries(&self) -> Vec<Entry>;
}

/// What the server serves; cheap to clone.
#[derive(Clone)]
pub(crate) struct Registry {
    builtin: Arc<BTreeMap<Arc<str>, Entry>>,
    user: Option<Arc<dyn UserEntries>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("builtin", &self.builtin.len())
            .field("user", &self.user.is_some())
            .finish()
    }
}

impl Registry {
    /// The served built-ins, and the user tools when that profile is served.
    pub(crate) fn new(builtin: Vec<Entry>, user: Option<Arc<dyn UserEntries>>) -> Registry {
        Registry {
            builtin: Arc::new(
                builtin
                    .into_iter()
                    .map(|entry| (Arc::clone(&entry.name), entry))
                    .collect(),
            ),
            user,
        }
    }

    /// A registry with nothing in it (tests of single tools).
    #[cfg(test)]
    pub(crate) fn empty() -> Registry {
        Registry::new(Vec::new(), None)
    }

    /// The entry of that name, built-in first: a user tool never replaces a built-in.
    pub(crate) fn get(&self, name: &str) -> Option<Entry> {
        if let Some(entry) = self.builtin.get(name) {
            return Some(entry.clone());
        }
        self.user
            .as_ref()?
            .entries()
            .into_iter()
            .find(|entry| &*entry.name == name)
    }

    /// Every served entry, sorted by name.
    pub(crate) fn served(&self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self.builtin.values().cloned().collect();
        if let Some(user) = &self.user {
            entries.extend(
                user.entries()
                    .into_iter()
                    .filter(|entry| !self.builtin.contains_key(&entry.name)),
            );
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries
    }

    /// The entries MCP's `tools/list` shows (the HTTP API's own built-ins are not among them).
    pub(crate) fn over_mcp(&self) -> Vec<Entry> {
        self.served().into_iter().filter(Entry::over_mcp).collect()
    }
}
