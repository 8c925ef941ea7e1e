//! Finding a tool's executable and learning its version.
//!
//! The order is: the path given in the configuration (and nothing else when one is given: an
//! explicit choice that is broken should say so, not fall back silently), the project's
//! `node_modules/.bin`, then the directories of the search path the front end passed in.
//! Relative search-path entries are skipped: they would depend on the working directory, which
//! the core never reads.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::findings::ToolOrigin;
use crate::process::{self, Exit, ToolCommand};

/// An executable that was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tool {
    pub(crate) path: PathBuf,
    pub(crate) origin: ToolOrigin,
}

/// How long a `--version` probe may take.
const VERSION_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Looks for `name`; the error is the reason it is unavailable.
pub(crate) fn discover(
    name: &str,
    explicit: Option<&Path>,
    workspace: &Path,
    search_path: Option<&OsStr>,
) -> Result<Tool, String> {
    if let Some(path) = explicit {
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            workspace.join(path)
        };
        return if is_executable_file(&path) {
            Ok(Tool {
                path,
                origin: ToolOrigin::Config,
            })
        } else if path.exists() {
            Err(format!(
                "the configured {name} path {} is not an executable file",
                path.display()
            ))
        } else {
            Err(format!(
                "the configured {name} path {} does not exist",
                path.display()
            ))
        };
    }
    let bin_dir = workspace.join("node_modules").join(".bin");
    if let Some(path) = candidates(&bin_dir, name).find(|p| is_executable_file(p)) {
        return Ok(Tool {
            path,
            origin: ToolOrigin::NodeModules,
        });
    }
    if let Some(search_path) = search_path {
        for dir in std::env::split_paths(search_path).filter(|dir| dir.is_absolute()) {
            if let Some(path) = candidates(&dir, name).find(|p| is_executable_file(p)) {
                return Ok(Tool {
                    path,
                    origin: ToolOrigin::Path,
                });
            }
        }
    }
    Err(format!(
        "{name} was not found (looked in node_modules/.bin and on PATH); install it or set [analyzers.{name}] path"
    ))
}

/// The version of an npm package's binary, read from the `package.json` of the package that
/// holds it (`node_modules/.bin/tsc` → `node_modules/typescript/package.json`), which costs a
/// file read instead of starting node.
pub(crate) fn npm_package_version(executable: &Path, package: &str) -> Option<String> {
    let resolved = executable.canonicalize().ok()?;
    for dir in resolved.ancestors().skip(1).take(4) {
        let manifest = dir.join("package.json");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if json["name"] == package {
            return json["version"].as_str().map(str::to_string);
        }
    }
    None
}

/// Runs `<tool> --version` and returns the first line that holds a digit, without a leading
/// `Version` word. The probe ends by `deadline` at the latest (the analyzer's own), and after
/// [`VERSION_PROBE_TIMEOUT`] in any case, so a hanging tool cannot eat the time of the real run.
pub(crate) fn probe_version(tool: &Tool, workspace: &Path, deadline: Instant) -> Option<String> {
    let command = ToolCommand::new(&tool.path, workspace).arg("--version");
    let deadline = deadline.min(Instant::now() + VERSION_PROBE_TIMEOUT);
    let output = process::run(
        &command,
        deadline,
        64 * 1024,
        &crate::control::Control::default(),
    )
    .ok()?;
    if output.exit != Exit::Code(0) {
        return None;
    }
    parse_version_output(&String::from_utf8_lossy(&output.stdout))
}

fn parse_version_output(text: &str) -> Option<String> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| line.chars().any(|c| c.is_ascii_digit()))?;
    let line = line
        .strip_prefix("Version ")
        .or_else(|| line.strip_prefix("version "))
        .unwrap_or(line);
    Some(line.chars().take(100).collect())
}

fn candidates<'a>(dir: &'a Path, name: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    let suffixes: &[&str] = if cfg!(windows) {
        &[".exe", ".cmd", ".bat", ""]
    } else {
        &[""]
    };
    suffixes
        .iter()
        .map(move |suffix| dir.join(format!("{name}{suffix}")))
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    path.is_file()
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn executable(path: &Path, body: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn config_then_node_modules_then_search_path() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        let on_path = dir.path().join("bin");
        executable(&on_path.join("tsc"), "echo 1");
        let search = std::env::join_paths([Path::new("relative/bin"), &on_path]).unwrap();

        let found = discover("tsc", None, &workspace, Some(&search)).unwrap();
        assert_eq!(found.origin, ToolOrigin::Path);
        assert_eq!(found.path, on_path.join("tsc"));

        executable(&workspace.join("node_modules/.bin/tsc"), "echo 2");
        let found = discover("tsc", None, &workspace, Some(&search)).unwrap();
        assert_eq!(found.origin, ToolOrigin::NodeModules);

        executable(&workspace.join("tools/my-tsc"), "echo 3");
        let found = discover(
            "tsc",
            Some(Path::new("tools/my-tsc")),
            &workspace,
            Some(&search),
        )
        .unwrap();
        assert_eq!(found.origin, ToolOrigin::Config);
        assert_eq!(found.path, workspace.join("tools/my-tsc"));
    }

    #[test]
    fn a_broken_explicit_path_does_not_fall_back() {
        let dir = tempfile::tempdir().unwrap();
        let on_path = dir.path().join("bin");
        executable(&on_path.join("semgrep"), "echo 1");
        let err = discover(
            "semgrep",
            Some(Path::new("nope/semgrep")),
            dir.path(),
            Some(on_path.as_os_str()),
        )
        .unwrap_err();
        assert!(err.contains("does not exist"), "{err}");

        std::fs::write(dir.path().join("plain"), "not executable").unwrap();
        let err = discover(
            "semgrep",
            Some(Path::new("plain")),
            dir.path(),
            Some(on_path.as_os_str()),
        )
        .unwrap_err();
        assert!(err.contains("not an executable"), "{err}");
    }

    #[test]
    fn absent_everywhere_explains_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let err = discover("semgrep", None, dir.path(), None).unwrap_err();
        assert!(
            err.contains("node_modules/.bin") && err.contains("PATH"),
            "{err}"
        );
        // A directory named like the tool is not the tool.
        std::fs::create_dir_all(dir.path().join("bin/semgrep")).unwrap();
        let search = dir.path().join("bin");
        assert!(discover("semgrep", None, dir.path(), Some(search.as_os_str())).is_err());
    }

    #[test]
    fn version_from_the_package_or_the_tool() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("node_modules/typescript");
        executable(&package.join("bin/tsc"), "echo 'Version 9.9.9'");
        std::fs::write(
            package.join("package.json"),
            r#"{"name": "typescript", "version": "7.0.2"}"#,
        )
        .unwrap();
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("../typescript/bin/tsc", bin.join("tsc")).unwrap();
        assert_eq!(
            npm_package_version(&bin.join("tsc"), "typescript").as_deref(),
            Some("7.0.2")
        );
        assert_eq!(npm_package_version(&bin.join("tsc"), "other"), None);

        let tool = Tool {
            path: bin.join("tsc"),
            origin: ToolOrigin::NodeModules,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        assert_eq!(
            probe_version(&tool, dir.path(), deadline).as_deref(),
            Some("9.9.9")
        );
        // A tool that hangs on --version gives no version, within the caller's deadline.
        // (Had the probe outlived its deadline, this would hang until nextest's terminate-after.)
        executable(&dir.path().join("hang"), "sleep 100000");
        let hang = Tool {
            path: dir.path().join("hang"),
            origin: ToolOrigin::Path,
        };
        let started = Instant::now();
        let soon = started + Duration::from_millis(300);
        assert_eq!(probe_version(&hang, dir.path(), soon), None);
        assert_eq!(
            parse_version_output("\nsemgrep 1.182.0\n").as_deref(),
            Some("semgrep 1.182.0")
        );
        assert_eq!(parse_version_output("no digits"), None);
    }
}
