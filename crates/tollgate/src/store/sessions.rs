//! Reactive review sessions as stored: the session row with its state and the lease of the
//! process running it, its steps, and its findings (one row per fingerprint, so a finding two
//! steps report is kept once).
//!
//! Every state change is one transaction that checks the state it starts from, so two processes
//! acting on one session (a CLI `pause` beside the MCP server running it) never interleave
//! half-changes. The process running a session holds a lease (a random token, its pid and a
//! heartbeat); writes of step results are refused once the lease is gone, so a process thought
//! dead cannot overwrite the work of the one that took over. Times are Unix milliseconds.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::StoreError;
use crate::session::record::{
    Claim, FindingRow, Lease, LeaseRecord, NewSession, SessionRecord, SessionState, StepRecord,
    StepState, StepUsage, StoredFinding, Transition,
};

/// Stores a new session (state `queued`) and its steps.
pub fn insert(tx: &Connection, new: &NewSession) -> Result<(), StoreError> {
    tx.execute(
                "INSERT INTO review_sessions (id, commit_hash, base_ref, base_sha, head_sha, title,
                     author, additions, deletions, changed_files, max_workers, max_attempts, state,
                     warnings, created_at, last_activity_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'queued', ?13, ?14, ?14)",
                params![
                    new.id,
                    new.commit_hash,
                    new.base_ref,
                    new.base_sha,
                    new.head_sha,
                    new.title,
                    new.author,
                    new.additions.map(to_i64),
                    new.deletions.map(to_i64),
                    to_json(&new.changed_files),
                    new.max_workers,
                    new.max_attempts,
                    to_json(&new.warnings),
                    new.now,
                ],
            )?;
    for (idx, step) in new.steps.iter().enumerate() {
        tx.execute(
            "INSERT INTO review_session_steps (session_id, idx, kind, files, changed_lines, state)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'pending')",
            params![
                new.id,
                idx as i64,
                step.kind,
                to_json(&step.files),
                to_i64(step.changed_lines)
            ],
        )?;
    }
    Ok(())
}

pub fn get(tx: &Connection, id: &str) -> Result<Option<SessionRecord>, StoreError> {
    get_session(tx, id)
}

/// Every session, newest first.
pub fn list(tx: &Connection) -> Result<Vec<SessionRecord>, StoreError> {
    let mut stmt = tx.prepare(&format!(
        "SELECT {SESSION_COLUMNS} FROM review_sessions ORDER BY created_at DESC, id"
    ))?;
    let rows = stmt.query_map([], session_from_row)?;
    rows.map(|row| row.map_err(StoreError::from)?)
        .collect::<Result<Vec<_>, _>>()
}

pub fn steps(tx: &Connection, id: &str) -> Result<Vec<StepRecord>, StoreError> {
    let mut stmt = tx.prepare(
                "SELECT idx, kind, files, changed_lines, state, attempts, last_error, next_attempt_at,
                        worker, started_at, finished_at, duration_ms, findings_reported, findings_new,
                        llm_passes, input_tokens, output_tokens, cost_usd, cache_hits, gate_reasons
                 FROM review_session_steps WHERE session_id = ?1 ORDER BY idx",
            )?;
    let rows = stmt.query_map([id], step_from_row)?;
    rows.map(|row| row.map_err(StoreError::from)?)
        .collect::<Result<Vec<_>, _>>()
}

/// The session's findings in the order they were found.
pub fn findings(tx: &Connection, id: &str) -> Result<Vec<StoredFinding>, StoreError> {
    let mut stmt = tx.prepare(
        "SELECT step_idx, fingerprint, severity, finding FROM review_session_findings
                 WHERE session_id = ?1 ORDER BY rowid",
    )?;
    let rows = stmt.query_map([id], |row| {
        Ok(StoredFinding {
            step_idx: row.get(0)?,
            fingerprint: row.get(1)?,
            severity: row.get(2)?,
            json: row.get(3)?,
        })
    })?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(StoreError::from)
}

/// Moves the session from one of `from` to `to`, recording `reason` (kept as is when
/// `None`). A final state also releases the lease only if nobody holds one: a running owner
/// notices and releases it itself.
pub fn transition(
    tx: &Connection,
    id: &str,
    from: &[SessionState],
    to: SessionState,
    reason: Option<&str>,
    now: i64,
) -> Result<Transition, StoreError> {
    let Some(session) = get_session(tx, id)? else {
        return Ok(Transition::NotFound);
    };
    if !from.contains(&session.state) {
        return Ok(Transition::Refused(session.state));
    }
    tx.execute(
        "UPDATE review_sessions SET state = ?2, reason = coalesce(?3, reason),
                     last_activity_at = ?4,
                     finished_at = CASE WHEN ?5 THEN ?4 ELSE finished_at END
                 WHERE id = ?1",
        params![id, to.as_str(), reason, now, to.is_final()],
    )?;
    Ok(Transition::Done(Box::new(
        get_session(tx, id)?.ok_or_else(vanished)?,
    )))
}

/// Takes the lease of a `queued` session, or of one whose owner is gone (`is_dead`), and
/// marks it running. Steps left `running` by a dead owner go back to `pending`.
pub fn claim(
    tx: &Connection,
    id: &str,
    lease: &Lease,
    now: i64,
    is_dead: &dyn Fn(&LeaseRecord) -> bool,
) -> Result<Claim, StoreError> {
    let Some(session) = get_session(tx, id)? else {
        return Ok(Claim::NotFound);
    };
    if !matches!(session.state, SessionState::Queued | SessionState::Running) {
        return Ok(Claim::Refused(session.state));
    }
    take_lease(tx, &session, lease, now, is_dead)
}

/// Resumes a `paused` session: its state becomes `running`; when no live process holds its
/// lease the caller takes it (and must run the session).
pub fn resume(
    tx: &Connection,
    id: &str,
    lease: &Lease,
    now: i64,
    is_dead: &dyn Fn(&LeaseRecord) -> bool,
) -> Result<Claim, StoreError> {
    let Some(session) = get_session(tx, id)? else {
        return Ok(Claim::NotFound);
    };
    if session.state != SessionState::Paused {
        return Ok(Claim::Refused(session.state));
    }
    tx.execute(
        "UPDATE review_sessions SET state = 'running', reason = NULL, last_activity_at = ?2
                 WHERE id = ?1",
        params![id, now],
    )?;
    take_lease(tx, &session, lease, now, is_dead)
}

/// Renews the lease and accounts `active_ms`; `None` when the caller no longer holds it.
pub fn heartbeat(
    tx: &Connection,
    id: &str,
    token: &str,
    now: i64,
    add_active_ms: i64,
) -> Result<Option<SessionRecord>, StoreError> {
    let n = tx.execute(
        "UPDATE review_sessions SET heartbeat_at = ?3, active_ms = active_ms + ?4
                 WHERE id = ?1 AND owner_token = ?2",
        params![id, token, now, add_active_ms.max(0)],
    )?;
    if n == 0 {
        return Ok(None);
    }
    get_session(tx, id)
}

/// Gives the lease up, unless the session is `running` again (resumed while its owner was
/// winding down): then the owner carries on and `false` is returned.
pub fn release(
    tx: &Connection,
    id: &str,
    token: &str,
    now: i64,
    add_active_ms: i64,
) -> Result<bool, StoreError> {
    let n = tx.execute(
        "UPDATE review_sessions SET owner_token = NULL, owner_pid = NULL, owner_boot = NULL,
                     heartbeat_at = NULL, active_ms = active_ms + ?4, last_activity_at = ?3
                 WHERE id = ?1 AND owner_token = ?2 AND state != 'running'",
        params![id, token, now, add_active_ms.max(0)],
    )?;
    Ok(n > 0)
}

/// Marks a step running on `worker`; `false` when the caller lost the lease or the session
/// is no longer running.
pub fn step_begin(
    tx: &Connection,
    id: &str,
    idx: u32,
    token: &str,
    worker: u32,
    now: i64,
) -> Result<bool, StoreError> {
    if !owns_running(tx, id, token)? {
        return Ok(false);
    }
    tx.execute(
        "UPDATE review_session_steps SET state = 'running', worker = ?3, started_at = ?4
                 WHERE session_id = ?1 AND idx = ?2 AND state = 'pending'",
        params![id, idx, worker, now],
    )?;
    tx.execute(
        "UPDATE review_sessions SET last_activity_at = ?2 WHERE id = ?1",
        params![id, now],
    )?;
    Ok(true)
}

/// Records a finished step and its findings in one transaction. Findings whose fingerprint
/// the session already has are skipped; returns how many were new, `None` when the caller
/// lost the lease (nothing is written).
#[allow(
    clippy::too_many_arguments,
    reason = "one row's columns, written at once"
)]
pub fn step_complete(
    tx: &Connection,
    id: &str,
    idx: u32,
    token: &str,
    duration_ms: f64,
    usage: StepUsage,
    findings: &[FindingRow],
    gate_reasons: &[String],
    now: i64,
) -> Result<Option<u64>, StoreError> {
    let gate_reasons = serde_json::to_string(gate_reasons).map_err(|err| StoreError::Corrupt {
        what: "step gate_reasons".to_string(),
        reason: err.to_string(),
    })?;

    if !owns(tx, id, token)? {
        return Ok(None);
    }
    let mut n_new = 0u64;
    for finding in findings {
        n_new += tx.execute(
            "INSERT OR IGNORE INTO review_session_findings
                         (session_id, fingerprint, step_idx, severity, finding)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, finding.fingerprint, idx, finding.severity, finding.json],
        )? as u64;
    }
    tx.execute(
        "UPDATE review_session_steps SET state = 'completed', finished_at = ?3,
                     duration_ms = ?4, findings_reported = ?5, findings_new = ?6,
                     attempts = attempts + 1, llm_passes = ?7, input_tokens = ?8,
                     output_tokens = ?9, cost_usd = ?10, cache_hits = ?11, gate_reasons = ?12
                 WHERE session_id = ?1 AND idx = ?2",
        params![
            id,
            idx,
            now,
            duration_ms,
            findings.len() as i64,
            to_i64(n_new),
            to_i64(usage.llm_passes),
            to_i64(usage.input_tokens),
            to_i64(usage.output_tokens),
            usage.cost_usd,
            to_i64(usage.cache_hits),
            gate_reasons,
        ],
    )?;
    tx.execute(
        "UPDATE review_sessions SET last_activity_at = ?2 WHERE id = ?1",
        params![id, now],
    )?;
    Ok(Some(n_new))
}

/// Records a failed attempt. With `retry_at` the step waits for another attempt; without,
/// it has failed for good and so has a running or paused session, with `error` as reason.
/// `false` when the caller lost the lease.
pub fn step_fail(
    tx: &Connection,
    id: &str,
    idx: u32,
    token: &str,
    error: &str,
    retry_at: Option<i64>,
    now: i64,
) -> Result<bool, StoreError> {
    if !owns(tx, id, token)? {
        return Ok(false);
    }
    let state = if retry_at.is_some() {
        "pending"
    } else {
        "failed"
    };
    tx.execute(
        "UPDATE review_session_steps SET state = ?3, attempts = attempts + 1,
                     last_error = ?4, next_attempt_at = ?5, finished_at = ?6
                 WHERE session_id = ?1 AND idx = ?2",
        params![id, idx, state, error, retry_at.unwrap_or(0), now],
    )?;
    if retry_at.is_none() {
        tx.execute(
            "UPDATE review_sessions SET state = 'failed', reason = ?2, finished_at = ?3,
                         last_activity_at = ?3
                     WHERE id = ?1 AND state IN ('running', 'paused')",
            params![id, error, now],
        )?;
    } else {
        tx.execute(
            "UPDATE review_sessions SET last_activity_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
    }
    Ok(true)
}

/// Completes a running session whose steps are all completed; `false` otherwise.
pub fn complete(tx: &Connection, id: &str, token: &str, now: i64) -> Result<bool, StoreError> {
    if !owns_running(tx, id, token)? {
        return Ok(false);
    }
    let unfinished: i64 = tx.query_row(
        "SELECT count(*) FROM review_session_steps
                 WHERE session_id = ?1 AND state != 'completed'",
        [id],
        |row| row.get(0),
    )?;
    if unfinished > 0 {
        return Ok(false);
    }
    tx.execute(
        "UPDATE review_sessions SET state = 'completed', finished_at = ?2,
                     last_activity_at = ?2
                 WHERE id = ?1",
        params![id, now],
    )?;
    Ok(true)
}

/// Sessions that are `queued` or `running` but whose owner is gone (`is_dead`), or that no
/// process claimed within `unclaimed_ms`, become `paused` with a reason saying so; their
/// unfinished steps run again on resume. Returns their ids.
pub fn reap(
    tx: &Connection,
    now: i64,
    unclaimed_ms: i64,
    is_dead: &dyn Fn(&LeaseRecord) -> bool,
) -> Result<Vec<String>, StoreError> {
    let candidates: Vec<SessionRecord> = {
        let mut stmt = tx.prepare(&format!(
            "SELECT {SESSION_COLUMNS} FROM review_sessions
                     WHERE state IN ('queued', 'running')"
        ))?;
        let rows = stmt.query_map([], session_from_row)?;
        rows.map(|row| row.map_err(StoreError::from)?)
            .collect::<Result<Vec<_>, _>>()?
    };
    let mut reaped = Vec::new();
    for session in candidates {
        let reason = match &session.lease {
            Some(lease) if is_dead(lease) => format!(
                "the process running it (pid {}) stopped: no heartbeat since {} ms ago; \
                         resume the session to run its unfinished steps",
                lease.pid,
                now - lease.heartbeat_at
            ),
            Some(_) => continue,
            None if now - session.last_activity_at > unclaimed_ms => format!(
                "no process ran it for {} ms; resume the session to run its unfinished steps",
                now - session.last_activity_at
            ),
            None => continue,
        };
        tx.execute(
            "UPDATE review_sessions SET state = 'paused', reason = ?2, owner_token = NULL,
                         owner_pid = NULL, owner_boot = NULL, heartbeat_at = NULL,
                         last_activity_at = ?3
                     WHERE id = ?1",
            params![session.id, reason, now],
        )?;
        tx.execute(
            "UPDATE review_session_steps SET state = 'pending', worker = NULL
                     WHERE session_id = ?1 AND state = 'running'",
            [&session.id],
        )?;
        reaped.push(session.id);
    }
    Ok(reaped)
}

/// Deletes final sessions (with their steps and findings) that ended before `cutoff`.
pub fn expire(tx: &Connection, cutoff: i64) -> Result<usize, StoreError> {
    Ok(tx.execute(
        "DELETE FROM review_sessions
                 WHERE state IN ('completed', 'failed', 'cancelled') AND finished_at < ?1",
        [cutoff],
    )?)
}

const SESSION_COLUMNS: &str = "id, commit_hash, base_ref, base_sha, head_sha, title, author,
    additions, deletions, changed_files, max_workers, max_attempts, state, reason, warnings,
    created_at, started_at, finished_at, last_activity_at, active_ms, owner_token, owner_pid,
    owner_boot, heartbeat_at";

fn get_session(tx: &Connection, id: &str) -> Result<Option<SessionRecord>, StoreError> {
    tx.query_row(
        &format!("SELECT {SESSION_COLUMNS} FROM review_sessions WHERE id = ?1"),
        [id],
        session_from_row,
    )
    .optional()?
    .transpose()
}

/// Row → record; the inner error reports stored text that does not parse.
fn session_from_row(row: &Row<'_>) -> rusqlite::Result<Result<SessionRecord, StoreError>> {
    let state: String = row.get(12)?;
    let changed_files: String = row.get(9)?;
    let warnings: String = row.get(14)?;
    let token: Option<String> = row.get(20)?;
    let lease = match token {
        Some(token) => Some(LeaseRecord {
            token,
            pid: row.get::<_, Option<u32>>(21)?.unwrap_or(0),
            boot: row.get(22)?,
            heartbeat_at: row.get::<_, Option<i64>>(23)?.unwrap_or(0),
        }),
        None => None,
    };
    let record = SessionRecord {
        id: row.get(0)?,
        commit_hash: row.get(1)?,
        base_ref: row.get(2)?,
        base_sha: row.get(3)?,
        head_sha: row.get(4)?,
        title: row.get(5)?,
        author: row.get(6)?,
        additions: row.get::<_, Option<i64>>(7)?.map(to_u64),
        deletions: row.get::<_, Option<i64>>(8)?.map(to_u64),
        changed_files: Vec::new(),
        max_workers: row.get(10)?,
        max_attempts: row.get(11)?,
        state: SessionState::Queued,
        reason: row.get(13)?,
        warnings: Vec::new(),
        created_at: row.get(15)?,
        started_at: row.get(16)?,
        finished_at: row.get(17)?,
        last_activity_at: row.get(18)?,
        active_ms: row.get(19)?,
        lease,
    };
    Ok(finish_session(record, &state, &changed_files, &warnings))
}

fn step_from_row(row: &Row<'_>) -> rusqlite::Result<Result<StepRecord, StoreError>> {
    let files: String = row.get(2)?;
    let state: String = row.get(4)?;
    let usage = StepUsage {
        llm_passes: row.get::<_, Option<i64>>(14)?.map_or(0, to_u64),
        input_tokens: row.get::<_, Option<i64>>(15)?.map_or(0, to_u64),
        output_tokens: row.get::<_, Option<i64>>(16)?.map_or(0, to_u64),
        cost_usd: row.get::<_, Option<f64>>(17)?.unwrap_or(0.0),
        cache_hits: row.get::<_, Option<i64>>(18)?.map_or(0, to_u64),
    };
    let record = StepRecord {
        idx: row.get(0)?,
        kind: row.get(1)?,
        files: Vec::new(),
        changed_lines: to_u64(row.get(3)?),
        state: StepState::Pending,
        attempts: row.get(5)?,
        last_error: row.get(6)?,
        next_attempt_at: row.get(7)?,
        worker: row.get(8)?,
        started_at: row.get(9)?,
        finished_at: row.get(10)?,
        duration_ms: row.get(11)?,
        findings_reported: row.get::<_, Option<i64>>(12)?.map(to_u64),
        findings_new: row.get::<_, Option<i64>>(13)?.map(to_u64),
        usage,
        gate_reasons: None,
    };
    let gate_reasons: Option<String> = row.get(19)?;
    Ok(finish_step(record, &state, &files, gate_reasons.as_deref()))
}

/// The parts of a session row stored as text, parsed.
pub(super) fn finish_session(
    mut record: SessionRecord,
    state: &str,
    changed_files: &str,
    warnings: &str,
) -> Result<SessionRecord, StoreError> {
    record.state = state
        .parse()
        .map_err(|reason| corrupt("session state", reason))?;
    record.changed_files = from_json(changed_files, "session changed_files")?;
    record.warnings = from_json(warnings, "session warnings")?;
    Ok(record)
}

pub(super) fn finish_step(
    mut record: StepRecord,
    state: &str,
    files: &str,
    gate_reasons: Option<&str>,
) -> Result<StepRecord, StoreError> {
    record.state = state
        .parse()
        .map_err(|reason| corrupt("step state", reason))?;
    record.files = from_json(files, "step files")?;
    record.gate_reasons = gate_reasons
        .map(|text| from_json(text, "step gate_reasons"))
        .transpose()?;
    Ok(record)
}

fn take_lease(
    tx: &Connection,
    session: &SessionRecord,
    lease: &Lease,
    now: i64,
    is_dead: &dyn Fn(&LeaseRecord) -> bool,
) -> Result<Claim, StoreError> {
    if let Some(owner) = &session.lease
        && owner.token != lease.token
        && !is_dead(owner)
    {
        return Ok(Claim::Owned { pid: owner.pid });
    }
    tx.execute(
        "UPDATE review_sessions SET state = 'running', owner_token = ?2, owner_pid = ?3,
             owner_boot = ?4, heartbeat_at = ?5, last_activity_at = ?5,
             started_at = coalesce(started_at, ?5)
         WHERE id = ?1",
        params![session.id, lease.token, lease.pid, lease.boot, now],
    )?;
    // Nobody else runs the session now, so a step marked running was interrupted.
    tx.execute(
        "UPDATE review_session_steps SET state = 'pending', worker = NULL
         WHERE session_id = ?1 AND state = 'running'",
        [&session.id],
    )?;
    Ok(Claim::Claimed(Box::new(
        get_session(tx, &session.id)?.ok_or_else(vanished)?,
    )))
}

fn owns(tx: &Connection, id: &str, token: &str) -> Result<bool, StoreError> {
    Ok(tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM review_sessions WHERE id = ?1 AND owner_token = ?2)",
        [id, token],
        |row| row.get(0),
    )?)
}

fn owns_running(tx: &Connection, id: &str, token: &str) -> Result<bool, StoreError> {
    Ok(tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM review_sessions
                       WHERE id = ?1 AND owner_token = ?2 AND state = 'running')",
        [id, token],
        |row| row.get(0),
    )?)
}

pub(super) fn vanished() -> StoreError {
    corrupt(
        "session",
        "the row disappeared inside its own transaction".into(),
    )
}

fn corrupt(what: &str, reason: String) -> StoreError {
    StoreError::Corrupt {
        what: what.to_string(),
        reason,
    }
}

pub(super) fn to_json(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".to_string())
}

fn from_json(text: &str, what: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|err| corrupt(what, err.to_string()))
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::record::NewStep;

    fn new_session(id: &str, now: i64) -> NewSession {
        NewSession {
            id: id.into(),
            commit_hash: "head".into(),
            base_ref: "main".into(),
            base_sha: "b".repeat(40),
            head_sha: "h".repeat(40),
            title: Some("t".into()),
            author: None,
            additions: Some(3),
            deletions: None,
            changed_files: vec!["a.rs".into(), "b.rs".into()],
            max_workers: 2,
            max_attempts: 3,
            warnings: vec![],
            steps: vec![
                NewStep {
                    kind: "files".into(),
                    files: vec!["a.rs".into()],
                    changed_lines: 2,
                },
                NewStep {
                    kind: "files".into(),
                    files: vec!["b.rs".into()],
                    changed_lines: 1,
                },
            ],
            now,
        }
    }

    fn lease(token: &str) -> Lease {
        Lease {
            token: token.into(),
            pid: 7,
            boot: None,
        }
    }

    fn row(fingerprint: &str) -> FindingRow {
        FindingRow {
            fingerprint: fingerprint.into(),
            severity: "HIGH".into(),
            json: "{}".into(),
        }
    }

    crate::backend_tests! {
    fn a_session_runs_through_its_steps_and_dedupes_findings(store) {
        store
            .transact(|tx| tx.session_insert(&new_session("s1", 100)))
            .unwrap();
        let alive = |_: &LeaseRecord| false;
        let Claim::Claimed(session) = store
            .transact(|tx| tx.session_claim("s1", &lease("t1"), 110, &alive))
            .unwrap()
        else {
            panic!("not claimed");
        };
        assert_eq!(session.state, SessionState::Running);
        assert_eq!(session.started_at, Some(110));
        // A second process cannot take a live lease.
        assert_eq!(
            store
                .transact(|tx| tx.session_claim("s1", &lease("t2"), 111, &alive))
                .unwrap(),
            Claim::Owned { pid: 7 }
        );
        assert!(
            store
                .transact(|tx| tx.session_step_begin("s1", 0, "t1", 0, 120))
                .unwrap()
        );
        let usage = StepUsage::default();
        let n_new = store
            .transact(|tx| {
                tx.session_step_complete("s1",
                    0,
                    "t1",
                    5.0,
                    usage,
                    &[row("f1"), row("f2")],
                    &[],
                    130,
                )
            })
            .unwrap();
        assert_eq!(n_new, Some(2));
        assert!(!store.transact(|tx| tx.session_complete("s1", "t1", 131)).unwrap());
        assert!(
            store
                .transact(|tx| tx.session_step_begin("s1", 1, "t1", 1, 132))
                .unwrap()
        );
        let n_new = store
            .transact(|tx| {
                tx.session_step_complete("s1",
                    1,
                    "t1",
                    5.0,
                    usage,
                    &[row("f2"), row("f3")],
                    &[],
                    140,
                )
            })
            .unwrap();
        assert_eq!(n_new, Some(1), "f2 is already stored");
        // Someone without the lease writes nothing.
        assert_eq!(
            store
                .transact(|tx| tx.session_step_complete("s1", 1, "other", 1.0, usage, &[row("f9")], &[], 141))
                .unwrap(),
            None
        );
        assert!(store.transact(|tx| tx.session_complete("s1", "t1", 150)).unwrap());
        let findings = store.snapshot(|tx| tx.session_findings("s1")).unwrap();
        let prints: Vec<&str> = findings.iter().map(|f| f.fingerprint.as_str()).collect();
        assert_eq!(prints, ["f1", "f2", "f3"]);
        assert_eq!(findings[2].step_idx, 1);
        let session = store.snapshot(|tx| tx.session("s1")).unwrap().unwrap();
        assert_eq!(session.state, SessionState::Completed);
        assert_eq!(session.finished_at, Some(150));
        // Final: no transition out, and release works.
        assert!(store.transact(|tx| tx.session_release("s1", "t1", 151, 40)).unwrap());
        assert_eq!(
            store
                .transact(|tx| tx.session_transition("s1",
                    &[SessionState::Paused],
                    SessionState::Running,
                    None,
                    152
                ))
                .unwrap(),
            Transition::Refused(SessionState::Completed)
        );
        assert_eq!(store.transact(|tx| tx.session_expire(150)).unwrap(), 0);
        assert_eq!(store.transact(|tx| tx.session_expire(151)).unwrap(), 1);
        assert_eq!(store.snapshot(|tx| tx.session("s1")).unwrap(), None);
        assert!(
            store
                .snapshot(|tx| tx.session_findings("s1"))
                .unwrap()
                .is_empty()
        );
    }

    fn a_dead_owner_is_reaped_and_its_running_steps_rerun(store) {
        store.transact(|tx| tx.session_insert(&new_session("s2", 0))).unwrap();
        let alive = |_: &LeaseRecord| false;
        store
            .transact(|tx| tx.session_claim("s2", &lease("t1"), 1, &alive))
            .unwrap();
        assert!(
            store
                .transact(|tx| tx.session_step_begin("s2", 0, "t1", 0, 2))
                .unwrap()
        );
        assert!(
            store
                .transact(|tx| tx.session_reap(3, 1000, &alive))
                .unwrap()
                .is_empty()
        );
        let dead = |_: &LeaseRecord| true;
        assert_eq!(store.transact(|tx| tx.session_reap(4, 1000, &dead)).unwrap(), ["s2"]);
        let session = store.snapshot(|tx| tx.session("s2")).unwrap().unwrap();
        assert_eq!(session.state, SessionState::Paused);
        assert!(session.reason.unwrap().contains("pid 7"));
        assert_eq!(session.lease, None);
        let steps = store.snapshot(|tx| tx.session_steps("s2")).unwrap();
        assert_eq!(steps[0].state, StepState::Pending);
        // The old owner's late write is refused.
        assert_eq!(
            store
                .transact(|tx| tx.session_step_complete("s2",
                    0,
                    "t1",
                    1.0,
                    StepUsage::default(),
                    &[],
                    &[],
                    5
                ))
                .unwrap(),
            None
        );
        let Claim::Claimed(session) = store
            .transact(|tx| tx.session_resume("s2", &lease("t2"), 6, &alive))
            .unwrap()
        else {
            panic!("resume did not hand over the lease");
        };
        assert_eq!(session.state, SessionState::Running);
        assert_eq!(session.reason, None);
    }

    fn the_last_failed_attempt_fails_the_session_with_the_reason(store) {
        store.transact(|tx| tx.session_insert(&new_session("s3", 0))).unwrap();
        let alive = |_: &LeaseRecord| false;
        store
            .transact(|tx| tx.session_claim("s3", &lease("t"), 1, &alive))
            .unwrap();
        assert!(
            store
                .transact(|tx| tx.session_step_fail("s3", 1, "t", "boom", Some(50), 2))
                .unwrap()
        );
        let steps = store.snapshot(|tx| tx.session_steps("s3")).unwrap();
        assert_eq!(
            (steps[1].state, steps[1].attempts, steps[1].next_attempt_at),
            (StepState::Pending, 1, 50)
        );
        assert!(
            store
                .transact(|tx| tx.session_step_fail("s3", 1, "t", "boom again", None, 60))
                .unwrap()
        );
        let session = store.snapshot(|tx| tx.session("s3")).unwrap().unwrap();
        assert_eq!(session.state, SessionState::Failed);
        assert_eq!(session.reason.as_deref(), Some("boom again"));
    }
    }
}
