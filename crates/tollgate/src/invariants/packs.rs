//! The invariant packs shipped in the repository's `invariants/` directory, embedded in the
//! binary so front ends can offer them (`tollgate init` writing one out, say) without the
//! source tree at hand. Users opt in by copying a pack into their repository (see
//! `invariants/README.md`); nothing here is applied by default.

use std::path::Path;

use super::error::InvariantsError;
use super::model::InvariantSet;

/// One shipped pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pack {
    /// Short name, e.g. `security`.
    pub name: &'static str,
    /// Path in the Tollgate repository, e.g. `invariants/security.yml` (also the label used in
    /// messages about the pack's rules).
    pub path: &'static str,
    pub yaml: &'static str,
}

macro_rules! pack {
    ($name:literal) => {
        Pack {
            name: $name,
            path: concat!("invariants/", $name, ".yml"),
            yaml: include_str!(concat!("../../../../invariants/", $name, ".yml")),
        }
    };
}

/// Every shipped pack, by name.
pub const PACKS: &[Pack] = &[
    pack!("security"),
    pack!("rust"),
    pack!("typescript"),
    pack!("migrations"),
    pack!("ci"),
];

/// A shipped pack by name.
pub fn pack(name: &str) -> Option<&'static Pack> {
    PACKS.iter().find(|pack| pack.name == name)
}

impl Pack {
    /// Loads the pack's rules.
    pub fn load(&self) -> Result<InvariantSet, InvariantsError> {
        InvariantSet::from_yaml(Path::new(self.path), self.yaml)
    }
}
