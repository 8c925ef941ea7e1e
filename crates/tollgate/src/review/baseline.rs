//! Baseline files: fingerprints of findings a team has accepted, so they do not fail new PRs.

use std::collections::HashSet;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::findings::Finding;
use crate::input::{self, InputError, Limit};

/// Version written to and accepted from baseline files.
const BASELINE_VERSION: u32 = 1;

/// A problem with a baseline file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    #[error("Cannot read baseline {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("Invalid baseline {path}: {message}")]
    Parse { path: String, message: String },
    #[error("Cannot write baseline {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The baseline file format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineFile {
    pub version: u32,
    pub tool: String,
    pub findings: Vec<BaselineEntry>,
}

/// One accepted finding. Only `fingerprint` matters for matching; the rest helps people read it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct BaselineEntry {
    pub fingerprint: String,
    #[serde(default)]
    pub rule_id: String,
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub title: String,
}

/// Loaded baseline: a set of fingerprints.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    fingerprints: HashSet<String>,
}

impl Baseline {
    /// Reads a baseline file of at most `max_bytes` bytes (see [`crate::input`]).
    pub fn load(path: &Path, max_bytes: u64) -> Result<Baseline, BaselineError> {
        let display = path.display().to_string();
        let bytes = input::read_file(path, "baseline", Limit::max_input(max_bytes))?;
        Baseline::from_json(&String::from_utf8_lossy(&bytes), &display)
    }

    /// Parses the text of a baseline file; `label` names it in messages (a path, or a path at
    /// a commit).
    pub fn from_json(text: &str, label: &str) -> Result<Baseline, BaselineError> {
        let display = label.to_string();
        // Only fingerprints are kept, so memory stays near their share of the file.
        let file: FingerprintsOnly =
            serde_json::from_str(text).map_err(|err| BaselineError::Parse {
                path: display.clone(),
                message: format!("line {}, column {}: {err}", err.line(), err.column()),
            })?;
        if file.version != BASELINE_VERSION {
            return Err(BaselineError::Parse {
                path: display,
                message: format!(
                    "version {} is not supported (expected {BASELINE_VERSION})",
                    file.version
                ),
            });
        }
        Ok(Baseline {
            fingerprints: file.findings.into_iter().map(|e| e.fingerprint).collect(),
        })
    }

    pub fn contains(&self, fingerprint: &str) -> bool {
        self.fingerprints.contains(fingerprint)
    }

    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }
}

/// [`BaselineFile`] as read: the same required fields, the texts for people skipped.
#[derive(Deserialize)]
struct FingerprintsOnly {
    version: u32,
    #[serde(rename = "tool")]
    _tool: serde::de::IgnoredAny,
    findings: Vec<FingerprintEntry>,
}

#[derive(Deserialize)]
struct FingerprintEntry {
    fingerprint: String,
}

/// Writes a baseline of `findings` atomically (temp file + rename), sorted so it diffs well.
pub fn write_baseline(path: &Path, findings: &[Finding]) -> Result<(), BaselineError> {
    let mut entries: Vec<BaselineEntry> = findings
        .iter()
        .map(|f| BaselineEntry {
            fingerprint: f.fingerprint.clone(),
            rule_id: f.rule_id.clone(),
            file: f.location.file.clone(),
            title: f.title.clone(),
        })
        .collect();
    entries.sort();
    entries.dedup_by(|a, b| a.fingerprint == b.fingerprint);
    let file = BaselineFile {
        version: BASELINE_VERSION,
        tool: "tollgate".to_string(),
        findings: entries,
    };
    let mut json = serde_json::to_string_pretty(&file).expect("baseline serialises");
    json.push('\n');
    let write_err = |source| BaselineError::Write {
        path: path.display().to_string(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_err)?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "baseline".into()),
        std::process::id()
    ));
    std::fs::write(&tmp, json).map_err(write_err)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        write_err(e)
    })
}
