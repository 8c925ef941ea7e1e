//! The runner's files: step outputs (`$GITHUB_OUTPUT`) and the job summary
//! (`$GITHUB_STEP_SUMMARY`). Outside a runner (no variable set) they are skipped.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Appends `name=value` lines to the step-output file. A value with a line break uses the
/// runner's `name<<DELIMITER` form, with a delimiter that does not occur in the value.
pub fn write_outputs(file: Option<&Path>, outputs: &[(&str, String)]) -> anyhow::Result<()> {
    let Some(file) = file else {
        return Ok(());
    };
    let mut text = String::new();
    for (name, value) in outputs {
        if value.contains(['\n', '\r']) {
            let mut delimiter = String::from("TOLLGATE_EOF");
            while value.contains(&delimiter) {
                delimiter.push('_');
            }
            text.push_str(&format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"));
        } else {
            text.push_str(&format!("{name}={value}\n"));
        }
    }
    append(file, &text).with_context(|| format!("cannot write step outputs to {}", file.display()))
}

/// Appends the job summary.
pub fn write_summary(file: Option<&Path>, markdown: &str) -> anyhow::Result<()> {
    let Some(file) = file else {
        return Ok(());
    };
    append(file, markdown)
        .with_context(|| format!("cannot write the job summary to {}", file.display()))
}

fn append(file: &Path, text: &str) -> std::io::Result<()> {
    let mut handle = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    handle.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        handle.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_use_delimiters_for_multi_line_values() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        std::fs::write(&file, "earlier=1\n").unwrap();
        write_outputs(
            Some(&file),
            &[
                ("should-fail", "true".into()),
                ("odd", "a\nTOLLGATE_EOF\nb".into()),
            ],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "earlier=1\nshould-fail=true\nodd<<TOLLGATE_EOF_\na\nTOLLGATE_EOF\nb\nTOLLGATE_EOF_\n"
        );
        write_outputs(None, &[("x", "y".into())]).unwrap();
    }
}
