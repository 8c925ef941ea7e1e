//! The lifecycle half of planning: what happens to a plan once it is saved. `library` (save,
//! load, list, delete, versions; plans are persisted through `store::plans`, the store's one way),
//! `history` (versions, comparison, rollback), `approval`, `progress` (the step state machine),
//! `apply` and `journal` (file operations with backups, crash-safe), `execute` (a model
//! proposes each step's changes, applied or previewed), `undo`.
//!
//! Invariant: the pure half (`plan::{model, graph, generate, refine, scan, mermaid,
//! markdown, visualize}`) never imports this one; only `PlanResponse::saved` names its
//! `SavePlanResponse`.

pub mod apply;
pub mod approval;
pub mod execute;
pub mod history;
pub mod journal;
pub mod library;
pub mod progress;
pub mod undo;
