//! `tollgate learn dismiss|accept|list|export`: the review-learnings ledger from the command
//! line, through the core's `api::learn` operations.

use anyhow::Context;
use tollgate::api::ApiError;
use tollgate::api::learn::{self, LearnListRequest, LearnRecordRequest};
use tollgate::findings::{Finding, ReviewResult};
use tollgate::learnings::Disposition;

use super::ExitStatus;
use crate::args::{LearnCommand, LearnListArgs, LearnRecordArgs};

pub fn run(command: LearnCommand) -> anyhow::Result<ExitStatus> {
    match command {
        LearnCommand::Dismiss(args) => record(Disposition::Dismissed, args),
        LearnCommand::Accept(args) => record(Disposition::Accepted, args),
        LearnCommand::List(args) => list(args),
        LearnCommand::Export(args) => {
            let text = if args.invariants {
                learn::learn_propose_invariants(&args.repo).map_err(api_error)?
            } else {
                learn::learn_export(&args.repo).map_err(api_error)?
            };
            outln!("{}", text.trim_end_matches('\n'));
            Ok(ExitStatus::Pass)
        }
    }
}

fn record(disposition: Disposition, args: LearnRecordArgs) -> anyhow::Result<ExitStatus> {
    let report = args.repo.join(&args.report);
    let bytes = std::fs::read(&report).with_context(|| {
        format!(
            "cannot read the report {} (write one with `tollgate review --format json --output FILE`)",
            report.display()
        )
    })?;
    let result: ReviewResult = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a JSON review report", report.display()))?;
    let wanted = args.finding.trim();
    let finding: &Finding = result
        .findings
        .iter()
        .chain(&result.dismissed)
        .find(|f| f.id == wanted || f.fingerprint == wanted)
        .with_context(|| {
            format!(
                "no finding with id or fingerprint `{}` in {}",
                wanted.escape_debug(),
                report.display()
            )
        })?;
    // Every record says who decided: `--by`, the login name, then git's identity.
    let by = args
        .by
        .or_else(|| std::env::var("USER").ok())
        .map(|by| by.trim().to_string())
        .filter(|by| !by.is_empty())
        .or_else(|| tollgate::diff::configured_user(&args.repo))
        .context(
            "cannot tell who decides: $USER is unset and git config has no user.name or user.email; pass --by NAME",
        )?;
    let request = LearnRecordRequest {
        fingerprint: finding.fingerprint.clone(),
        rule_id: finding.rule_id.clone(),
        path: finding.location.file.clone(),
        start_line: finding.location.start_line,
        end_line: Some(finding.location.end_line),
        reason: args.reason,
        by,
        scope: args.scope,
    };
    let done = learn::learn_record(
        &args.repo,
        disposition,
        request,
        &tollgate::clock::now_rfc3339(),
    )
    .map_err(api_error)?;
    eprintln!(
        "{} {} at {}:{} in {} ({} record(s)); commit the file to share it",
        disposition,
        finding.rule_id,
        finding.location.file,
        finding.location.start_line,
        done.ledger,
        done.n_records
    );
    mirror(&args.repo);
    outln!("{}", done.record.to_line());
    Ok(ExitStatus::Pass)
}

/// Keeps the store's `learnings` thread in step with the ledger, so memory searches find the
/// decisions. The ledger is already written: a failure here is a warning, not an error.
fn mirror(repo: &std::path::Path) {
    let synced = super::store::open(repo)
        .map_err(|err| format!("{err:#}"))
        .and_then(|store| {
            let embedder = tollgate::workspace::HashedEmbedder;
            let memory = tollgate::memory::Memory::new(&store, &embedder);
            tollgate::api::learn_mirror::learn_sync(repo, &memory).map_err(|err| err.to_string())
        });
    if let Err(err) = synced {
        eprintln!("warning: the learnings were not mirrored into the knowledge store: {err}");
    }
}

fn list(args: LearnListArgs) -> anyhow::Result<ExitStatus> {
    let disposition = args
        .disposition
        .as_deref()
        .map(str::parse::<Disposition>)
        .transpose()?;
    let response = learn::learn_list(
        &args.repo,
        &LearnListRequest {
            disposition,
            rule_id: args.rule,
            path_prefix: None,
            limit: args.limit,
        },
    )
    .map_err(api_error)?;
    outln!("{}", serde_json::to_string_pretty(&response)?);
    Ok(ExitStatus::Pass)
}

fn api_error(err: ApiError) -> anyhow::Error {
    anyhow::anyhow!("[{}] {}", err.code.as_str(), err.message)
}
