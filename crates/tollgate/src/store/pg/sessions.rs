//! Review sessions on PostgreSQL: `store::sessions`' SQL and checked state changes in
//! PostgreSQL's dialect. Every change reads the state it starts from inside the same write
//! transaction, and writers run one at a time (the store's write lock), as on SQLite.

use postgres::Row;

use super::super::StoreError;
use super::super::repo::{SessionReads, SessionWrites};
use super::super::sessions::{finish_session, finish_step, to_json, vanished};
use super::tx::{PgTx, i64_of, u64_of};
use crate::session::record::{
    Claim, FindingRow, Lease, LeaseRecord, NewSession, SessionRecord, SessionState, StepRecord,
    StepUsage, StoredFinding, Transition,
};

const SESSION_COLUMNS: &str = "id, commit_hash, base_ref, base_sha, head_sha, title, author,
    additions, deletions, changed_files, max_workers, max_attempts, state, reason, warnings,
    created_at, started_at, finished_at, last_activity_at, active_ms, owner_token, owner_pid,
    owner_boot, heartbeat_at";

fn small(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

fn session_row(row: &Row) -> Result<SessionRecord, StoreError> {
    let state: String = row.try_get(12)?;
    let changed_files: String = row.try_get(9)?;
    let warnings: String = row.try_get(14)?;
    let token: Option<String> = row.try_get(20)?;
    let lease = match token {
        Some(token) => Some(LeaseRecord {
            token,
            pid: row.try_get::<_, Option<i64>>(21)?.map_or(0, small),
            boot: row.try_get(22)?,
            heartbeat_at: row.try_get::<_, Option<i64>>(23)?.unwrap_or(0),
        }),
        None => None,
    };
    let record = SessionRecord {
        id: row.try_get(0)?,
        commit_hash: row.try_get(1)?,
        base_ref: row.try_get(2)?,
        base_sha: row.try_get(3)?,
        head_sha: row.try_get(4)?,
        title: row.try_get(5)?,
        author: row.try_get(6)?,
        additions: row.try_get::<_, Option<i64>>(7)?.map(u64_of),
        deletions: row.try_get::<_, Option<i64>>(8)?.map(u64_of),
        changed_files: Vec::new(),
        max_workers: small(row.try_get(10)?),
        max_attempts: small(row.try_get(11)?),
        state: SessionState::Queued,
        reason: row.try_get(13)?,
        warnings: Vec::new(),
        created_at: row.try_get(15)?,
        started_at: row.try_get(16)?,
        finished_at: row.try_get(17)?,
        last_activity_at: row.try_get(18)?,
        active_ms: row.try_get(19)?,
        lease,
    };
    finish_session(record, &state, &changed_files, &warnings)
}

fn step_row(row: &Row) -> Result<StepRecord, StoreError> {
    let files: String = row.try_get(2)?;
    let state: String = row.try_get(4)?;
    let usage = StepUsage {
        llm_passes: row.try_get::<_, Option<i64>>(14)?.map_or(0, u64_of),
        input_tokens: row.try_get::<_, Option<i64>>(15)?.map_or(0, u64_of),
        output_tokens: row.try_get::<_, Option<i64>>(16)?.map_or(0, u64_of),
        cost_usd: row.try_get::<_, Option<f64>>(17)?.unwrap_or(0.0),
        cache_hits: row.try_get::<_, Option<i64>>(18)?.map_or(0, u64_of),
    };
    let record = StepRecord {
        idx: small(row.try_get(0)?),
        kind: row.try_get(1)?,
        files: Vec::new(),
        changed_lines: u64_of(row.try_get(3)?),
        state: crate::session::record::StepState::Pending,
        attempts: small(row.try_get(5)?),
        last_error: row.try_get(6)?,
        next_attempt_at: row.try_get(7)?,
        worker: row.try_get::<_, Option<i64>>(8)?.map(small),
        started_at: row.try_get(9)?,
        finished_at: row.try_get(10)?,
        duration_ms: row.try_get(11)?,
        findings_reported: row.try_get::<_, Option<i64>>(12)?.map(u64_of),
        findings_new: row.try_get::<_, Option<i64>>(13)?.map(u64_of),
        usage,
        gate_reasons: None,
    };
    let gate_reasons: Option<String> = row.try_get(19)?;
    finish_step(record, &state, &files, gate_reasons.as_deref())
}

impl PgTx<'_, '_> {
    fn get_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.row(
            &format!("SELECT {SESSION_COLUMNS} FROM review_sessions WHERE id = $1"),
            &[&id],
        )?
        .as_ref()
        .map(session_row)
        .transpose()
    }

    fn owns(&self, id: &str, token: &str, running: bool) -> Result<bool, StoreError> {
        let row = self.one(
            "SELECT EXISTS(SELECT 1 FROM review_sessions
                           WHERE id = $1 AND owner_token = $2 AND (NOT $3 OR state = 'running'))",
            &[&id, &token, &running],
        )?;
        Ok(row.try_get(0)?)
    }

    fn touch(&self, id: &str, now: i64) -> Result<(), StoreError> {
        self.exec(
            "UPDATE review_sessions SET last_activity_at = $2 WHERE id = $1",
            &[&id, &now],
        )?;
        Ok(())
    }

    fn take_lease(
        &self,
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
        self.exec(
            "UPDATE review_sessions SET state = 'running', owner_token = $2, owner_pid = $3,
                 owner_boot = $4, heartbeat_at = $5, last_activity_at = $5,
                 started_at = coalesce(started_at, $5)
             WHERE id = $1",
            &[
                &session.id,
                &lease.token,
                &i64::from(lease.pid),
                &lease.boot,
                &now,
            ],
        )?;
        // Nobody else runs the session now, so a step marked running was interrupted.
        self.exec(
            "UPDATE review_session_steps SET state = 'pending', worker = NULL
             WHERE session_id = $1 AND state = 'running'",
            &[&session.id],
        )?;
        Ok(Claim::Claimed(Box::new(
            self.get_session(&session.id)?.ok_or_else(vanished)?,
        )))
    }
}

impl SessionReads for PgTx<'_, '_> {
    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.get_session(id)
    }

    fn sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.rows(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM review_sessions ORDER BY created_at DESC, id COLLATE \"C\""
            ),
            &[],
        )?
        .iter()
        .map(session_row)
        .collect()
    }

    fn session_steps(&self, id: &str) -> Result<Vec<StepRecord>, StoreError> {
        self.rows(
            "SELECT idx, kind, files, changed_lines, state, attempts, last_error, next_attempt_at,
                    worker, started_at, finished_at, duration_ms, findings_reported, findings_new,
                    llm_passes, input_tokens, output_tokens, cost_usd, cache_hits, gate_reasons
             FROM review_session_steps WHERE session_id = $1 ORDER BY idx",
            &[&id],
        )?
        .iter()
        .map(step_row)
        .collect()
    }

    fn session_findings(&self, id: &str) -> Result<Vec<StoredFinding>, StoreError> {
        self.rows(
            "SELECT step_idx, fingerprint, severity, finding FROM review_session_findings
             WHERE session_id = $1 ORDER BY seq",
            &[&id],
        )?
        .iter()
        .map(|row| {
            Ok(StoredFinding {
                step_idx: small(row.try_get(0)?),
                fingerprint: row.try_get(1)?,
                severity: row.try_get(2)?,
                json: row.try_get(3)?,
            })
        })
        .collect()
    }
}

impl SessionWrites for PgTx<'_, '_> {
    fn session_insert(&self, new: &NewSession) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO review_sessions (id, commit_hash, base_ref, base_sha, head_sha, title,
                 author, additions, deletions, changed_files, max_workers, max_attempts, state,
                 warnings, created_at, last_activity_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'queued', $13, $14, $14)",
            &[
                &new.id,
                &new.commit_hash,
                &new.base_ref,
                &new.base_sha,
                &new.head_sha,
                &new.title,
                &new.author,
                &new.additions.map(i64_of),
                &new.deletions.map(i64_of),
                &to_json(&new.changed_files),
                &i64::from(new.max_workers),
                &i64::from(new.max_attempts),
                &to_json(&new.warnings),
                &new.now,
            ],
        )?;
        for (idx, step) in new.steps.iter().enumerate() {
            self.exec(
                "INSERT INTO review_session_steps (session_id, idx, kind, files, changed_lines, state)
                 VALUES ($1, $2, $3, $4, $5, 'pending')",
                &[
                    &new.id,
                    &i64_of(idx as u64),
                    &step.kind,
                    &to_json(&step.files),
                    &i64_of(step.changed_lines),
                ],
            )?;
        }
        Ok(())
    }

    fn session_transition(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        reason: Option<&str>,
        now: i64,
    ) -> Result<Transition, StoreError> {
        let Some(session) = self.get_session(id)? else {
            return Ok(Transition::NotFound);
        };
        if !from.contains(&session.state) {
            return Ok(Transition::Refused(session.state));
        }
        self.exec(
            "UPDATE review_sessions SET state = $2, reason = coalesce($3, reason),
                 last_activity_at = $4,
                 finished_at = CASE WHEN $5 THEN $4 ELSE finished_at END
             WHERE id = $1",
            &[&id, &to.as_str(), &reason, &now, &to.is_final()],
        )?;
        Ok(Transition::Done(Box::new(
            self.get_session(id)?.ok_or_else(vanished)?,
        )))
    }

    fn session_claim(
        &self,
        id: &str,
        lease: &Lease,
        now: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Claim, StoreError> {
        let Some(session) = self.get_session(id)? else {
            return Ok(Claim::NotFound);
        };
        if !matches!(session.state, SessionState::Queued | SessionState::Running) {
            return Ok(Claim::Refused(session.state));
        }
        self.take_lease(&session, lease, now, is_dead)
    }

    fn session_resume(
        &self,
        id: &str,
        lease: &Lease,
        now: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Claim, StoreError> {
        let Some(session) = self.get_session(id)? else {
            return Ok(Claim::NotFound);
        };
        if session.state != SessionState::Paused {
            return Ok(Claim::Refused(session.state));
        }
        self.exec(
            "UPDATE review_sessions SET state = 'running', reason = NULL, last_activity_at = $2
             WHERE id = $1",
            &[&id, &now],
        )?;
        self.take_lease(&session, lease, now, is_dead)
    }

    fn session_heartbeat(
        &self,
        id: &str,
        token: &str,
        now: i64,
        add_active_ms: i64,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let n = self.exec(
            "UPDATE review_sessions SET heartbeat_at = $3, active_ms = active_ms + $4
             WHERE id = $1 AND owner_token = $2",
            &[&id, &token, &now, &add_active_ms.max(0)],
        )?;
        if n == 0 {
            return Ok(None);
        }
        self.get_session(id)
    }

    fn session_release(
        &self,
        id: &str,
        token: &str,
        now: i64,
        add_active_ms: i64,
    ) -> Result<bool, StoreError> {
        let n = self.exec(
            "UPDATE review_sessions SET owner_token = NULL, owner_pid = NULL, owner_boot = NULL,
                 heartbeat_at = NULL, active_ms = active_ms + $4, last_activity_at = $3
             WHERE id = $1 AND owner_token = $2 AND state != 'running'",
            &[&id, &token, &now, &add_active_ms.max(0)],
        )?;
        Ok(n > 0)
    }

    fn session_step_begin(
        &self,
        id: &str,
        idx: u32,
        token: &str,
        worker: u32,
        now: i64,
    ) -> Result<bool, StoreError> {
        if !self.owns(id, token, true)? {
            return Ok(false);
        }
        self.exec(
            "UPDATE review_session_steps SET state = 'running', worker = $3, started_at = $4
             WHERE session_id = $1 AND idx = $2 AND state = 'pending'",
            &[&id, &i64::from(idx), &i64::from(worker), &now],
        )?;
        self.touch(id, now)?;
        Ok(true)
    }

    fn session_step_complete(
        &self,
        id: &str,
        idx: u32,
        token: &str,
        duration_ms: f64,
        usage: StepUsage,
        findings: &[FindingRow],
        gate_reasons: &[String],
        now: i64,
    ) -> Result<Option<u64>, StoreError> {
        let gate_reasons =
            serde_json::to_string(gate_reasons).map_err(|err| StoreError::Corrupt {
                what: "step gate_reasons".to_string(),
                reason: err.to_string(),
            })?;
        if !self.owns(id, token, false)? {
            return Ok(None);
        }
        let mut n_new = 0u64;
        for finding in findings {
            n_new += self.exec(
                "INSERT INTO review_session_findings (session_id, fingerprint, step_idx, severity, finding)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[
                    &id,
                    &finding.fingerprint,
                    &i64::from(idx),
                    &finding.severity,
                    &finding.json,
                ],
            )?;
        }
        self.exec(
            "UPDATE review_session_steps SET state = 'completed', finished_at = $3,
                 duration_ms = $4, findings_reported = $5, findings_new = $6,
                 attempts = attempts + 1, llm_passes = $7, input_tokens = $8,
                 output_tokens = $9, cost_usd = $10, cache_hits = $11, gate_reasons = $12
             WHERE session_id = $1 AND idx = $2",
            &[
                &id,
                &i64::from(idx),
                &now,
                &duration_ms,
                &i64_of(findings.len() as u64),
                &i64_of(n_new),
                &i64_of(usage.llm_passes),
                &i64_of(usage.input_tokens),
                &i64_of(usage.output_tokens),
                &usage.cost_usd,
                &i64_of(usage.cache_hits),
                &gate_reasons,
            ],
        )?;
        self.touch(id, now)?;
        Ok(Some(n_new))
    }

    fn session_step_fail(
        &self,
        id: &str,
        idx: u32,
        token: &str,
        error: &str,
        retry_at: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError> {
        if !self.owns(id, token, false)? {
            return Ok(false);
        }
        let state = if retry_at.is_some() {
            "pending"
        } else {
            "failed"
        };
        self.exec(
            "UPDATE review_session_steps SET state = $3, attempts = attempts + 1,
                 last_error = $4, next_attempt_at = $5, finished_at = $6
             WHERE session_id = $1 AND idx = $2",
            &[
                &id,
                &i64::from(idx),
                &state,
                &error,
                &retry_at.unwrap_or(0),
                &now,
            ],
        )?;
        if retry_at.is_none() {
            self.exec(
                "UPDATE review_sessions SET state = 'failed', reason = $2, finished_at = $3,
                     last_activity_at = $3
                 WHERE id = $1 AND state IN ('running', 'paused')",
                &[&id, &error, &now],
            )?;
        } else {
            self.touch(id, now)?;
        }
        Ok(true)
    }

    fn session_complete(&self, id: &str, token: &str, now: i64) -> Result<bool, StoreError> {
        if !self.owns(id, token, true)? {
            return Ok(false);
        }
        let unfinished: i64 = self
            .one(
                "SELECT count(*) FROM review_session_steps
                 WHERE session_id = $1 AND state != 'completed'",
                &[&id],
            )?
            .try_get(0)?;
        if unfinished > 0 {
            return Ok(false);
        }
        self.exec(
            "UPDATE review_sessions SET state = 'completed', finished_at = $2, last_activity_at = $2
             WHERE id = $1",
            &[&id, &now],
        )?;
        Ok(true)
    }

    fn session_reap(
        &self,
        now: i64,
        unclaimed_ms: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Vec<String>, StoreError> {
        let candidates = self
            .rows(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM review_sessions WHERE state IN ('queued', 'running')"
                ),
                &[],
            )?
            .iter()
            .map(session_row)
            .collect::<Result<Vec<_>, _>>()?;
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
            self.exec(
                "UPDATE review_sessions SET state = 'paused', reason = $2, owner_token = NULL,
                     owner_pid = NULL, owner_boot = NULL, heartbeat_at = NULL,
                     last_activity_at = $3
                 WHERE id = $1",
                &[&session.id, &reason, &now],
            )?;
            self.exec(
                "UPDATE review_session_steps SET state = 'pending', worker = NULL
                 WHERE session_id = $1 AND state = 'running'",
                &[&session.id],
            )?;
            reaped.push(session.id);
        }
        Ok(reaped)
    }

    fn session_expire(&self, cutoff: i64) -> Result<usize, StoreError> {
        let n = self.exec(
            "DELETE FROM review_sessions
             WHERE state IN ('completed', 'failed', 'cancelled') AND finished_at < $1",
            &[&cutoff],
        )?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}
