//! Which files the index holds: an ignore-aware walk (`.gitignore`, `.ignore`, git excludes)
//! that skips binary, vendored, generated, lock, minified and oversized files and detects each
//! file's language from its name.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

/// Files larger than this are not indexed (data dumps, bundles).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A file's language: one list with the review's conventions (`tollgate-lang`).
pub use tollgate_lang::Language;

/// The language of a file the index holds, by its name; `None` for files it skips (media,
/// archives, lock files, minified bundles, declaration files, data).
pub fn detect_language(path: &Path) -> Option<Language> {
    let name = path.file_name()?.to_str()?;
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
    if SKIPPED_NAMES.contains(&lower.as_str())
        || SKIPPED_EXTENSIONS.contains(&ext)
        || lower.ends_with(".min.js")
        || lower.ends_with(".min.css")
        || lower.ends_with(".map")
        || lower.ends_with(".lock")
        || lower.ends_with(".d.ts")
    {
        return None;
    }
    Some(Language::of_path(&lower))
}

const SKIPPED_NAMES: &[&str] = &[
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "cargo.lock",
    "poetry.lock",
    "go.sum",
    "composer.lock",
    "gemfile.lock",
];

/// Media, archives, binaries and bulk data: never useful as code context.
const SKIPPED_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "ico",
    "webp",
    "svg",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "zst",
    "7z",
    "tar",
    "jar",
    "war",
    "class",
    "o",
    "a",
    "so",
    "dylib",
    "dll",
    "exe",
    "bin",
    "wasm",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "mp3",
    "mp4",
    "mov",
    "avi",
    "webm",
    "wav",
    "ogg",
    "flac",
    "psd",
    "db",
    "sqlite",
    "sqlite3",
    "pyc",
    "pyo",
    "whl",
    "egg",
    "parquet",
    "arrow",
    "npy",
    "npz",
    "pkl",
    "pt",
    "onnx",
    "safetensors",
    "csv",
    "tsv",
    "ipynb",
    "snap",
];

/// Directories holding vendored or generated code, skipped even when not ignored.
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "vendor",
    "third_party",
    "target",
    "dist",
    "build",
    "__pycache__",
    ".git",
    ".tollgate",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
];

/// One file the walk found.
#[derive(Debug, Clone)]
pub struct WalkedFile {
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
    pub abs: PathBuf,
    pub language: Language,
    pub size: u64,
    /// Nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: u128,
}

/// Whether a walk enters hidden files and directories (`.github/`, `.eslintrc.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// The index's walk: dotfiles are tool state and editor config more often than code.
    Skip,
    /// The plan scan's: a task about CI or linting names `.github/workflows/*` or a dotfile.
    Include,
}

/// Walks `root/under` and returns the indexable files sorted by path.
pub fn walk(root: &Path, under: Option<&str>) -> Vec<WalkedFile> {
    walk_tree(root, under, Hidden::Skip)
}

/// [`walk`], choosing whether hidden files are entered. The skipped directories (`.git`,
/// `node_modules`, `target`, …), file kinds and sizes are the same either way.
pub fn walk_tree(root: &Path, under: Option<&str>, hidden: Hidden) -> Vec<WalkedFile> {
    let start = match under {
        Some(sub) if !sub.is_empty() && sub != "." => root.join(sub),
        _ => root.to_path_buf(),
    };
    let files = std::sync::Mutex::new(Vec::new());
    // Parallel: most of a walk is waiting on `stat`.
    WalkBuilder::new(&start)
        .hidden(hidden == Hidden::Skip)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            !(entry.file_type().is_some_and(|t| t.is_dir())
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| SKIPPED_DIRS.contains(&name)))
        })
        .build_parallel()
        .run(|| {
            let files = &files;
            Box::new(move |entry| {
                if let Some(file) = entry.ok().and_then(|entry| walked_file(root, &entry)) {
                    files.lock().unwrap_or_else(|e| e.into_inner()).push(file);
                }
                ignore::WalkState::Continue
            })
        });
    let mut files = files.into_inner().unwrap_or_else(|e| e.into_inner());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// The indexable file an entry names, if it is one.
fn walked_file(root: &Path, entry: &ignore::DirEntry) -> Option<WalkedFile> {
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let abs = entry.path();
    let language = detect_language(abs)?;
    let meta = entry.metadata().ok()?;
    if meta.len() > MAX_FILE_BYTES || meta.len() == 0 {
        return None;
    }
    let path = relative(root, abs)?;
    Some(WalkedFile {
        path,
        abs: abs.to_path_buf(),
        language,
        size: meta.len(),
        mtime_ns: mtime_ns(&meta),
    })
}

/// A file's mtime in nanoseconds since the epoch (0 when unknown), as the index records it.
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// `abs` relative to `root`, `/`-separated; `None` outside it or not UTF-8.
pub(crate) fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let mut out = String::new();
    for part in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part.as_os_str().to_str()?);
    }
    Some(out)
}

/// True for content that is not text: a NUL byte in the first 8 KB, or invalid UTF-8.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// Generated files announce themselves near the top.
pub(crate) fn looks_generated(text: &str) -> bool {
    let head: String = text
        .lines()
        .take(5)
        .collect::<Vec<_>>()
        .join("\n")
        .to_ascii_lowercase();
    head.contains("@generated")
        || head.contains("do not edit")
        || head.contains("code generated by")
        || head.contains("autogenerated")
        || head.contains("auto-generated")
}

/// Minified code: very long lines on average.
pub(crate) fn looks_minified(text: &str) -> bool {
    let lines = text.lines().count().max(1);
    text.len() / lines > 500
}

/// Test files and test data, by each language's conventions (one rule with the review's).
pub use tollgate_lang::is_test_path;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_and_skips() {
        assert_eq!(detect_language(Path::new("a/b.rs")), Some(Language::Rust));
        assert_eq!(detect_language(Path::new("x.tsx")), Some(Language::Tsx));
        assert_eq!(
            detect_language(Path::new("README.md")),
            Some(Language::Markdown)
        );
        assert_eq!(
            detect_language(Path::new("Makefile")),
            Some(Language::Other)
        );
        assert_eq!(detect_language(Path::new("src/list.h")), Some(Language::C));
        assert_eq!(detect_language(Path::new("a.hpp")), Some(Language::Cpp));
        assert_eq!(detect_language(Path::new("A.cs")), Some(Language::CSharp));
        assert_eq!(detect_language(Path::new("Gemfile")), Some(Language::Ruby));
        assert_eq!(detect_language(Path::new("t.rake")), Some(Language::Ruby));
        assert_eq!(detect_language(Path::new("i.php")), Some(Language::Php));
        assert_eq!(detect_language(Path::new("b.kts")), Some(Language::Kotlin));
        assert_eq!(detect_language(Path::new("V.swift")), Some(Language::Swift));
        assert_eq!(Language::parse("C#"), Some(Language::CSharp));
        assert_eq!(Language::parse("c++"), Some(Language::Cpp));
        assert_eq!(Language::Kotlin.as_str(), "kotlin");
        assert_eq!(detect_language(Path::new("Cargo.lock")), None);
        assert_eq!(detect_language(Path::new("app.min.js")), None);
        assert_eq!(detect_language(Path::new("logo.png")), None);
        assert!(is_test_path("src/foo_test.go"));
        assert!(is_test_path("tests/it/main.rs"));
        assert!(is_test_path("pkg/test_utils.py"));
        assert!(!is_test_path("src/attestation.rs"));
        assert!(is_test_path("crates/ide/src/tests.rs"));
        assert!(is_test_path("crates/parser/test_data/parser/ok/0001.rs"));
        assert!(is_test_path(
            "crates/hir-def/src/macro_expansion_tests/mbe.rs"
        ));
        assert!(is_test_path("crates/hir/src/display_tests.rs"));
        assert!(looks_generated(
            "// Code generated by protoc. DO NOT EDIT.\npackage x"
        ));
    }
}
