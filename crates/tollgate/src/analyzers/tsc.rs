//! The TypeScript type check: `tsc --noEmit` per project that owns a changed file.
//!
//! A changed `.ts`/`.tsx`/`.mts`/`.cts` (or JavaScript) file belongs to the nearest
//! `tsconfig.json` above it, which is how editors pick a project in a monorepo; a changed
//! `tsconfig.json` selects its own project. Each project is checked once with
//! `--noEmit --pretty false -p <tsconfig>`, and with `--incremental --tsBuildInfoFile` pointing
//! into the cache directory when caching is on, so a second review re-checks little (both the
//! classic compiler and the TypeScript 7 native one accept these flags; if a compiler rejects
//! them the project is checked again without them).
//!
//! Diagnostics are parsed from both output styles: `file(line,col): error TS2322: message`
//! (`--pretty false`, continuation lines indented) and `file:line:col - error TS2322: message`
//! (pretty, in case a wrapper forces it; colours are stripped). Diagnostics without a location
//! (`error TS18003: No inputs were found…`) mean the project could not be checked: the run is
//! `failed` with that message. tsc exits 1 or 2 when it reports errors, so the exit code alone
//! says nothing about whether it worked.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::discover::{self, Tool};
use super::orchestrate::{ToolContext, ToolRun, describe_exit, stderr_warnings};
use crate::findings::{AnalyzerStatus, Finding, Location, Severity, Source};
use crate::process::{self, Exit, ToolCommand};

/// Extensions of files the compiler checks.
const CHECKED_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];
const TSCONFIG: &str = "tsconfig.json";
const CONFIDENCE: f64 = 0.95;

pub(crate) fn run(ctx: &ToolContext<'_>) -> ToolRun {
    let mut run = ToolRun::new("tsc");
    let projects = owning_projects(ctx);
    if projects.is_empty() {
        let reason = if ctx.files.is_empty() {
            "no tsconfig.json at the workspace root".to_string()
        } else if ctx.files.iter().any(|f| is_checked_file(f)) {
            "no tsconfig.json owns the changed TypeScript files".to_string()
        } else {
            "no TypeScript or JavaScript file changed".to_string()
        };
        return run.with_status(AnalyzerStatus::Skipped, reason);
    }
    let tool = match discover::discover(
        "tsc",
        ctx.config.tsc.path.as_deref(),
        ctx.workspace.root(),
        ctx.config.search_path.as_deref(),
    ) {
        Ok(tool) => tool,
        Err(reason) => return run.with_status(AnalyzerStatus::Unavailable, reason),
    };
    run.found(&tool);
    // The package's manifest costs a file read. Without one (a standalone native binary, say),
    // `tsc --version` runs beside the check so it adds no wall time.
    let manifest_version = discover::npm_package_version(&tool.path, "typescript");

    let mut build_info_dir = None;
    if ctx.config.tsc.incremental {
        match ctx.cache_subdir("tsc") {
            Ok(dir) => build_info_dir = Some(dir),
            Err(err) => run.report.warnings.push(format!(
                "tsc: cannot use the cache directory ({err}); checking without incremental build info"
            )),
        }
    }

    std::thread::scope(|scope| {
        let probe = manifest_version.is_none().then(|| {
            scope.spawn(|| discover::probe_version(&tool, ctx.workspace.root(), ctx.deadline))
        });
        for (tsconfig, n_files) in &projects {
            if process::remaining(ctx.deadline).is_none() {
                run.set_status(
                    AnalyzerStatus::TimedOut,
                    format!(
                        "the time budget ran out before {tsconfig} could be checked ({} project(s) in all)",
                        projects.len()
                    ),
                );
                break;
            }
            tracing::debug!(tsconfig, n_files, "tsc: checking project");
            let build_info = build_info_dir
                .as_deref()
                .map(|dir| dir.join(build_info_name(tsconfig)));
            check_project(ctx, &tool, tsconfig, build_info.as_deref(), &mut run);
        }
        run.report.version =
            manifest_version.or_else(|| probe.and_then(|handle| handle.join().ok().flatten()));
    });
    run
}

/// Checks one project and adds its findings, warnings and status to `run`.
fn check_project(
    ctx: &ToolContext<'_>,
    tool: &Tool,
    tsconfig: &str,
    build_info: Option<&Path>,
    run: &mut ToolRun,
) {
    let base = ToolCommand::new(&tool.path, ctx.workspace.root())
        .args(["--noEmit", "--pretty", "false", "-p"])
        .arg(tsconfig);
    let command = match build_info {
        Some(path) => base
            .clone()
            .args(["--incremental", "--tsBuildInfoFile"])
            .arg(path),
        None => base.clone(),
    };
    let Some(mut output) = ctx.execute(&command, run) else {
        return;
    };
    let mut parsed = parse_output(&String::from_utf8_lossy(&output.stdout));
    if build_info.is_some() && rejects_incremental_flags(&parsed.global) {
        run.report.warnings.push(format!(
            "tsc: this compiler rejects --incremental/--tsBuildInfoFile; {tsconfig} was checked without them"
        ));
        let Some(retry) = ctx.execute(&base, run) else {
            return;
        };
        output = retry;
        parsed = parse_output(&String::from_utf8_lossy(&output.stdout));
    }
    run.report.warnings.extend(stderr_warnings(
        "tsc",
        &output.stderr,
        output.stderr_truncated,
    ));
    if output.stdout_truncated {
        run.report.warnings.push(format!(
            "tsc: the output of {tsconfig} exceeded {} bytes; later diagnostics were not read",
            ctx.config.max_output_bytes
        ));
    }

    match output.exit {
        Exit::Cancelled => {
            run.set_status(
                AnalyzerStatus::Cancelled,
                format!("tsc on {tsconfig} was stopped: the review was cancelled"),
            );
            return;
        }
        Exit::TimedOut => {
            run.set_status(
                AnalyzerStatus::TimedOut,
                format!(
                    "tsc ran past its time limit on {tsconfig} and its process tree was killed"
                ),
            );
            return;
        }
        Exit::Signal(_) => {
            run.set_status(
                AnalyzerStatus::Failed,
                format!("tsc {} on {tsconfig}", describe_exit(output.exit)),
            );
            return;
        }
        Exit::Code(_) => {}
    }
    let global_errors: Vec<&Diagnostic> = parsed
        .global
        .iter()
        .filter(|d| d.category == "error")
        .collect();
    if let Some(first) = global_errors.first() {
        run.set_status(
            AnalyzerStatus::Failed,
            format!(
                "tsc could not check {tsconfig}: TS{}: {}",
                first.code, first.message
            ),
        );
    } else if output.exit != Exit::Code(0) && parsed.located.is_empty() {
        // tsc reports problems as diagnostics; a failure without any is a crash (a missing
        // node, an exception), and its stderr says why.
        let detail = first_lines(&output.stderr)
            .or_else(|| first_lines(&output.stdout))
            .unwrap_or_else(|| "no output".to_string());
        run.set_status(
            AnalyzerStatus::Failed,
            format!(
                "tsc {} on {tsconfig} without reporting diagnostics: {detail}",
                describe_exit(output.exit)
            ),
        );
    }
    for diagnostic in parsed.located {
        run.report.findings_reported += 1;
        let Ok(path) = ctx.workspace.relative(&diagnostic.file, "") else {
            run.outside_workspace += 1;
            continue;
        };
        run.findings
            .push(finding(ctx, diagnostic, path.as_str().to_string()));
    }
}

fn finding(ctx: &ToolContext<'_>, diagnostic: Diagnostic, path: String) -> Finding {
    let severity = match diagnostic.category.as_str() {
        "error" => ctx.config.tsc.severity,
        "warning" => Severity::Medium,
        _ => Severity::Low,
    };
    let title = diagnostic
        .message
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect::<String>();
    let mut location = Location::line(path, diagnostic.line);
    location.start_column = Some(diagnostic.column);
    Finding::new(
        format!("tsc/TS{}", diagnostic.code),
        severity,
        ctx.config.tsc.category,
        Source::Tsc,
        title,
        location,
    )
    .with_confidence(CONFIDENCE)
    .with_message(diagnostic.message)
    .with_evidence(format!(
        "TypeScript {} TS{}",
        diagnostic.category, diagnostic.code
    ))
    .with_impact(
        "The TypeScript compiler rejects this code; it may fail at runtime or break the build.",
    )
    .with_recommendation(
        "Fix the type error, or narrow the types so the compiler can prove the code is correct.",
    )
}

/// The projects to check, keyed by tsconfig path, with the number of changed files each owns.
fn owning_projects(ctx: &ToolContext<'_>) -> BTreeMap<String, usize> {
    let mut projects = BTreeMap::new();
    let root = ctx.workspace.root();
    if ctx.files.is_empty() && ctx.whole_workspace {
        if root.join(TSCONFIG).is_file() {
            projects.insert(TSCONFIG.to_string(), 0);
        }
        return projects;
    }
    for file in ctx.files {
        let owner = if file_name(file) == TSCONFIG {
            Some(file.clone())
        } else if is_checked_file(file) {
            nearest_tsconfig(root, file)
        } else {
            None
        };
        if let Some(owner) = owner {
            *projects.entry(owner).or_insert(0) += 1;
        }
    }
    projects
}

/// The `tsconfig.json` nearest above `file` (repository-relative), up to the root.
fn nearest_tsconfig(root: &Path, file: &str) -> Option<String> {
    let mut dir = Path::new(file).parent();
    while let Some(current) = dir {
        let candidate = current.join(TSCONFIG);
        if root.join(&candidate).is_file() {
            return candidate.to_str().map(|p| p.replace('\\', "/"));
        }
        dir = current.parent();
    }
    None
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_checked_file(path: &str) -> bool {
    let name = file_name(path);
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| CHECKED_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// A readable, collision-free build-info file name for a tsconfig path.
fn build_info_name(tsconfig: &str) -> String {
    let digest = Sha256::digest(tsconfig.as_bytes());
    let readable: String = tsconfig
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(80)
        .collect();
    format!(
        "{readable}-{:02x}{:02x}{:02x}{:02x}.tsbuildinfo",
        digest[0], digest[1], digest[2], digest[3]
    )
}

fn rejects_incremental_flags(global: &[Diagnostic]) -> bool {
    global.iter().any(|d| {
        (d.code == 5023 || d.code == 5025 || d.code == 6369)
            && (d.message.contains("incremental") || d.message.contains("tsBuildInfoFile"))
    })
}

fn first_lines(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    (!lines.is_empty()).then(|| lines.join(" | ").chars().take(500).collect())
}

/// One diagnostic as the compiler printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Diagnostic {
    /// As printed (relative to the working directory, or absolute); empty when global.
    file: String,
    line: u32,
    column: u32,
    /// `error`, `warning`, `message` or `suggestion`.
    category: String,
    code: u32,
    /// The first line, then continuation lines (relative indentation kept).
    message: String,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    located: Vec<Diagnostic>,
    global: Vec<Diagnostic>,
}

static CLASSIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<cat>error|warning|message|suggestion) TS(?P<code>\d+): (?P<msg>.*)$",
    )
    .expect("valid regex")
});
static PRETTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+) - (?P<cat>error|warning|message|suggestion) TS(?P<code>\d+): (?P<msg>.*)$",
    )
    .expect("valid regex")
});
static GLOBAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<cat>error|warning|message|suggestion) TS(?P<code>\d+): (?P<msg>.*)$")
        .expect("valid regex")
});
static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*[A-Za-z]").expect("valid regex"));

/// Parses tsc's output. Lines that are neither diagnostics nor continuations (pretty mode's code
/// frames and summaries) are skipped.
fn parse_output(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    // Which list the diagnostic being continued sits in; `None` after a blank line.
    let mut open: Option<bool> = None;
    for raw in text.lines() {
        let line = ANSI.replace_all(raw.trim_end_matches('\r'), "");
        let line = line.as_ref();
        if line.trim().is_empty() {
            open = None;
            continue;
        }
        if let Some(caps) = CLASSIC.captures(line).or_else(|| PRETTY.captures(line)) {
            let (Ok(line_no), Ok(column), Ok(code)) = (
                caps["line"].parse::<u32>(),
                caps["col"].parse::<u32>(),
                caps["code"].parse::<u32>(),
            ) else {
                open = None;
                continue;
            };
            parsed.located.push(Diagnostic {
                file: caps["file"].to_string(),
                line: line_no.max(1),
                column: column.max(1),
                category: caps["cat"].to_string(),
                code,
                message: caps["msg"].trim_end().to_string(),
            });
            open = Some(true);
        } else if let Some(caps) = GLOBAL.captures(line) {
            let Ok(code) = caps["code"].parse::<u32>() else {
                open = None;
                continue;
            };
            parsed.global.push(Diagnostic {
                file: String::new(),
                line: 0,
                column: 0,
                category: caps["cat"].to_string(),
                code,
                message: caps["msg"].trim_end().to_string(),
            });
            open = Some(false);
        } else if line.starts_with([' ', '\t']) {
            let target = match open {
                Some(true) => parsed.located.last_mut(),
                Some(false) => parsed.global.last_mut(),
                None => None,
            };
            if let Some(diagnostic) = target {
                // tsc indents each level of a message chain by two spaces; keep the nesting
                // relative to the first line.
                let continuation = line.strip_prefix("  ").unwrap_or(line).trim_end();
                diagnostic.message.push('\n');
                diagnostic.message.push_str(continuation);
            }
        } else {
            open = None;
        }
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tsc --noEmit --pretty false` of TypeScript 5.9 (trailing newline).
    const CLASSIC_OUTPUT: &str = "\
src/a.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.
src/a.ts(5,3): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.
src/b.ts(3,7): error TS2322: Type '{ a: { b: number; }; }' is not assignable to type '{ a: { b: string; }; }'.
  The types of 'a.b' are incompatible between these types.
    Type 'number' is not assignable to type 'string'.
";

    /// The same from the TypeScript 7 native compiler: CRLF-safe, no final newline.
    const NATIVE_OUTPUT: &str = "src/a.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.\r\nsrc/b.ts(3,7): error TS2322: Type '{ a: { b: number; }; }' is not assignable to type '{ a: { b: string; }; }'.\n  The types of 'a.b' are incompatible between these types.\n    Type 'number' is not assignable to type 'string'.";

    /// `--pretty` output of TypeScript 7 (colours, code frames, related information).
    const PRETTY_OUTPUT: &str = "\x1b[96msrc/a.ts\x1b[0m:\x1b[93m3\x1b[0m:\x1b[93m49\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'number' is not assignable to type 'string'.

\x1b[7m3\x1b[0m export const y: Big = { a: \"s\", b: { c: 1, d: { e: 5 } } };
\x1b[7m \x1b[0m \x1b[91m                                                ~\x1b[0m

  \x1b[96msrc/a.ts\x1b[0m:\x1b[93m2\x1b[0m:\x1b[93m49\x1b[0m - The expected type comes from property 'e' which is declared here on type '{ e: string; }'
    \x1b[7m2\x1b[0m interface Big { a: string; b: { c: number; d: { e: string } } }

\x1b[96msrc/b.ts\x1b[0m:\x1b[93m3\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType '{ a: { b: number; }; }' is not assignable to type '{ a: { b: string; }; }'.
  The types of 'a.b' are incompatible between these types.

Found 2 errors in 2 files.
";

    #[test]
    fn classic_output_with_continuation_lines() {
        let parsed = parse_output(CLASSIC_OUTPUT);
        assert!(parsed.global.is_empty());
        assert_eq!(parsed.located.len(), 3);
        let last = &parsed.located[2];
        assert_eq!(
            (last.file.as_str(), last.line, last.column),
            ("src/b.ts", 3, 7)
        );
        assert_eq!(last.code, 2322);
        assert_eq!(
            last.message,
            "Type '{ a: { b: number; }; }' is not assignable to type '{ a: { b: string; }; }'.\n\
             The types of 'a.b' are incompatible between these types.\n  \
             Type 'number' is not assignable to type 'string'."
        );
        assert_eq!(parsed.located[1].code, 2345);
    }

    #[test]
    fn native_output_parses_the_same() {
        let native = parse_output(NATIVE_OUTPUT);
        let classic = parse_output(CLASSIC_OUTPUT);
        assert_eq!(native.located[0], classic.located[0]);
        assert_eq!(native.located[1], classic.located[2]);
    }

    #[test]
    fn pretty_output_skips_frames_and_related_information() {
        let parsed = parse_output(PRETTY_OUTPUT);
        assert_eq!(parsed.located.len(), 2, "{parsed:#?}");
        assert_eq!((parsed.located[0].line, parsed.located[0].column), (3, 49));
        assert_eq!(
            parsed.located[0].message,
            "Type 'number' is not assignable to type 'string'."
        );
        assert!(parsed.located[1].message.ends_with("between these types."));
    }

    #[test]
    fn global_diagnostics_are_kept_apart() {
        let parsed = parse_output(
            "error TS18003: No inputs were found in config file '/w/tsconfig.json'.\n\
             tsconfig.json(1,40): error TS5023: Unknown compiler option 'bogus'.\n",
        );
        assert_eq!(parsed.global.len(), 1);
        assert_eq!(parsed.global[0].code, 18003);
        assert_eq!(parsed.located[0].file, "tsconfig.json");
        assert!(rejects_incremental_flags(
            &parse_output("error TS5023: Unknown compiler option '--incremental'.").global
        ));
        assert!(!rejects_incremental_flags(&parsed.global));
    }

    #[test]
    fn paths_with_parentheses_and_spaces() {
        let parsed = parse_output(
            "src/my dir (v2)/a.ts(10,2): warning TS6133: 'x' is declared but never used.",
        );
        let diagnostic = &parsed.located[0];
        assert_eq!(diagnostic.file, "src/my dir (v2)/a.ts");
        assert_eq!((diagnostic.line, diagnostic.column), (10, 2));
        assert_eq!(diagnostic.category, "warning");
    }

    #[test]
    fn junk_never_panics_or_invents_diagnostics() {
        for text in [
            "",
            "\n\n",
            "  indented orphan",
            "a.ts(99999999999,1): error TS1: overflow",
            "a.ts(1,1): error TSx: not a code",
            "Found 3 errors.",
        ] {
            let parsed = parse_output(text);
            assert!(
                parsed.located.is_empty() && parsed.global.is_empty(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn nearest_tsconfig_owns_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for config in ["tsconfig.json", "packages/a/tsconfig.json"] {
            let path = root.join(config);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        assert_eq!(
            nearest_tsconfig(root, "packages/a/src/x.ts").as_deref(),
            Some("packages/a/tsconfig.json")
        );
        assert_eq!(
            nearest_tsconfig(root, "packages/b/src/y.ts").as_deref(),
            Some("tsconfig.json")
        );
        assert_eq!(
            nearest_tsconfig(root, "z.ts").as_deref(),
            Some("tsconfig.json")
        );
        assert!(is_checked_file("a/b.TSX"));
        assert!(!is_checked_file("a/b.rs"));
        assert!(!is_checked_file("Makefile"));
        assert_ne!(
            build_info_name("a/tsconfig.json"),
            build_info_name("a_tsconfig.json")
        );
    }
}
