//! Project invariants: `.review-invariants.yml` rules, checked deterministically against diffs.
//!
//! An invariants file maps free-text section names to lists of rules (upstream's format,
//! accepted unchanged; the Tollgate extensions are documented in `invariants/README.md` at the
//! repository root, next to the shipped packs). Loading parses it once into an [`InvariantSet`]
//! of validated [`Invariant`]s, with compiled globs ([`PathFilter`]) and regexes ([`Pattern`],
//! JavaScript syntax translated for the `regex` crate), and reports every problem with its line
//! and column ([`InvariantsError`], [`Problem`]). [`InvariantSet::evaluate`] then turns a
//! [`Diff`](crate::diff::Diff) into [`Finding`](crate::findings::Finding)s anchored at the exact
//! changed lines that caused them.
//!
//! ```
//! use std::path::Path;
//! use tollgate::invariants::InvariantSet;
//!
//! let yaml = r#"
//! security:
//!   - id: no-eval
//!     rule: Never call eval() in application code
//!     paths: ["src/**/*.js"]
//!     severity: HIGH
//!     category: security
//!     action: deny
//!     deny: { regex: { pattern: "\\beval\\(" } }
//! "#;
//! let set = InvariantSet::from_yaml(Path::new(".review-invariants.yml"), yaml).unwrap();
//! assert_eq!(set.checks().count(), 1);
//! ```
//!
//! Paths that come from users or models go through [`resolve_invariants_path`] (or
//! [`load_from_workspace`]), which keeps them inside the workspace.

mod error;
mod evaluate;
mod load;
mod model;
mod paths;
mod pattern;
mod resolve;
#[cfg(test)]
mod testutil;
mod yaml;

pub use error::{InvariantsError, PathRefusal, Problem};
pub use evaluate::{EVIDENCE_CHARS, Evaluation, MAX_FINDINGS_PER_RULE_AND_FILE};
pub use load::{
    CheckReport, DEFAULT_FILE_NAME, MAX_FILE_BYTES, TITLE_CHARS, check_file, load_from_workspace,
};
pub use model::{Check, DEFAULT_CONFIDENCE, Invariant, InvariantSet, Lines, Origin};
pub use paths::{GlobError, PathFilter};
pub use pattern::{MAX_PATTERN_CHARS, Pattern, PatternError, REGEX_SIZE_LIMIT};
pub use resolve::resolve_invariants_path;
