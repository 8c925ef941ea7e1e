//! The hand-off between the two workflows of a fork pull request.
//!
//! Stage 1 (`pull_request`, read-only token, the fork's code) writes `tollgate.json` (the
//! [`ReviewResult`]) and `tollgate-publish.json` ([`PublishInfo`]: the pull request, the head
//! commit and the diff's hunk ranges, which [`tollgate::publish::plan`] needs to place inline
//! comments) into the output directory, which the workflow uploads as an artifact. Stage 2
//! (`workflow_run`, write token, never the fork's code) downloads it and [`read`]s it back.
//!
//! Everything in the artifact was produced where the fork's code ran, so [`read`] treats it as
//! hostile: files must be regular files within [`MAX_RESULT_BYTES`] / [`MAX_PUBLISH_BYTES`],
//! unknown fields in `tollgate-publish.json` are refused, counts and text lengths are bounded,
//! every path is relative and stays inside the repository, line numbers are at most
//! [`MAX_LINE`], the pull request number and commit ids have their formats, and the result must
//! be about the same head commit. One violation refuses the whole artifact.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail, ensure};
use serde::{Deserialize, Serialize};
use tollgate::diff::ChangedLines;
use tollgate::findings::ReviewResult;

/// The review result's file name in the output directory.
pub const RESULT_FILE: &str = "tollgate.json";
/// The publish information's file name in the output directory.
pub const PUBLISH_FILE: &str = "tollgate-publish.json";
/// The value of [`PublishInfo::schema`]; another version is refused.
pub const SCHEMA: &str = "tollgate-publish/v1";

/// Largest `tollgate.json` accepted.
pub const MAX_RESULT_BYTES: u64 = 32 * 1024 * 1024;
/// Largest `tollgate-publish.json` accepted.
pub const MAX_PUBLISH_BYTES: u64 = 4 * 1024 * 1024;
/// Highest line number accepted anywhere (a file of a million lines is not under review).
pub const MAX_LINE: u32 = 1_000_000;
const MAX_FINDINGS: usize = 10_000;
const MAX_FILES: usize = 20_000;
const MAX_RANGES: usize = 200_000;
const MAX_PATH_BYTES: usize = 1024;
/// Free text of one finding field (message, evidence item, fix, …).
const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Identifiers: rule ids, fingerprints, tool names.
const MAX_ID_BYTES: usize = 512;
const MAX_COLUMN: u32 = 1_000_000;
const MAX_PULL_REQUEST: u64 = 1_000_000_000;

/// `tollgate-publish.json`: what stage 2 needs besides the result. Its shape is fixed:
/// unknown fields are an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishInfo {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// `owner/name` the review ran in; stage 2 posts only to the same repository.
    pub repository: String,
    /// The pull request's number; `None` for a push.
    pub pull_request: Option<u64>,
    /// The reviewed head commit (40 or 64 lowercase hex digits).
    pub head_sha: String,
    /// New-side hunk ranges per path, `[start, end)` with 1-based lines.
    pub hunks: BTreeMap<String, Vec<[u32; 2]>>,
}

impl PublishInfo {
    pub fn new(
        repository: &str,
        pull_request: Option<u64>,
        head_sha: &str,
        changed: &ChangedLines,
    ) -> PublishInfo {
        PublishInfo {
            schema: SCHEMA.to_string(),
            repository: repository.to_string(),
            pull_request,
            head_sha: head_sha.to_string(),
            hunks: changed
                .files()
                .map(|path| {
                    let ranges = changed
                        .hunk_ranges(path)
                        .iter()
                        .map(|range| [range.start, range.end])
                        .collect();
                    (path.to_string(), ranges)
                })
                .collect(),
        }
    }
}

/// Writes `tollgate-publish.json` into `dir` (stage 1).
pub fn write(dir: &Path, info: &PublishInfo) -> anyhow::Result<()> {
    let path = dir.join(PUBLISH_FILE);
    let text = serde_json::to_string_pretty(info)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// A validated artifact (stage 2).
#[derive(Debug)]
pub struct Artifact {
    pub info: PublishInfo,
    pub result: ReviewResult,
    /// The hunks of [`PublishInfo::hunks`].
    pub changed: ChangedLines,
}

/// Reads and validates the artifact in `dir`; any violation is an error naming it.
pub fn read(dir: &Path) -> anyhow::Result<Artifact> {
    let info_bytes = read_bounded(&dir.join(PUBLISH_FILE), MAX_PUBLISH_BYTES)?;
    let info: PublishInfo = serde_json::from_slice(&info_bytes)
        .with_context(|| format!("{PUBLISH_FILE} does not have the {SCHEMA} shape"))?;
    validate_info(&info)?;
    let result_bytes = read_bounded(&dir.join(RESULT_FILE), MAX_RESULT_BYTES)?;
    let result: ReviewResult = serde_json::from_slice(&result_bytes)
        .with_context(|| format!("{RESULT_FILE} is not a Tollgate review result"))?;
    validate_result(&result, &info)?;
    let changed = ChangedLines::from_hunk_ranges(info.hunks.iter().flat_map(|(path, ranges)| {
        ranges
            .iter()
            .map(move |&[start, end]| (path.clone(), start..end))
    }));
    Ok(Artifact {
        info,
        result,
        changed,
    })
}

/// The file's bytes, refusing anything but a regular file of at most `limit` bytes.
fn read_bounded(path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("the artifact has no {name} ({})", path.display()))?;
    ensure!(
        meta.is_file(),
        "{name} in the artifact is not a regular file"
    );
    ensure!(
        meta.len() <= limit,
        "{name} is {} bytes, over the {limit} accepted",
        meta.len()
    );
    // Checked again on the open handle, read non-blocking and never past the limit.
    Ok(tollgate::input::read_file(
        path,
        &format!("artifact file {name}"),
        tollgate::input::Limit::fixed(limit),
    )?)
}

fn validate_info(info: &PublishInfo) -> anyhow::Result<()> {
    ensure!(
        info.schema == SCHEMA,
        "{PUBLISH_FILE}: schema `{}` is not `{SCHEMA}`",
        quote(&info.schema)
    );
    if let Some(number) = info.pull_request {
        ensure!(
            (1..=MAX_PULL_REQUEST).contains(&number),
            "{PUBLISH_FILE}: pull request number {number} is out of range"
        );
    }
    ensure!(
        is_commit_id(&info.head_sha),
        "{PUBLISH_FILE}: head_sha `{}` is not a full commit id",
        quote(&info.head_sha)
    );
    ensure!(
        info.hunks.len() <= MAX_FILES,
        "{PUBLISH_FILE}: {} files, over the {MAX_FILES} accepted",
        info.hunks.len()
    );
    let mut n_ranges = 0usize;
    for (path, ranges) in &info.hunks {
        check_path(path).with_context(|| format!("{PUBLISH_FILE}: hunks"))?;
        n_ranges += ranges.len();
        ensure!(
            n_ranges <= MAX_RANGES,
            "{PUBLISH_FILE}: over {MAX_RANGES} hunk ranges"
        );
        for &[start, end] in ranges {
            ensure!(
                1 <= start && start < end && end <= MAX_LINE + 1,
                "{PUBLISH_FILE}: hunk [{start}, {end}) of `{}` is not a range of lines 1..={MAX_LINE}",
                quote(path)
            );
        }
    }
    Ok(())
}

fn validate_result(result: &ReviewResult, info: &PublishInfo) -> anyhow::Result<()> {
    ensure!(
        result.metadata.head_sha.as_deref() == Some(info.head_sha.as_str()),
        "{RESULT_FILE} is about head {}, {PUBLISH_FILE} about {}",
        quote(result.metadata.head_sha.as_deref().unwrap_or("(none)")),
        info.head_sha
    );
    ensure!(
        result.findings.len() <= MAX_FINDINGS,
        "{RESULT_FILE}: {} findings, over the {MAX_FINDINGS} accepted",
        result.findings.len()
    );
    ensure!(
        result.summary.len() <= MAX_TEXT_BYTES
            && result.fail_reasons.len() <= MAX_FINDINGS
            && result
                .fail_reasons
                .iter()
                .all(|reason| reason.len() <= MAX_TEXT_BYTES),
        "{RESULT_FILE}: the summary or the fail reasons are too long"
    );
    for (idx, finding) in result.findings.iter().enumerate() {
        let what = || format!("{RESULT_FILE}: finding {idx}");
        let location = &finding.location;
        check_path(&location.file).with_context(what)?;
        ensure!(
            location.start_line <= location.end_line && location.end_line <= MAX_LINE,
            "{}: lines {}-{} are not within 0..={MAX_LINE}",
            what(),
            location.start_line,
            location.end_line
        );
        ensure!(
            [location.start_column, location.end_column]
                .iter()
                .flatten()
                .all(|column| *column <= MAX_COLUMN),
            "{}: a column is over {MAX_COLUMN}",
            what()
        );
        let ids = [
            finding.id.as_str(),
            finding.rule_id.as_str(),
            finding.fingerprint.as_str(),
            finding.tool.as_deref().unwrap_or_default(),
        ];
        ensure!(
            ids.iter().all(|id| id.len() <= MAX_ID_BYTES),
            "{}: an identifier is over {MAX_ID_BYTES} bytes",
            what()
        );
        let fix = finding.suggested_fix.as_ref();
        let texts = [
            finding.title.as_str(),
            finding.message.as_str(),
            finding.impact.as_str(),
            finding.recommendation.as_str(),
            fix.map_or("", |fix| fix.description.as_str()),
            fix.and_then(|fix| fix.replacement.as_deref())
                .unwrap_or_default(),
        ];
        ensure!(
            texts.iter().all(|text| text.len() <= MAX_TEXT_BYTES)
                && finding.evidence.len() <= 100
                && finding
                    .evidence
                    .iter()
                    .all(|item| item.len() <= MAX_TEXT_BYTES),
            "{}: a text field is over {MAX_TEXT_BYTES} bytes",
            what()
        );
    }
    for hotspot in &result.hotspots {
        check_path(hotspot).with_context(|| format!("{RESULT_FILE}: hotspots"))?;
    }
    Ok(())
}

/// A repository-relative path with `/` separators that cannot leave the repository: no
/// absolute or drive paths, no `.`/`..`/empty components, no backslashes or control characters.
fn check_path(path: &str) -> anyhow::Result<()> {
    let safe = !path.is_empty()
        && path.len() <= MAX_PATH_BYTES
        && !path.chars().any(|c| c.is_control() || c == '\\')
        && !path
            .split('/')
            .next()
            .is_some_and(|first| first.contains(':'))
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    ensure!(
        safe,
        "path `{}` is not a relative path inside the repository",
        quote(path)
    );
    Ok(())
}

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
pub fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Untrusted text for an error message: escaped, at most 80 characters.
fn quote(text: &str) -> String {
    let escaped: String = text.escape_debug().collect();
    if escaped.chars().count() > 80 {
        escaped.chars().take(79).collect::<String>() + "…"
    } else {
        escaped
    }
}

/// Refuses the artifact when `expected` says otherwise.
pub fn check_against(
    info: &PublishInfo,
    repository: &str,
    head_sha: &str,
    pull_requests: &[u64],
) -> anyhow::Result<()> {
    if info.repository != repository {
        bail!(
            "the artifact is for repository `{}`, this workflow runs in `{repository}`",
            quote(&info.repository)
        );
    }
    if info.head_sha != head_sha {
        bail!(
            "the artifact is about commit {}, the workflow run about {head_sha}",
            info.head_sha
        );
    }
    if let Some(number) = info.pull_request
        && !pull_requests.is_empty()
        && !pull_requests.contains(&number)
    {
        bail!("the artifact names pull request #{number}, which the workflow run is not about");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn info() -> PublishInfo {
        PublishInfo {
            schema: SCHEMA.into(),
            repository: "o/r".into(),
            pull_request: Some(7),
            head_sha: SHA.into(),
            hunks: BTreeMap::from([("src/a.rs".to_string(), vec![[3, 9]])]),
        }
    }

    #[test]
    fn paths_must_stay_inside() {
        for good in ["a", "src/a b.rs", "x/.hidden", "a..b/c"] {
            assert!(check_path(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../../x",
            "a/../../x",
            "a//b",
            "./a",
            "a/",
            "C:/x",
            "a\\..\\x",
            "a\nb",
            "a\u{1b}b",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
        assert!(check_path(&"a".repeat(MAX_PATH_BYTES + 1)).is_err());
    }

    #[test]
    fn publish_info_is_checked() {
        assert!(validate_info(&info()).is_ok());
        let mut bad = info();
        bad.head_sha = "HEAD".into();
        assert!(validate_info(&bad).is_err());
        let mut bad = info();
        bad.pull_request = Some(0);
        assert!(validate_info(&bad).is_err());
        let mut bad = info();
        bad.hunks.insert("b".into(), vec![[5, 5]]);
        assert!(validate_info(&bad).is_err());
        let mut bad = info();
        bad.hunks.insert("b".into(), vec![[1, u32::MAX]]);
        assert!(validate_info(&bad).is_err());
        let mut bad = info();
        bad.schema = "tollgate-publish/v2".into();
        assert!(validate_info(&bad).is_err());
        let text = serde_json::to_string(&info()).unwrap();
        let extra = text.replacen('{', "{\"run\": \"curl x | sh\", ", 1);
        assert!(serde_json::from_str::<PublishInfo>(&extra).is_err());
    }

    #[test]
    fn the_artifact_must_match_the_workflow_run() {
        let info = info();
        assert!(check_against(&info, "o/r", SHA, &[]).is_ok());
        assert!(check_against(&info, "o/r", SHA, &[7]).is_ok());
        assert!(check_against(&info, "o/r", SHA, &[8]).is_err());
        assert!(check_against(&info, "x/r", SHA, &[]).is_err());
        assert!(check_against(&info, "o/r", &"f".repeat(40), &[]).is_err());
    }

    #[test]
    fn oversized_files_are_refused_before_parsing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PUBLISH_FILE), vec![b' '; 1024]).unwrap();
        assert!(read_bounded(&dir.path().join(PUBLISH_FILE), 1023).is_err());
        assert!(read_bounded(&dir.path().join(PUBLISH_FILE), 1024).is_ok());
        assert!(read_bounded(dir.path(), 1024).is_err(), "a directory");
    }
}
