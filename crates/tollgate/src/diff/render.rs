//! Renders a [`Diff`] model back to git-style unified diff bytes.
//!
//! The output is what `git diff` would print for the model, and [`parse`](crate::diff::parse)
//! reads it back to an equal model (apart from `diff_line`): the round-trip property test and
//! the fuzz target hold the two to that. Where git's format is ambiguous the renderer picks
//! the unambiguous spelling: paths that need it are C-quoted, and the `diff --git` line quotes
//! both names when they differ and contain spaces. Blob ids are unknown, so no `index` line is
//! written.

use crate::diff::model::{Diff, FileDiff, FileStatus, Hunk, LineKind};

/// Renders `diff` as a git-style unified diff.
pub fn render(diff: &Diff) -> Vec<u8> {
    let mut out = Vec::with_capacity(diff.as_bytes().len() + 64 * diff.files().len());
    for file in diff.files() {
        render_file(diff, file, &mut out);
    }
    out
}

fn render_file(diff: &Diff, file: &FileDiff, out: &mut Vec<u8>) {
    let old = file
        .old_path
        .as_deref()
        .or(file.new_path.as_deref())
        .unwrap_or("");
    let new = file
        .new_path
        .as_deref()
        .or(file.old_path.as_deref())
        .unwrap_or("");

    // Unquoted, `a/X b/Y` can only be split reliably when X == Y or neither has a space.
    let force_quotes = old != new && (old.contains(' ') || new.contains(' '));
    out.extend_from_slice(b"diff --git ");
    push_path(out, "a/", old, force_quotes);
    out.push(b' ');
    push_path(out, "b/", new, force_quotes);
    out.push(b'\n');

    if let Some(mode) = file.old_mode {
        let header = if file.status == FileStatus::Deleted {
            "deleted file mode"
        } else {
            "old mode"
        };
        out.extend_from_slice(format!("{header} {mode:06o}\n").as_bytes());
    }
    if let Some(mode) = file.new_mode {
        let header = if file.status == FileStatus::Added {
            "new file mode"
        } else {
            "new mode"
        };
        out.extend_from_slice(format!("{header} {mode:06o}\n").as_bytes());
    }
    if let Some(similarity) = file.similarity {
        out.extend_from_slice(format!("similarity index {similarity}%\n").as_bytes());
    }
    let moved = match file.status {
        FileStatus::Renamed => Some("rename"),
        FileStatus::Copied => Some("copy"),
        FileStatus::Added | FileStatus::Deleted | FileStatus::Modified => None,
    };
    if let Some(verb) = moved {
        out.extend_from_slice(format!("{verb} from ").as_bytes());
        push_path(out, "", old, false);
        out.extend_from_slice(format!("\n{verb} to ").as_bytes());
        push_path(out, "", new, false);
        out.push(b'\n');
    }

    let old_side = (file.status != FileStatus::Added).then_some(old);
    let new_side = (file.status != FileStatus::Deleted).then_some(new);
    if file.binary {
        out.extend_from_slice(b"Binary files ");
        push_side(out, "a/", old_side);
        out.extend_from_slice(b" and ");
        push_side(out, "b/", new_side);
        out.extend_from_slice(b" differ\n");
        return;
    }
    if file.hunks.is_empty() {
        return;
    }
    out.extend_from_slice(b"--- ");
    push_side(out, "a/", old_side);
    push_tab_after_space(out, old_side);
    out.extend_from_slice(b"\n+++ ");
    push_side(out, "b/", new_side);
    push_tab_after_space(out, new_side);
    out.push(b'\n');
    for hunk in &file.hunks {
        render_hunk(diff, hunk, out);
    }
}

fn render_hunk(diff: &Diff, hunk: &Hunk, out: &mut Vec<u8>) {
    let range = |start: u32, count: u32| {
        if count == 1 {
            start.to_string()
        } else {
            format!("{start},{count}")
        }
    };
    out.extend_from_slice(
        format!(
            "@@ -{} +{} @@",
            range(hunk.old_start, hunk.old_count),
            range(hunk.new_start, hunk.new_count)
        )
        .as_bytes(),
    );
    if !hunk.section.is_empty() {
        out.push(b' ');
        out.extend_from_slice(hunk.section.as_bytes());
    }
    out.push(b'\n');
    for line in &hunk.lines {
        out.push(match line.kind {
            LineKind::Context => b' ',
            LineKind::Added => b'+',
            LineKind::Removed => b'-',
        });
        out.extend_from_slice(diff.line_bytes(line));
        out.push(b'\n');
        if line.no_newline_at_eof {
            out.extend_from_slice(b"\\ No newline at end of file\n");
        }
    }
}

/// `/dev/null` for a side the file does not have, else the prefixed path.
fn push_side(out: &mut Vec<u8>, prefix: &str, path: Option<&str>) {
    match path {
        Some(path) => push_path(out, prefix, path, false),
        None => out.extend_from_slice(b"/dev/null"),
    }
}

/// Like git, end `---`/`+++` names containing spaces with a tab, so tools that read a
/// timestamp after a tab know where the name stops.
fn push_tab_after_space(out: &mut Vec<u8>, path: Option<&str>) {
    if path.is_some_and(|p| p.contains(' ') && !needs_quotes(p)) {
        out.push(b'\t');
    }
}

/// Writes `prefix` + `path`, C-quoted like git (`core.quotePath`) when the path has control
/// characters, quotes, backslashes or non-ASCII bytes, or when `force_quotes` asks for it.
fn push_path(out: &mut Vec<u8>, prefix: &str, path: &str, force_quotes: bool) {
    if !force_quotes && !needs_quotes(path) {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(path.as_bytes());
        return;
    }
    out.push(b'"');
    for &byte in prefix.as_bytes().iter().chain(path.as_bytes()) {
        match byte {
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            byte if !(0x20..0x7f).contains(&byte) => {
                out.extend_from_slice(format!("\\{byte:03o}").as_bytes());
            }
            byte => out.push(byte),
        }
    }
    out.push(b'"');
}

fn needs_quotes(path: &str) -> bool {
    path.bytes()
        .any(|b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::diff::parse;
    use crate::diff::testutil::{FileSpec, HunkSpec, LineSpec, arb_files, build, normalize};

    fn line(kind: LineKind, content: &[u8]) -> LineSpec {
        LineSpec {
            kind,
            content: content.to_vec(),
            no_newline_at_eof: false,
        }
    }

    fn file(status: FileStatus, old: Option<&str>, new: Option<&str>) -> FileSpec {
        FileSpec {
            old_path: old.map(str::to_owned),
            new_path: new.map(str::to_owned),
            status,
            similarity: None,
            old_mode: None,
            new_mode: None,
            binary: false,
            hunks: Vec::new(),
        }
    }

    #[test]
    fn renders_like_git() {
        let mut modified = file(FileStatus::Modified, Some("src/a b.rs"), Some("src/a b.rs"));
        modified.hunks.push(HunkSpec {
            old_start: 3,
            new_start: 3,
            section: "fn main()".to_owned(),
            lines: vec![
                line(LineKind::Context, b"keep\r"),
                line(LineKind::Removed, b"old"),
                line(LineKind::Added, b"new"),
                LineSpec {
                    no_newline_at_eof: true,
                    ..line(LineKind::Added, b"last")
                },
            ],
        });
        let mut added = file(FileStatus::Added, None, Some("t\u{e9}st \"q\".txt"));
        added.new_mode = Some(0o100755);
        added.hunks.push(HunkSpec {
            old_start: 0,
            new_start: 1,
            section: String::new(),
            lines: vec![line(LineKind::Added, b"x")],
        });
        let mut renamed = file(FileStatus::Renamed, Some("old name"), Some("new name"));
        renamed.similarity = Some(100);
        let mut binary = file(FileStatus::Deleted, Some("logo.png"), None);
        binary.binary = true;
        let mut mode = file(FileStatus::Modified, Some("run.sh"), Some("run.sh"));
        mode.old_mode = Some(0o100644);
        mode.new_mode = Some(0o100755);

        let rendered = render(&build(&[modified, added, renamed, binary, mode]));
        let expected = "diff --git a/src/a b.rs b/src/a b.rs
--- a/src/a b.rs\t
+++ b/src/a b.rs\t
@@ -3,2 +3,3 @@ fn main()
 keep\r
-old
+new
+last
\\ No newline at end of file
diff --git \"a/t\\303\\251st \\\"q\\\".txt\" \"b/t\\303\\251st \\\"q\\\".txt\"
new file mode 100755
--- /dev/null
+++ \"b/t\\303\\251st \\\"q\\\".txt\"
@@ -0,0 +1 @@
+x
diff --git \"a/old name\" \"b/new name\"
similarity index 100%
rename from old name
rename to new name
diff --git a/logo.png b/logo.png
Binary files a/logo.png and /dev/null differ
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
";
        assert_eq!(String::from_utf8_lossy(&rendered), expected);
    }

    #[test]
    fn renders_an_empty_diff_as_nothing() {
        assert!(render(&crate::diff::Diff::empty()).is_empty());
    }

    #[test]
    fn round_trips_a_real_git_diff_byte_for_byte() {
        let text = "diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@ mod x;
 a
-b
+c
 d
diff --git a/bin.dat b/bin.dat
Binary files a/bin.dat and b/bin.dat differ
";
        let diff = parse(text.as_bytes().to_vec()).expect("parses");
        assert_eq!(String::from_utf8_lossy(&render(&diff)), text);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any model git could print renders to text that parses back to the same model.
        #[test]
        fn render_then_parse_gives_the_model_back(files in arb_files()) {
            let model = build(&files);
            let rendered = render(&model);
            let parsed = match parse(rendered.clone()) {
                Ok(parsed) => parsed,
                Err(err) => {
                    return Err(TestCaseError::fail(format!(
                        "{err}\n{}",
                        String::from_utf8_lossy(&rendered)
                    )));
                }
            };
            prop_assert_eq!(normalize(&parsed), normalize(&model));
            prop_assert_eq!(render(&parsed), rendered);
        }

        /// Cutting a valid diff anywhere never panics; the parse fails or yields a prefix.
        #[test]
        fn truncated_diffs_never_panic(files in arb_files(), cut in any::<prop::sample::Index>()) {
            let rendered = render(&build(&files));
            let cut = cut.index(rendered.len() + 1);
            let _ = parse(rendered.get(..cut).unwrap_or_default().to_vec());
        }
    }
}
