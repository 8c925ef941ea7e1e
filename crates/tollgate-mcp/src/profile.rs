//! Tool profiles: which groups of tools a server offers, so an agent loads only the tool
//! definitions it needs (every definition costs context in every session).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// A group of tools, named on the command line as `--tools review,plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Profile {
    /// Diff review: `review_diff`, `check_invariants`, …
    Review,
    /// Implementation plans and their lifecycle.
    Plan,
    /// Code search and context retrieval.
    Context,
    /// Reactive pull-request review sessions.
    Session,
    /// The knowledge store and review learnings: context entries and their searches, the
    /// team's decisions on findings.
    Memory,
    /// The team's own tools: Lua scripts under `.tollgate/tools/` and `[tools] dirs`.
    User,
    /// ck's search tools (seed 003) with ck's names and parameters; `all` leaves it out, as
    /// three of its names are the `context` profile's with other inputs.
    Ck,
    /// Context-Engine's indexer tools (seed 000): `repo_search` and its kin; `all` leaves it
    /// out, as some of its names are the `context` profile's with other inputs.
    ContextEngine,
}

impl Profile {
    /// What `all` serves: Tollgate's own profiles.
    pub const ALL: [Profile; 6] = [
        Profile::Review,
        Profile::Plan,
        Profile::Context,
        Profile::Session,
        Profile::Memory,
        Profile::User,
    ];

    /// Other seeds' dialects, named one by one (`--tools ck`), never by `all`.
    pub const DIALECTS: [Profile; 2] = [Profile::Ck, Profile::ContextEngine];

    /// Every profile: Tollgate's own, then the dialects.
    pub fn every() -> impl Iterator<Item = Profile> {
        Profile::ALL.into_iter().chain(Profile::DIALECTS)
    }

    /// When an agent should connect with this profile; the server's instructions say it.
    pub fn purpose(self) -> &'static str {
        match self {
            Profile::Review => {
                "check a change before commit or merge: the deterministic gate on a diff, invariants, static analyzers, model reviews of a diff or of git changes"
            }
            Profile::Plan => {
                "plan work before changing code, then track and carry it out: create, refine, save, approve, execute and undo plan steps"
            }
            Profile::Context => {
                "find and read code: hybrid and regex search, symbols, callers, tests, commit history, context bundles for a prompt, the code index"
            }
            Profile::Session => {
                "review a whole pull request in the background and steer it: start, poll, pause, resume, cancel, telemetry"
            }
            Profile::Memory => {
                "keep and find knowledge beside the code: store, search (full-text, semantic, hybrid), update and delete context entries in threads; remember what the team decided on review findings (dismiss, accept, list) so they stay decided"
            }
            Profile::User => {
                "the team's own tools, Lua scripts in .tollgate/tools/ (none until someone writes one)"
            }
            Profile::Ck => {
                "ck's search tools with ck's parameters, for agents configured for ck (not with `context` or `all`: three names are theirs)"
            }
            Profile::ContextEngine => {
                "Context-Engine's indexer tools with its parameters, for agents configured for it (not with `context` or `all`: some names are theirs)"
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Review => "review",
            Profile::Plan => "plan",
            Profile::Context => "context",
            Profile::Session => "session",
            Profile::Memory => "memory",
            Profile::User => "user",
            Profile::Ck => "ck",
            Profile::ContextEngine => "context-engine",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The profiles a server serves: a non-empty set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profiles(BTreeSet<Profile>);

impl Profiles {
    /// Every profile.
    pub fn all() -> Profiles {
        Profiles(Profile::ALL.into_iter().collect())
    }

    pub fn contains(&self, profile: Profile) -> bool {
        self.0.contains(&profile)
    }

    pub fn iter(&self) -> impl Iterator<Item = Profile> + '_ {
        self.0.iter().copied()
    }
}

impl Default for Profiles {
    /// `review`: what most agents connect for, and the team's own tools (which cost nothing
    /// until someone writes one); the utilities come with every profile.
    fn default() -> Profiles {
        Profiles([Profile::Review, Profile::User].into_iter().collect())
    }
}

impl fmt::Display for Profiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (idx, profile) in self.0.iter().enumerate() {
            if idx > 0 {
                f.write_str(",")?;
            }
            f.write_str(profile.as_str())?;
        }
        Ok(())
    }
}

/// A `--tools` value named no profile, or one that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown tool profile `{given}`: expected a comma-separated list of review, plan, context, session, memory, user, ck, context-engine, or all"
)]
pub struct UnknownProfile {
    pub given: String,
}

impl FromStr for Profiles {
    type Err = UnknownProfile;

    /// A comma-separated list of profile names or `all`, case-insensitive.
    fn from_str(text: &str) -> Result<Profiles, UnknownProfile> {
        let mut set = BTreeSet::new();
        for name in text.split(',').map(str::trim) {
            let name = name.to_ascii_lowercase();
            if name == "all" {
                set.extend(Profile::ALL);
                continue;
            }
            match Profile::every().find(|p| p.as_str() == name) {
                Some(profile) => {
                    set.insert(profile);
                }
                None => {
                    return Err(UnknownProfile {
                        given: if name.is_empty() {
                            text.to_string()
                        } else {
                            name
                        },
                    });
                }
            }
        }
        Ok(Profiles(set))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_all_and_rejects_unknown_names() {
        let profiles: Profiles = "review, Plan".parse().unwrap();
        assert_eq!(profiles.to_string(), "review,plan");
        assert_eq!("all".parse::<Profiles>().unwrap(), Profiles::all());
        assert_eq!(
            "review,all".parse::<Profiles>().unwrap().to_string(),
            "review,plan,context,session,memory,user"
        );
        let err = "review,reviews".parse::<Profiles>().unwrap_err();
        assert_eq!(err.given, "reviews");
        assert!(
            err.to_string()
                .contains("review, plan, context, session, memory, user, ck, context-engine")
        );
        // The dialects are named one by one; `all` is Tollgate's own profiles.
        assert_eq!(
            "ck,review".parse::<Profiles>().unwrap().to_string(),
            "review,ck"
        );
        assert_eq!(
            "Context-Engine".parse::<Profiles>().unwrap().to_string(),
            "context-engine"
        );
        assert!(!Profiles::all().contains(Profile::Ck));
        assert!(!Profiles::all().contains(Profile::ContextEngine));
        let err = "".parse::<Profiles>().unwrap_err();
        assert_eq!(err.given, "");
        assert!("review,".parse::<Profiles>().is_err());
    }
}
