//! `tollgate invariants check [FILE]`.

use std::path::PathBuf;

use tollgate::config::DEFAULT_INVARIANTS_PATH;
use tollgate::invariants;

use super::ExitStatus;

pub fn check(file: Option<PathBuf>) -> anyhow::Result<ExitStatus> {
    let path = file.unwrap_or_else(|| PathBuf::from(DEFAULT_INVARIANTS_PATH));
    match invariants::check_file(&path) {
        Ok(report) => {
            for warning in &report.warnings {
                eprintln!("warning: {warning}");
            }
            outln!(
                "{}: {} rule(s) valid, {} warning(s)",
                path.display(),
                report.rules,
                report.warnings.len()
            );
            Ok(ExitStatus::Pass)
        }
        Err(err) => {
            eprintln!("{err}");
            Ok(ExitStatus::Error)
        }
    }
}
