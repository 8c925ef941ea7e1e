//! The store's seam: one repository trait per concern, speaking domain values, never SQL.
//!
//! A caller gets them inside one transaction of [`Store::transact`](super::Store::transact)
//! (`&dyn WriteTx`: every read and write) or [`Store::snapshot`](super::Store::snapshot)
//! (`&dyn ReadTx`: reads only, so nothing can be written into a snapshot that is thrown away).
//! Opening, committing and rolling back the transaction is the store's business; composing
//! several operations into one atomic change (read the current state, decide, write) is the
//! caller's. Each backend implements every trait: SQLite here (the functions of `plans`,
//! `apply_journal`, `sessions` and `llm_cache` on one connection), PostgreSQL in `pg`. The
//! contract both keep is one test suite run on each (`store::testing`).

use rusqlite::Connection;

use super::StoreError;
use super::llm_cache::{self, CachedResponse, LlmCacheStats};
use super::plans::{
    self, AppliedChangeRow, ApprovalRow, EventRow, NewPlan, PlanFacts, PlanFilter, PlanRow,
    StepStateRow, VersionMeta, VersionRow,
};
use super::{apply_journal, apply_journal::JournalRow, sessions};
use crate::session::record::{
    Claim, FindingRow, Lease, LeaseRecord, NewSession, SessionRecord, SessionState, StepRecord,
    StepUsage, StoredFinding, Transition,
};

/// Reading saved plans: index rows, versions, the event log, approvals, step states and the
/// record of applied file changes.
pub trait PlanReads {
    /// The index row of `id` (deleted plans only when asked).
    fn plan_by_id(&self, id: &str, include_deleted: bool) -> Result<Option<PlanRow>, StoreError>;
    /// The live plan called `name`.
    fn plan_by_name(&self, name: &str) -> Result<Option<PlanRow>, StoreError>;
    /// Plans, most recently updated first.
    fn list_plans(&self, filter: &PlanFilter<'_>) -> Result<Vec<PlanRow>, StoreError>;
    /// One version, with its content.
    fn version(&self, plan_id: &str, version: u32) -> Result<Option<VersionRow>, StoreError>;
    /// Versions, newest first, at most `limit`; contents only when `with_content`.
    fn versions(
        &self,
        plan_id: &str,
        limit: usize,
        with_content: bool,
    ) -> Result<Vec<VersionRow>, StoreError>;
    fn version_count(&self, plan_id: &str) -> Result<u32, StoreError>;
    /// The newest `limit` events, oldest first.
    fn events(&self, plan_id: &str, limit: usize) -> Result<Vec<EventRow>, StoreError>;
    fn approval(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError>;
    /// A plan's approvals, oldest first.
    fn approvals(&self, plan_id: &str) -> Result<Vec<ApprovalRow>, StoreError>;
    /// Every step state of a plan, by step number.
    fn step_states(&self, plan_id: &str) -> Result<Vec<StepStateRow>, StoreError>;
    /// Applied changes of a plan, in application order.
    fn applied_changes(&self, plan_id: &str) -> Result<Vec<AppliedChangeRow>, StoreError>;
    /// The applied changes of one batch, in application order.
    fn applied_changes_of_batch(&self, batch_id: &str)
    -> Result<Vec<AppliedChangeRow>, StoreError>;
}

/// Changing saved plans. A live name is unique: a second plan with it is
/// [`StoreError::Conflict`].
pub trait PlanWrites: PlanReads {
    /// Creates a plan with its first version and returns its index row.
    fn insert_plan(&self, plan: &NewPlan<'_>) -> Result<PlanRow, StoreError>;
    /// Appends a version (the next number) and makes it current; returns its number.
    fn append_version(
        &self,
        plan_id: &str,
        facts: PlanFacts<'_>,
        plan_json: &str,
        meta: VersionMeta<'_>,
    ) -> Result<u32, StoreError>;
    fn set_name_and_tags(
        &self,
        plan_id: &str,
        name: Option<&str>,
        tags: &[String],
    ) -> Result<(), StoreError>;
    fn set_status(&self, plan_id: &str, status: &str) -> Result<(), StoreError>;
    /// Soft-deletes a plan: it leaves listings and frees its name; `false` when already gone.
    fn soft_delete(&self, plan_id: &str) -> Result<bool, StoreError>;
    fn log_event(
        &self,
        plan_id: &str,
        step_number: Option<u32>,
        kind: &str,
        detail: &str,
        author: &str,
    ) -> Result<(), StoreError>;
    fn insert_approval(&self, approval: &ApprovalRow) -> Result<(), StoreError>;
    /// Records the answer to a pending approval; `false` when it was no longer pending.
    fn respond_approval(
        &self,
        id: &str,
        status: &str,
        responded_by: &str,
        comment: Option<&str>,
        modifications: Option<&str>,
    ) -> Result<bool, StoreError>;
    /// Writes a step's state (insert or replace).
    fn put_step_state(&self, plan_id: &str, state: &StepStateRow) -> Result<(), StoreError>;
    fn insert_applied_change(
        &self,
        plan_id: &str,
        change: &AppliedChangeRow,
    ) -> Result<(), StoreError>;
    fn mark_batch_undone(&self, batch_id: &str) -> Result<(), StoreError>;
}

/// Reading the apply journal.
pub trait JournalReads {
    fn journal_entry(&self, batch_id: &str) -> Result<Option<JournalRow>, StoreError>;
    /// Every open entry, oldest first.
    fn journal_open_entries(&self) -> Result<Vec<JournalRow>, StoreError>;
}

/// Opening and closing apply journal entries.
pub trait JournalWrites: JournalReads {
    fn journal_open(
        &self,
        batch_id: &str,
        plan_id: &str,
        step_number: u32,
        owner_pid: u32,
    ) -> Result<(), StoreError>;
    fn journal_set_temp_files(
        &self,
        batch_id: &str,
        temp_files: &[String],
    ) -> Result<(), StoreError>;
    /// Closes an open entry; `false` when it was not open.
    fn journal_close(
        &self,
        batch_id: &str,
        new_state: &str,
        reason: Option<&str>,
    ) -> Result<bool, StoreError>;
}

/// Reading review sessions.
pub trait SessionReads {
    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Every session, newest first.
    fn sessions(&self) -> Result<Vec<SessionRecord>, StoreError>;
    fn session_steps(&self, id: &str) -> Result<Vec<StepRecord>, StoreError>;
    /// The session's findings in the order they were found.
    fn session_findings(&self, id: &str) -> Result<Vec<StoredFinding>, StoreError>;
}

/// Every change of a review session, each checking the state it starts from.
pub trait SessionWrites: SessionReads {
    /// Stores a new session (state `queued`) and its steps.
    fn session_insert(&self, new: &NewSession) -> Result<(), StoreError>;
    /// Moves the session from one of `from` to `to`, recording `reason`.
    fn session_transition(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        reason: Option<&str>,
        now: i64,
    ) -> Result<Transition, StoreError>;
    /// Takes the lease of a `queued` session, or of one whose owner is gone (`is_dead`).
    fn session_claim(
        &self,
        id: &str,
        lease: &Lease,
        now: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Claim, StoreError>;
    /// Resumes a `paused` session, taking its lease when nobody live holds it.
    fn session_resume(
        &self,
        id: &str,
        lease: &Lease,
        now: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Claim, StoreError>;
    /// Renews the lease; `None` when the caller no longer holds it.
    fn session_heartbeat(
        &self,
        id: &str,
        token: &str,
        now: i64,
        add_active_ms: i64,
    ) -> Result<Option<SessionRecord>, StoreError>;
    /// Gives the lease up unless the session is `running` again.
    fn session_release(
        &self,
        id: &str,
        token: &str,
        now: i64,
        add_active_ms: i64,
    ) -> Result<bool, StoreError>;
    /// Marks a step running; `false` when the caller lost the lease or the session stopped.
    fn session_step_begin(
        &self,
        id: &str,
        idx: u32,
        token: &str,
        worker: u32,
        now: i64,
    ) -> Result<bool, StoreError>;
    /// Records a finished step and its findings; how many were new, `None` without the lease.
    #[allow(
        clippy::too_many_arguments,
        reason = "one row's columns, written at once"
    )]
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
    ) -> Result<Option<u64>, StoreError>;
    /// Records a failed attempt (a retry at `retry_at`, or the step's and session's failure).
    #[allow(
        clippy::too_many_arguments,
        reason = "one row's columns, written at once"
    )]
    fn session_step_fail(
        &self,
        id: &str,
        idx: u32,
        token: &str,
        error: &str,
        retry_at: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError>;
    /// Completes a running session whose steps all completed; `false` otherwise.
    fn session_complete(&self, id: &str, token: &str, now: i64) -> Result<bool, StoreError>;
    /// Pauses sessions whose owner is gone or that nobody claimed; returns their ids.
    fn session_reap(
        &self,
        now: i64,
        unclaimed_ms: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Vec<String>, StoreError>;
    /// Deletes final sessions that ended before `cutoff`.
    fn session_expire(&self, cutoff: i64) -> Result<usize, StoreError>;
}

/// The model response cache.
pub trait CacheReads {
    fn cache_stats(&self) -> Result<LlmCacheStats, StoreError>;
}

/// Looking up (and counting the hit) and storing model answers.
pub trait CacheWrites: CacheReads {
    /// The cached answer for `key`, counting the hit.
    fn cache_get(&self, key: &str) -> Result<Option<CachedResponse>, StoreError>;
    fn cache_put(&self, key: &str, entry: &CachedResponse) -> Result<(), StoreError>;
}

/// Everything a read transaction offers.
pub trait ReadTx: PlanReads + JournalReads + SessionReads + CacheReads {}

/// Everything a write transaction offers (its reads included).
pub trait WriteTx: ReadTx + PlanWrites + JournalWrites + SessionWrites + CacheWrites {}

/// The SQLite implementation: one connection inside an open transaction.
pub(super) struct SqliteTx<'c>(pub(super) &'c Connection);

impl ReadTx for SqliteTx<'_> {}
impl WriteTx for SqliteTx<'_> {}

impl PlanReads for SqliteTx<'_> {
    fn plan_by_id(&self, id: &str, include_deleted: bool) -> Result<Option<PlanRow>, StoreError> {
        plans::plan_by_id(self.0, id, include_deleted)
    }
    fn plan_by_name(&self, name: &str) -> Result<Option<PlanRow>, StoreError> {
        plans::plan_by_name(self.0, name)
    }
    fn list_plans(&self, filter: &PlanFilter<'_>) -> Result<Vec<PlanRow>, StoreError> {
        plans::list_plans(self.0, filter)
    }
    fn version(&self, plan_id: &str, version: u32) -> Result<Option<VersionRow>, StoreError> {
        plans::version(self.0, plan_id, version)
    }
    fn versions(
        &self,
        plan_id: &str,
        limit: usize,
        with_content: bool,
    ) -> Result<Vec<VersionRow>, StoreError> {
        plans::versions(self.0, plan_id, limit, with_content)
    }
    fn version_count(&self, plan_id: &str) -> Result<u32, StoreError> {
        plans::version_count(self.0, plan_id)
    }
    fn events(&self, plan_id: &str, limit: usize) -> Result<Vec<EventRow>, StoreError> {
        plans::events(self.0, plan_id, limit)
    }
    fn approval(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        plans::approval(self.0, id)
    }
    fn approvals(&self, plan_id: &str) -> Result<Vec<ApprovalRow>, StoreError> {
        plans::approvals(self.0, plan_id)
    }
    fn step_states(&self, plan_id: &str) -> Result<Vec<StepStateRow>, StoreError> {
        plans::step_states(self.0, plan_id)
    }
    fn applied_changes(&self, plan_id: &str) -> Result<Vec<AppliedChangeRow>, StoreError> {
        plans::applied_changes(self.0, plan_id)
    }
    fn applied_changes_of_batch(
        &self,
        batch_id: &str,
    ) -> Result<Vec<AppliedChangeRow>, StoreError> {
        plans::applied_changes_of_batch(self.0, batch_id)
    }
}

impl PlanWrites for SqliteTx<'_> {
    fn insert_plan(&self, plan: &NewPlan<'_>) -> Result<PlanRow, StoreError> {
        plans::insert_plan(self.0, plan)
    }
    fn append_version(
        &self,
        plan_id: &str,
        facts: PlanFacts<'_>,
        plan_json: &str,
        meta: VersionMeta<'_>,
    ) -> Result<u32, StoreError> {
        plans::append_version(self.0, plan_id, facts, plan_json, meta)
    }
    fn set_name_and_tags(
        &self,
        plan_id: &str,
        name: Option<&str>,
        tags: &[String],
    ) -> Result<(), StoreError> {
        plans::set_name_and_tags(self.0, plan_id, name, tags)
    }
    fn set_status(&self, plan_id: &str, status: &str) -> Result<(), StoreError> {
        plans::set_status(self.0, plan_id, status)
    }
    fn soft_delete(&self, plan_id: &str) -> Result<bool, StoreError> {
        plans::soft_delete(self.0, plan_id)
    }
    fn log_event(
        &self,
        plan_id: &str,
        step_number: Option<u32>,
        kind: &str,
        detail: &str,
        author: &str,
    ) -> Result<(), StoreError> {
        plans::log_event(self.0, plan_id, step_number, kind, detail, author)
    }
    fn insert_approval(&self, approval: &ApprovalRow) -> Result<(), StoreError> {
        plans::insert_approval(self.0, approval)
    }
    fn respond_approval(
        &self,
        id: &str,
        status: &str,
        responded_by: &str,
        comment: Option<&str>,
        modifications: Option<&str>,
    ) -> Result<bool, StoreError> {
        plans::respond_approval(self.0, id, status, responded_by, comment, modifications)
    }
    fn put_step_state(&self, plan_id: &str, state: &StepStateRow) -> Result<(), StoreError> {
        plans::put_step_state(self.0, plan_id, state)
    }
    fn insert_applied_change(
        &self,
        plan_id: &str,
        change: &AppliedChangeRow,
    ) -> Result<(), StoreError> {
        plans::insert_applied_change(self.0, plan_id, change)
    }
    fn mark_batch_undone(&self, batch_id: &str) -> Result<(), StoreError> {
        plans::mark_batch_undone(self.0, batch_id)
    }
}

impl JournalReads for SqliteTx<'_> {
    fn journal_entry(&self, batch_id: &str) -> Result<Option<JournalRow>, StoreError> {
        apply_journal::entry(self.0, batch_id)
    }
    fn journal_open_entries(&self) -> Result<Vec<JournalRow>, StoreError> {
        apply_journal::open_entries(self.0)
    }
}

impl JournalWrites for SqliteTx<'_> {
    fn journal_open(
        &self,
        batch_id: &str,
        plan_id: &str,
        step_number: u32,
        owner_pid: u32,
    ) -> Result<(), StoreError> {
        apply_journal::open(self.0, batch_id, plan_id, step_number, owner_pid)
    }
    fn journal_set_temp_files(
        &self,
        batch_id: &str,
        temp_files: &[String],
    ) -> Result<(), StoreError> {
        apply_journal::set_temp_files(self.0, batch_id, temp_files)
    }
    fn journal_close(
        &self,
        batch_id: &str,
        new_state: &str,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        apply_journal::close(self.0, batch_id, new_state, reason)
    }
}

impl SessionReads for SqliteTx<'_> {
    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        sessions::get(self.0, id)
    }
    fn sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        sessions::list(self.0)
    }
    fn session_steps(&self, id: &str) -> Result<Vec<StepRecord>, StoreError> {
        sessions::steps(self.0, id)
    }
    fn session_findings(&self, id: &str) -> Result<Vec<StoredFinding>, StoreError> {
        sessions::findings(self.0, id)
    }
}

impl SessionWrites for SqliteTx<'_> {
    fn session_insert(&self, new: &NewSession) -> Result<(), StoreError> {
        sessions::insert(self.0, new)
    }
    fn session_transition(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        reason: Option<&str>,
        now: i64,
    ) -> Result<Transition, StoreError> {
        sessions::transition(self.0, id, from, to, reason, now)
    }
    fn session_claim(
        &self,
        id: &str,
        lease: &Lease,
        now: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Claim, StoreError> {
        sessions::claim(self.0, id, lease, now, is_dead)
    }
    fn session_resume(
        &self,
        id: &str,
        lease: &Lease,
        now: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Claim, StoreError> {
        sessions::resume(self.0, id, lease, now, is_dead)
    }
    fn session_heartbeat(
        &self,
        id: &str,
        token: &str,
        now: i64,
        add_active_ms: i64,
    ) -> Result<Option<SessionRecord>, StoreError> {
        sessions::heartbeat(self.0, id, token, now, add_active_ms)
    }
    fn session_release(
        &self,
        id: &str,
        token: &str,
        now: i64,
        add_active_ms: i64,
    ) -> Result<bool, StoreError> {
        sessions::release(self.0, id, token, now, add_active_ms)
    }
    fn session_step_begin(
        &self,
        id: &str,
        idx: u32,
        token: &str,
        worker: u32,
        now: i64,
    ) -> Result<bool, StoreError> {
        sessions::step_begin(self.0, id, idx, token, worker, now)
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
        sessions::step_complete(
            self.0,
            id,
            idx,
            token,
            duration_ms,
            usage,
            findings,
            gate_reasons,
            now,
        )
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
        sessions::step_fail(self.0, id, idx, token, error, retry_at, now)
    }
    fn session_complete(&self, id: &str, token: &str, now: i64) -> Result<bool, StoreError> {
        sessions::complete(self.0, id, token, now)
    }
    fn session_reap(
        &self,
        now: i64,
        unclaimed_ms: i64,
        is_dead: &dyn Fn(&LeaseRecord) -> bool,
    ) -> Result<Vec<String>, StoreError> {
        sessions::reap(self.0, now, unclaimed_ms, is_dead)
    }
    fn session_expire(&self, cutoff: i64) -> Result<usize, StoreError> {
        sessions::expire(self.0, cutoff)
    }
}

impl CacheReads for SqliteTx<'_> {
    fn cache_stats(&self) -> Result<LlmCacheStats, StoreError> {
        llm_cache::stats(self.0)
    }
}

impl CacheWrites for SqliteTx<'_> {
    fn cache_get(&self, key: &str) -> Result<Option<CachedResponse>, StoreError> {
        llm_cache::get(self.0, key)
    }
    fn cache_put(&self, key: &str, entry: &CachedResponse) -> Result<(), StoreError> {
        llm_cache::put(self.0, key, entry)
    }
}
