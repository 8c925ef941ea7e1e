//! SARIF output checked by Microsoft's SARIF Multitool with GitHub's ingestion rules.
//!
//! `.ci/run` installs the Multitool and sets `TOLLGATE_SARIF_MULTITOOL`. Without it the test
//! says so and returns, except under CI, where a missing validator is a failure.

use std::path::PathBuf;
use std::process::Command;

use crate::util::{TestRepo, tollgate};

const GH_RULES: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<Properties>
  <Properties Key="GH1001.ProvideRequiredLocationProperties.Options"><Property Key="RuleEnabled" Value="Error" Type="Driver.RuleEnabledState" /></Properties>
  <Properties Key="GH1002.InlineThreadFlowLocations.Options"><Property Key="RuleEnabled" Value="Error" Type="Driver.RuleEnabledState" /></Properties>
  <Properties Key="GH1003.ProvideRequiredRegionProperties.Options"><Property Key="RuleEnabled" Value="Error" Type="Driver.RuleEnabledState" /></Properties>
  <Properties Key="GH1005.LocationsMustBeRelativeUrisOrFilePaths.Options"><Property Key="RuleEnabled" Value="Error" Type="Driver.RuleEnabledState" /></Properties>
  <Properties Key="GH1006.ProvideCheckoutPath.Options"><Property Key="RuleEnabled" Value="Error" Type="Driver.RuleEnabledState" /></Properties>
  <Properties Key="GH1007.ProvideFullyFormattedMessageStrings.Options"><Property Key="RuleEnabled" Value="Error" Type="Driver.RuleEnabledState" /></Properties>
</Properties>
"#;

fn multitool() -> Option<PathBuf> {
    let from_env = std::env::var_os("TOLLGATE_SARIF_MULTITOOL").map(PathBuf::from);
    let in_repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools/sarif-mt/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    let found = from_env.or(Some(in_repo)).filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install the SARIF Multitool (.ci/run does)"
        );
        eprintln!("SARIF Multitool not installed; run .ci/run to validate SARIF");
    }
    found
}

#[test]
fn sarif_passes_github_ingestion_rules() {
    let Some(tool) = multitool() else { return };
    let repo = TestRepo::new();
    repo.write(
        ".review-invariants.yml",
        "security:\n  - id: no-eval\n    rule: Do not call eval\n    paths: [\"**/*.js\"]\n    severity: HIGH\n    category: security\n    action: deny\n    deny:\n      regex:\n        pattern: \"eval\\\\(\"\n",
    );
    repo.write("src/app.js", "export const a = 1;\n");
    repo.write("assets/logo.png", "\u{1}\u{2}binary?\n");
    repo.commit("init");
    repo.write(
        "src/app.js",
        "export const a = 1;\nexport const b = eval(x);\n",
    );
    repo.write(
        "src/dir with space/ü.py",
        "PASSWORD = \"Xk29sLq0Vb7Rn3Tz8Wc1\"\n",
    );
    repo.write(".github/workflows/ci.yml", "on: push\n");
    let out = repo.path().join("out.sarif");
    tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--working-tree",
        "--format",
        &format!("sarif={}", out.display()),
    ])
    .run();
    assert!(out.is_file());

    let rules = repo.path().join("gh-rules.xml");
    std::fs::write(&rules, GH_RULES).unwrap();
    let log = repo.path().join("validation.sarif");
    let status = Command::new(&tool)
        .arg("validate")
        .arg(&out)
        .args(["--rule-kind", "Ghas", "--config"])
        .arg(&rules)
        .args(["--log", "ForceOverwrite", "--output"])
        .arg(&log)
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .status()
        .expect("multitool runs");
    assert!(status.success());
    // The Multitool's exit code is always 0: count error results instead.
    let validation: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let mut errors = Vec::new();
    for run in validation["runs"].as_array().unwrap() {
        for result in run["results"].as_array().into_iter().flatten() {
            if result["level"] == "error" {
                errors.push(result["message"].to_string());
            }
        }
    }
    assert!(errors.is_empty(), "SARIF validation errors: {errors:#?}");
}
