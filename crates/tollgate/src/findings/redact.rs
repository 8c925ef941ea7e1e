//! Masking secrets in findings, once, where every finding passes.
//!
//! [`crate::findings::assign_identities`] calls [`redact_secrets`] after fingerprinting, and
//! every producer (built-in rules, invariants, analyzers, imported SARIF, model passes) goes
//! through it before anything is rendered, returned over MCP or stored, so no producer can
//! forget. Every text a finding carries is masked with [`crate::secrets::redact_line`].
//!
//! The fingerprint is computed from the raw anchored line, before masking: identities then do not
//! depend on the scrubber's version (a better detector does not reset baselines), and a new secret
//! on the same line is a new finding rather than one a baseline of the old secret hides. The
//! anchor itself is never serialised; only a one-way hash of it leaves.

use crate::findings::{Applicability, Finding};
use crate::secrets::redact_line;

/// Masks every secret in every text field of `finding`: title, message, evidence, impact,
/// recommendation and the suggested fix. A fix whose replacement had to be masked no longer holds
/// the code it proposes, so it becomes display-only.
pub fn redact_secrets(finding: &mut Finding) {
    redact_in_place(&mut finding.title);
    redact_in_place(&mut finding.message);
    for evidence in &mut finding.evidence {
        redact_in_place(evidence);
    }
    redact_in_place(&mut finding.impact);
    redact_in_place(&mut finding.recommendation);
    if let Some(fix) = &mut finding.suggested_fix {
        redact_in_place(&mut fix.description);
        if let Some(replacement) = &mut fix.replacement
            && redact_in_place(replacement)
        {
            fix.applicability = Applicability::DisplayOnly;
        }
    }
}

/// Redacts `text` in place; true when something was masked.
fn redact_in_place(text: &mut String) -> bool {
    let redacted = redact_line(text);
    if redacted == *text {
        return false;
    }
    *text = redacted;
    true
}

#[cfg(test)]
mod tests {
    //! Fake secrets are assembled at run time, so this file holds nothing token-shaped.

    use crate::findings::{
        Applicability, Category, Finding, Location, Severity, Source, SuggestedFix,
        assign_identities,
    };

    fn github_token(seed: &str) -> String {
        format!("gh{}_{}", "p", seed.repeat(36 / seed.len()))
    }

    fn finding_with(secret: &str) -> Finding {
        let line = format!("export const TOKEN = \"{secret}\";");
        Finding::new(
            "TG002",
            Severity::Critical,
            Category::Security,
            Source::Llm,
            format!("Token {secret} committed"),
            Location::line("src/config.ts", 3),
        )
        .with_message(format!("The line\n{line}\nholds a token"))
        .with_evidence(line.clone())
        .with_evidence("no secret here")
        .with_impact(format!("Anyone can use {secret}."))
        .with_recommendation(format!("Revoke {secret} and read it from the environment."))
        .with_fix(SuggestedFix {
            description: format!("Replace {secret}"),
            replacement: Some(line.clone()),
            applicability: Applicability::Safe,
        })
        .with_anchor(line)
    }

    #[test]
    fn every_text_field_is_masked_and_the_fingerprint_uses_the_raw_line() {
        let secret = github_token("a1B2");
        let mut findings = vec![finding_with(&secret)];
        assign_identities(&mut findings);
        let json = serde_json::to_string(&findings[0]).unwrap_or_default();
        assert!(!json.contains(&secret[4..]), "{json}");
        assert!(
            findings[0].title.contains("ghp_****"),
            "{}",
            findings[0].title
        );
        assert_eq!(findings[0].evidence[1], "no secret here");
        let fix = findings[0]
            .suggested_fix
            .as_ref()
            .map(|fix| fix.applicability);
        assert_eq!(fix, Some(Applicability::DisplayOnly));

        // Same line, same secret: same identity whatever the texts say.
        let mut bare = finding_with(&secret);
        bare.title = "t".into();
        bare.suggested_fix = None;
        let mut bare = vec![bare];
        assign_identities(&mut bare);
        assert_eq!(bare[0].fingerprint, findings[0].fingerprint);
        // A different secret on the same line is a new finding, not one a baseline hides.
        let mut rotated = vec![finding_with(&github_token("c3D4"))];
        assign_identities(&mut rotated);
        assert_ne!(rotated[0].fingerprint, findings[0].fingerprint);
    }

    #[test]
    fn texts_without_secrets_are_untouched() {
        let mut finding = Finding::new(
            "R1",
            Severity::Low,
            Category::Style,
            Source::Invariants,
            "Avoid eval",
            Location::line("a.js", 1),
        )
        .with_fix(SuggestedFix {
            description: "Use JSON.parse".into(),
            replacement: Some("JSON.parse(x)".into()),
            applicability: Applicability::Safe,
        });
        let before = finding.clone();
        super::redact_secrets(&mut finding);
        assert_eq!(finding, before);
    }
}
