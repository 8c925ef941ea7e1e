//! Per-directory `tollgate.toml` files in a monorepo: the nearest one wins for the files below it.
//!
//! A nested file may set only what can differ per path, `[rules.<id>]` and `[[overrides]]`; the
//! rest (the gate's threshold, analyzers, models, limits) judges the whole change and stays in the
//! root file, so a nested file that sets it is an error rather than a setting silently ignored.
//! Each nested file becomes path overrides scoped to its directory (its `[[overrides]]` globs are
//! relative to it), applied after the root's and shallower files before deeper ones: the
//! nearest file's entry is the last match for a path, and the last match wins.

use std::collections::BTreeMap;

use super::raw::{resolve_overrides, value_error};
use super::{
    CONFIG_FILE_NAME, ConfigError, PathOverride, PathPatterns, RawConfig, RawPathOverride,
    ReviewConfig,
};

/// One nested `tollgate.toml`, parsed, checked and scoped to its directory.
#[derive(Debug, Clone)]
pub struct NestedConfig {
    /// The directory it governs, repository-relative (`packages/api`).
    pub dir: String,
    overrides: Vec<PathOverride>,
}

/// The nested configuration files that may govern `changed` (repository-relative paths): the
/// `tollgate.toml` of every directory above each path, the root excluded, shallower first.
pub fn nested_config_paths<'a>(changed: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut dirs = std::collections::BTreeSet::new();
    for path in changed {
        let mut end = 0;
        while let Some(offset) = path[end..].find('/') {
            end += offset;
            dirs.insert(&path[..end]);
            end += 1;
        }
    }
    let mut dirs: Vec<&str> = dirs.into_iter().collect();
    dirs.sort_by_key(|dir| (dir.matches('/').count(), *dir));
    dirs.into_iter()
        .map(|dir| format!("{dir}/{CONFIG_FILE_NAME}"))
        .collect()
}

impl NestedConfig {
    /// Parses the nested file at `path` (repository-relative, ending in `tollgate.toml`);
    /// `label` names it in errors (`packages/api/tollgate.toml@<sha>` when read from a commit).
    pub fn parse(path: &str, text: &str, label: &str) -> Result<NestedConfig, ConfigError> {
        let dir = path
            .strip_suffix(CONFIG_FILE_NAME)
            .and_then(|dir| dir.strip_suffix('/'))
            .filter(|dir| !dir.is_empty())
            .ok_or_else(|| {
                value_error(
                    label,
                    format!("a nested configuration file is a directory's {CONFIG_FILE_NAME}"),
                )
            })?
            .to_string();
        let raw = RawConfig::from_toml(text, label)?;
        let whole_change = [
            ("review", raw.review != Default::default()),
            ("preflight", raw.preflight != Default::default()),
            ("analyzers", raw.analyzers != Default::default()),
            ("llm", raw.llm != Default::default()),
            ("store", raw.store != Default::default()),
            ("sessions", raw.sessions != Default::default()),
        ];
        if let Some((table, _)) = whole_change.iter().find(|(_, set)| *set) {
            return Err(value_error(
                &format!("{label}: [{table}]"),
                format!(
                    "[{table}] applies to the whole change and is read only from the root {CONFIG_FILE_NAME}; \
                     a nested file may set [rules.<id>] and [[overrides]] (move [{table}] to the root file)"
                ),
            ));
        }

        // The directory is a literal prefix, never a pattern (`[s]rc/` must not cover `src/`).
        let literal = globset::escape(&dir);
        let scope = vec![format!("{literal}/**")];
        let mut rules = RawPathOverride {
            paths: scope.clone(),
            ..Default::default()
        };
        let mut enable = Vec::new();
        for (id, setting) in raw.rules {
            match setting.enabled {
                Some(false) => rules.disable.push(id.clone()),
                Some(true) => enable.push(id.clone()),
                None => {}
            }
            if let Some(severity) = setting.severity {
                rules.severity.insert(id, severity);
            }
        }
        let mut entries = vec![rules];
        for (idx, entry) in raw.overrides.into_iter().enumerate() {
            let paths = entry
                .paths
                .iter()
                .map(|glob| scoped_glob(&literal, glob))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    value_error(
                        &format!("{label}: overrides[{idx}].paths"),
                        "a nested file's globs are relative to its directory and may not climb out with `..`"
                            .to_string(),
                    )
                })?;
            entries.push(RawPathOverride { paths, ..entry });
        }
        let mut overrides = resolve_overrides(entries, &format!("{label}: overrides"))?;
        overrides[0].enable = enable;
        Ok(NestedConfig { dir, overrides })
    }

    /// The rule ids this file enables in its directory.
    fn enabled_rules(&self) -> impl Iterator<Item = &String> {
        self.overrides.iter().flat_map(|entry| entry.enable.iter())
    }
}

/// `glob`, written in the nested file of `dir` (already escaped), as a repository-relative
/// glob; `None` when it would climb out of `dir`.
fn scoped_glob(dir: &str, glob: &str) -> Option<String> {
    let glob = glob.trim_start_matches("./").trim_start_matches('/');
    if glob.split('/').any(|part| part == "..") {
        return None;
    }
    Some(if glob.contains('/') {
        format!("{dir}/{glob}")
    } else {
        format!("{dir}/**/{glob}")
    })
}

impl ReviewConfig {
    /// This configuration with nested files applied; `nested` is in [`nested_config_paths`]'
    /// order (shallower first), so the nearest file's setting is the last to match a path.
    ///
    /// A rule the root disables and a nested file enables runs again, disabled everywhere else
    /// by an override that comes first.
    pub fn with_nested(&self, nested: &[NestedConfig]) -> ReviewConfig {
        let mut config = self.clone();
        let mut revived = Vec::new();
        for id in nested.iter().flat_map(NestedConfig::enabled_rules) {
            if let Some(rule) = config.rule_overrides.get_mut(id)
                && !rule.enabled
            {
                rule.enabled = true;
                revived.push(id.clone());
            }
        }
        if !revived.is_empty() {
            let everywhere = PathPatterns::new(&["**".to_string()]).expect("`**` is a valid glob");
            config.path_overrides.insert(
                0,
                PathOverride {
                    paths: everywhere,
                    disable: revived,
                    enable: Vec::new(),
                    severity: BTreeMap::new(),
                },
            );
        }
        config.path_overrides.extend(
            nested
                .iter()
                .flat_map(|file| file.overrides.iter().cloned()),
        );
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_every_ancestor_directory_shallow_first() {
        let paths =
            nested_config_paths(["packages/api/src/a.ts", "packages/web/b.ts", "README.md"]);
        assert_eq!(
            paths,
            [
                "packages/tollgate.toml",
                "packages/api/tollgate.toml",
                "packages/web/tollgate.toml",
                "packages/api/src/tollgate.toml",
            ]
        );
    }

    #[test]
    fn rules_and_overrides_are_scoped_to_the_directory() {
        let nested = NestedConfig::parse(
            "packages/api/tollgate.toml",
            "[rules.TG001]\nenabled = false\n[rules.TG002]\nseverity = \"INFO\"\n\
             [[overrides]]\npaths = [\"scripts/**\", \"*.gen.ts\"]\ndisable = [\"semgrep/*\"]\n",
            "packages/api/tollgate.toml",
        )
        .unwrap();
        assert_eq!(nested.dir, "packages/api");
        let rules = &nested.overrides[0];
        assert!(rules.paths.is_match("packages/api/src/deep/x.ts"));
        assert!(!rules.paths.is_match("packages/web/x.ts"));
        assert_eq!(rules.disable, ["TG001"]);
        assert_eq!(rules.severity["TG002"], crate::findings::Severity::Info);
        let globs = &nested.overrides[1];
        assert!(globs.paths.is_match("packages/api/scripts/run.ts"));
        assert!(!globs.paths.is_match("scripts/run.ts"));
        assert!(globs.paths.is_match("packages/api/src/x.gen.ts"));
        assert!(!globs.paths.is_match("packages/web/x.gen.ts"));
    }

    /// A directory name is a literal prefix: `[s]rc/` is not the pattern that matches `src/`.
    #[test]
    fn a_directory_with_glob_characters_is_a_literal_prefix() {
        let nested = NestedConfig::parse(
            "[s]rc/tollgate.toml",
            "[rules.TG008]\nenabled = false\n[[overrides]]\npaths = [\"*.rs\"]\ndisable = [\"TG001\"]\n",
            "[s]rc/tollgate.toml",
        )
        .unwrap();
        for entry in &nested.overrides {
            assert!(!entry.paths.is_match("src/keys.rs"), "{:?}", entry.paths);
            assert!(entry.paths.is_match("[s]rc/keys.rs"), "{:?}", entry.paths);
        }
        let braces = NestedConfig::parse(
            "{a,b}*/tollgate.toml",
            "[rules.TG008]\nenabled = false\n",
            "x",
        )
        .unwrap();
        assert!(!braces.overrides[0].paths.is_match("a/x.rs"));
        assert!(!braces.overrides[0].paths.is_match("bz/x.rs"));
        assert!(braces.overrides[0].paths.is_match("{a,b}*/x.rs"));
    }

    #[test]
    fn whole_change_settings_and_climbing_globs_are_errors_naming_the_file() {
        let err = NestedConfig::parse(
            "a/tollgate.toml",
            "[review]\nfail_on_severity = \"LOW\"\n",
            "a/tollgate.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("a/tollgate.toml: [review]"), "{err}");
        assert!(err.contains("root tollgate.toml"), "{err}");
        let err = NestedConfig::parse(
            "a/tollgate.toml",
            "[[overrides]]\npaths = [\"../b/**\"]\ndisable = [\"TG001\"]\n",
            "a/tollgate.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("overrides[0].paths"), "{err}");
        let err = NestedConfig::parse("a/tollgate.toml", "[bogus]\n", "a/tollgate.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("a/tollgate.toml"), "{err}");
    }

    #[test]
    fn a_rule_the_root_disables_runs_again_only_where_a_nested_file_enables_it() {
        let root = RawConfig::from_toml("[rules.TG001]\nenabled = false\n", "tollgate.toml")
            .unwrap()
            .resolve()
            .unwrap();
        let nested = NestedConfig::parse(
            "svc/tollgate.toml",
            "[rules.TG001]\nenabled = true\n",
            "svc/tollgate.toml",
        )
        .unwrap();
        let config = root.with_nested(&[nested]);
        assert!(config.rule_overrides["TG001"].enabled);
        let first = &config.path_overrides[0];
        assert!(first.paths.is_match("lib/a.rs") && first.disable == ["TG001"]);
        let last = config.path_overrides.last().unwrap();
        assert!(last.paths.is_match("svc/a.rs") && last.enable == ["TG001"]);
    }
}
