//! Fuzzes the diff parser: any input must parse or fail cleanly, and whatever parses must
//! survive a render → parse round trip unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate::diff::{Diff, FileStatus, LineKind, parse, render};

fuzz_target!(|data: &[u8]| {
    let Ok(diff) = parse(data.to_vec()) else {
        return;
    };
    let rendered = render(&diff);
    let reparsed = match parse(rendered.clone()) {
        Ok(reparsed) => reparsed,
        Err(err) => panic!(
            "the rendering of a parsed diff does not parse: {err}\n{}",
            String::from_utf8_lossy(&rendered)
        ),
    };
    assert_eq!(
        summary(&diff),
        summary(&reparsed),
        "round trip changed the model"
    );
    assert_eq!(
        render(&reparsed),
        rendered,
        "rendering is not a fixed point"
    );
});

/// Everything a diff says, apart from where in its bytes it says it.
type FileSummary = (
    Option<String>,
    Option<String>,
    FileStatus,
    Option<u8>,
    Option<u32>,
    Option<u32>,
    bool,
    Vec<HunkSummary>,
);
type HunkSummary = (u32, u32, u32, u32, String, Vec<LineSummary>);
type LineSummary = (LineKind, Option<u32>, Option<u32>, bool, Vec<u8>);

fn summary(diff: &Diff) -> Vec<FileSummary> {
    diff.files()
        .iter()
        .map(|file| {
            let hunks = file
                .hunks
                .iter()
                .map(|hunk| {
                    let lines = hunk
                        .lines
                        .iter()
                        .map(|line| {
                            (
                                line.kind,
                                line.old_line,
                                line.new_line,
                                line.no_newline_at_eof,
                                diff.line_bytes(line).to_vec(),
                            )
                        })
                        .collect();
                    (
                        hunk.old_start,
                        hunk.old_count,
                        hunk.new_start,
                        hunk.new_count,
                        hunk.section.clone(),
                        lines,
                    )
                })
                .collect();
            (
                file.old_path.clone(),
                file.new_path.clone(),
                file.status,
                file.similarity,
                file.old_mode,
                file.new_mode,
                file.binary,
                hunks,
            )
        })
        .collect()
}
