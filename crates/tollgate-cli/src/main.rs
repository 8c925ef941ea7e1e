//! The `tollgate` command. Parses arguments, runs one command, maps the outcome to an exit code:
//! 0 pass, 1 gate failed, 2 usage or runtime error.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI owns stdout (reports) and stderr (messages)"
)]

/// Every message to stderr may quote untrusted text (paths, refs, model or API answers), so std's
/// `eprintln!` is shadowed for the whole crate by one that passes the text through
/// [`tollgate::ci_log::neutralize`]: nothing can run as a workflow command in a CI log or drive
/// the terminal. Defined before the modules so they all use it.
macro_rules! eprintln {
    () => {
        ::std::eprintln!()
    };
    ($($arg:tt)*) => {
        ::std::eprintln!("{}", ::tollgate::ci_log::neutralize(&::std::format!($($arg)*)))
    };
}

mod args;
mod commands;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: faster than glibc's malloc for the index's many small allocations (the workspace
/// manifest gives the figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    init_logging(cli.verbose);
    commands::store::set_flag(cli.store);
    match commands::run(cli.command) {
        Ok(status) => status.into(),
        Err(err) => {
            // A closed pipe (`tollgate review | head`) is not an error worth reporting.
            if err.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return commands::ExitStatus::Pass.into();
            }
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            commands::ExitStatus::Error.into()
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOLLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Log lines can carry untrusted text: neutralised like every other message, so no
        // colour codes of our own either.
        .with_writer(|| tollgate::ci_log::NeutralizingWriter::new(std::io::stderr()))
        .with_ansi(false)
        .init();
}
