//! Questions answered from the extracted outlines (the file table): where a symbol is defined,
//! which files import a module, and which files relate to a file through imports.

use std::collections::{BTreeMap, BTreeSet};

use crate::IndexConfig;
use crate::error::IndexError;
use crate::store::{Outline, SymbolEntry};
use crate::update::load_files;

/// A definition site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub path: String,
    pub line: usize,
    /// The definition's last line; equal to `line` when the index does not know it.
    pub end_line: usize,
    pub name: String,
    pub kind: String,
    pub parent: Option<String>,
    pub language: String,
}

/// A file's language and decoded outline.
#[derive(Debug)]
struct Outlined {
    language: String,
    outline: Outline,
}

fn decode(files: crate::store::Files) -> BTreeMap<String, Outlined> {
    files
        .into_iter()
        .map(|(path, entry)| {
            let outline = entry.outline();
            (
                path,
                Outlined {
                    language: entry.language,
                    outline,
                },
            )
        })
        .collect()
}

fn files(config: &IndexConfig) -> Result<BTreeMap<String, Outlined>, IndexError> {
    load_files(&config.dir)?
        .map(decode)
        .ok_or_else(|| IndexError::NotIndexed(config.dir.clone()))
}

fn in_scope(path: &str, language: &str, want_language: Option<&str>, under: Option<&str>) -> bool {
    want_language.is_none_or(|l| l.eq_ignore_ascii_case(language))
        && under
            .map(|u| u.trim_start_matches("./").trim_matches('/'))
            .filter(|u| !u.is_empty() && *u != ".")
            .is_none_or(|u| path == u || path.starts_with(&format!("{u}/")))
}

/// Definitions named `symbol` (exact; case-insensitive when there is no exact one). A
/// qualified `Type::method` or `Type.method` matches the member of that container.
pub fn definitions(
    config: &IndexConfig,
    symbol: &str,
    language: Option<&str>,
    under: Option<&str>,
    limit: usize,
) -> Result<Vec<Definition>, IndexError> {
    let files = files(config)?;
    let (parent, name) = match symbol.rsplit_once("::").or_else(|| symbol.rsplit_once('.')) {
        Some((parent, name)) => (Some(parent), name),
        None => (None, symbol),
    };
    let collect = |exact: bool| {
        let mut out = Vec::new();
        for (path, entry) in &files {
            if !in_scope(path, &entry.language, language, under) {
                continue;
            }
            for s in &entry.outline.symbols {
                let name_ok = if exact {
                    s.name == name
                } else {
                    s.name.eq_ignore_ascii_case(name)
                };
                let parent_ok = parent.is_none_or(|p| {
                    s.parent.as_deref().is_some_and(|sp| {
                        sp == p || sp.ends_with(&format!(" {p}")) || sp.eq_ignore_ascii_case(p)
                    })
                });
                if name_ok && parent_ok {
                    out.push(definition(path, entry, s));
                }
            }
        }
        out
    };
    let mut out = collect(true);
    if out.is_empty() {
        out = collect(false);
    }
    out.truncate(limit);
    Ok(out)
}

fn definition(path: &str, entry: &Outlined, s: &SymbolEntry) -> Definition {
    Definition {
        path: path.to_string(),
        line: s.line,
        end_line: s.end_line.max(s.line),
        name: s.name.clone(),
        kind: s.kind.clone(),
        parent: s.parent.clone(),
        language: entry.language.clone(),
    }
}

/// Every indexed file's outline, loaded once for many lookups (a review asks about each name
/// its changed lines use).
#[derive(Debug)]
pub struct Outlines {
    files: BTreeMap<String, Outlined>,
}

impl Outlines {
    /// `None` when the index has no file table yet.
    pub fn load(config: &IndexConfig) -> Result<Option<Outlines>, IndexError> {
        Ok(load_files(&config.dir)?.map(|files| Outlines {
            files: decode(files),
        }))
    }

    /// The language the index gave `path`, when it indexed it.
    pub fn language_of(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(|e| e.language.as_str())
    }

    /// Definitions named exactly `name`, in path order.
    pub fn definitions(&self, name: &str) -> Vec<Definition> {
        let mut out = Vec::new();
        for (path, entry) in &self.files {
            for s in entry.outline.symbols.iter().filter(|s| s.name == name) {
                out.push(definition(path, entry, s));
            }
        }
        out
    }
}

/// An import site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Importer {
    pub path: String,
    pub import: String,
    pub language: String,
}

/// Files whose imports name `module` as a whole path segment (`crate::a::b` is named by `b`,
/// `a::b` and `crate::a::b`; `./util` by `util`).
pub fn importers(
    config: &IndexConfig,
    module: &str,
    language: Option<&str>,
    under: Option<&str>,
    limit: usize,
) -> Result<Vec<Importer>, IndexError> {
    let files = files(config)?;
    let wanted = segments(module);
    let mut out = Vec::new();
    for (path, entry) in &files {
        if !in_scope(path, &entry.language, language, under) {
            continue;
        }
        for import in &entry.outline.imports {
            let segs = segments(import);
            if !wanted.is_empty() && segs.windows(wanted.len()).any(|w| w == wanted.as_slice()) {
                out.push(Importer {
                    path: path.clone(),
                    import: import.clone(),
                    language: entry.language.clone(),
                });
                break;
            }
        }
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

fn segments(module: &str) -> Vec<String> {
    module
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|s| !s.is_empty() && !matches!(*s, "crate" | "self" | "super"))
        .map(str::to_string)
        .collect()
}

/// The imports each of `paths` makes, as written (none for a file the index does not know).
pub fn imports_of(config: &IndexConfig, paths: &[&str]) -> Result<Vec<Vec<String>>, IndexError> {
    let files = files(config)?;
    Ok(paths
        .iter()
        .map(|path| {
            files
                .get(*path)
                .map(|entry| entry.outline.imports.clone())
                .unwrap_or_default()
        })
        .collect())
}

/// Files `path` imports (resolved by matching module paths to file paths) and files that
/// import it, nearest first; `path` itself excluded.
pub fn related(config: &IndexConfig, path: &str, limit: usize) -> Result<Vec<String>, IndexError> {
    let files = files(config)?;
    let mut out: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    seen.insert(path.to_string());
    let stem_segments = |p: &str| -> Vec<String> {
        let no_ext = p.rsplit_once('.').map_or(p, |(s, _)| s);
        let mut segs = segments(no_ext);
        if matches!(
            segs.last().map(String::as_str),
            Some("mod" | "index" | "__init__" | "lib")
        ) {
            segs.pop();
        }
        segs
    };
    if let Some(entry) = files.get(path) {
        for import in &entry.outline.imports {
            let segs = segments(import);
            // The longest suffix-prefix of the module path that names a file.
            let mut best: Option<(usize, &String)> = None;
            for candidate in files.keys() {
                if seen.contains(candidate) {
                    continue;
                }
                let file_segs = stem_segments(candidate);
                for take in (1..=segs.len()).rev() {
                    let prefix = &segs[..take];
                    if file_segs.len() >= take && file_segs[file_segs.len() - take..] == *prefix {
                        if best.is_none_or(|(len, _)| take > len) {
                            best = Some((take, candidate));
                        }
                        break;
                    }
                }
            }
            if let Some((_, file)) = best
                && seen.insert(file.clone())
            {
                out.push(file.clone());
            }
        }
    }
    let own = stem_segments(path);
    if let Some(name) = own.last() {
        for (other, entry) in &files {
            if seen.contains(other) {
                continue;
            }
            if entry
                .outline
                .imports
                .iter()
                .any(|i| segments(i).last() == Some(name))
            {
                seen.insert(other.clone());
                out.push(other.clone());
            }
        }
    }
    out.truncate(limit);
    Ok(out)
}
