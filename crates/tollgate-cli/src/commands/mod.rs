//! One module per command; each turns its arguments into a core call and an exit status.

/// `println!` that ends the process quietly when stdout is a closed pipe (`tollgate … | head`)
/// instead of panicking, as `main` does for errors. Defined before the modules that use it.
macro_rules! outln {
    () => {
        $crate::commands::write_stdout_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::commands::write_stdout_line(format_args!($($arg)*))
    };
}

/// A line of human-readable output (not JSON, not a report format): it quotes stored text
/// (entries, thread ids, plan names) anyone could have written, so it passes through
/// [`tollgate::ci_log::neutralize`], as stderr does: control characters are shown escaped,
/// never sent to the terminal, and no workflow command runs.
macro_rules! textln {
    () => {
        $crate::commands::write_stdout_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::commands::write_stdout_line(format_args!(
            "{}",
            ::tollgate::ci_log::neutralize(&::std::format!($($arg)*))
        ))
    };
}

mod index;
mod init;
mod invariants;
mod learn;
mod mcp;
mod memory;
mod plan;
mod plan_authoring;
mod plan_execute;
mod plan_store;
mod replay;
mod review;
mod review_model;
mod search;
mod session;
mod sources;
pub(crate) mod store;
mod tool;

use std::path::Path;
use std::process::ExitCode;

use tollgate::config::{ConfigFile, RawLlm};

use crate::args::{Command, InvariantsCommand, ModelFlags, ModelPassFlags};

/// The exit contract of CI-facing commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the gate passed (or the command succeeded).
    Pass,
    /// 1: the gate failed.
    GateFailed,
    /// 2: usage or runtime error.
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        match status {
            ExitStatus::Pass => ExitCode::SUCCESS,
            ExitStatus::GateFailed => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
        }
    }
}

/// `--config FILE` when given, else the workspace's `tollgate.toml` when present.
pub(crate) fn config_file<'a>(config: Option<&'a Path>, repo: &'a Path) -> ConfigFile<'a> {
    match config {
        Some(path) => ConfigFile::Path(path),
        None => ConfigFile::Discover(repo),
    }
}

/// The `[llm]` layer of the model flags.
pub(crate) fn model_flags(model: &ModelFlags, passes: Option<&ModelPassFlags>) -> RawLlm {
    let mut layer = RawLlm {
        token_budget: model.token_budget,
        max_context_files: model.max_context_files,
        timeout_ms: model.llm_timeout_ms,
        time_budget_ms: model.llm_time_budget_ms,
        ..RawLlm::default()
    };
    if let Some(passes) = passes {
        layer.enable_llm = passes.enable_llm;
        layer.llm_force = passes.llm_force;
        layer.two_pass = passes.two_pass;
        layer.risk_threshold = passes.risk_threshold;
        layer.custom_instructions = passes.custom_instructions.clone();
        layer.required = passes.llm_required;
    }
    layer
}

/// One line to stdout; see [`outln!`].
#[expect(
    clippy::exit,
    reason = "output is the last thing a command does; a reader that went away ends it"
)]
pub(crate) fn write_stdout_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(err) = writeln!(std::io::stdout().lock(), "{line}") {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {err}");
        std::process::exit(2);
    }
}

pub fn run(command: Command) -> anyhow::Result<ExitStatus> {
    match command {
        Command::Review(args) => review::run(*args),
        Command::ReviewChanges(args) => review_model::changes(*args),
        Command::ReviewGit(args) => review_model::git(*args),
        Command::ReviewAuto(args) => review_model::auto(*args),
        Command::Invariants {
            command: InvariantsCommand::Check { file },
        } => invariants::check(file),
        Command::Init(args) => init::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Session { command } => session::run(command),
        Command::Index(args) => index::run(args),
        Command::Search(args) => search::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Learn { command } => learn::run(command),
        Command::Memory(args) => memory::run(args),
        Command::Tool(args) => tool::run(args),
        Command::Store { command } => store::run(command),
        Command::Sources(args) => sources::run(args),
    }
}
