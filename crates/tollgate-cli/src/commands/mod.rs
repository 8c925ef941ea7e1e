//! One module per command; each turns its arguments into a core call and an exit status.

mod index;
mod init;
mod invariants;
mod mcp;
mod plan;
mod plan_authoring;
mod plan_execute;
mod plan_store;
mod review;
mod search;
mod session;

use std::process::ExitCode;

use crate::args::{Command, InvariantsCommand};

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

pub fn run(command: Command) -> anyhow::Result<ExitStatus> {
    match command {
        Command::Review(args) => review::run(*args),
        Command::Invariants {
            command: InvariantsCommand::Check { file },
        } => invariants::check(file),
        Command::Init(args) => init::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Session { command } => session::run(command),
        Command::Index(args) => index::run(args),
        Command::Search(args) => search::run(args),
    }
}
