//! `tollgate-action`: the GitHub Action front end. Reads the workflow's environment and event,
//! reviews the pull request (or push) with the core, writes SARIF, the job summary and the step
//! outputs, posts what the core's publish plan says through the REST API, and exits with the
//! gate's verdict: 0 pass, 1 gate failed, 2 usage or runtime error.
//!
//! A failure to post never changes the verdict: it is reported as a warning and the exit code
//! still follows the gate.
//!
//! `--mode post` (`INPUT_MODE=post`) is stage 2 of the fork pattern: it reviews nothing and
//! posts the artifact stage 1 wrote, after validating it as untrusted (exit 2 when refused,
//! else 0).

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the action writes workflow commands to stdout and messages to stderr"
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
mod artifact;
mod event;
mod github;
mod learnings;
mod outputs;
mod post;
mod post_mode;
mod run;
mod token;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = args::Args::parse();
    init_logging();
    let outcome = match args.mode {
        args::Mode::Review => run::run(args),
        args::Mode::Post => post_mode::run(&args),
    };
    match outcome {
        Ok(verdict) => verdict.into(),
        Err(err) => {
            // The message may quote paths or refs from the event; keep it on one line so it
            // cannot start a workflow command.
            let mut message = format!("{err}");
            for cause in err.chain().skip(1) {
                message.push_str(&format!(": {cause}"));
            }
            println!(
                "::error title=Tollgate could not run::{}",
                // `##[` is defused too: GitHub's escapes leave it, and it runs anywhere in a line.
                tollgate::ci_log::neutralize(&tollgate::report::escape_data(&message))
            );
            eprintln!(
                "tollgate-action: error: {}",
                message.replace(['\r', '\n'], " ")
            );
            run::Verdict::Error.into()
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOLLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Log lines can carry untrusted text: neutralised like every other message, so no
        // colour codes of our own either.
        .with_writer(|| tollgate::ci_log::NeutralizingWriter::new(std::io::stderr()))
        .with_ansi(false)
        .without_time()
        .init();
}
