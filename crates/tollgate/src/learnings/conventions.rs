//! The ledger as "this team's conventions" for a model: the latest decisions, one line each,
//! bounded, secrets masked. Callers fence the text (it holds anyone's reasons).

use std::collections::HashSet;

use crate::learnings::{Disposition, Ledger};
use crate::secrets::redact_line;

/// Decisions listed at most, newest first.
pub const MAX_CONVENTIONS: usize = 30;
/// Characters of the whole text at most (about 1,000 tokens).
pub const MAX_CONVENTIONS_CHARS: usize = 4000;
/// Characters of one reason at most.
const MAX_REASON_CHARS: usize = 200;

/// One line per recent decision (`dismissed TG003 in src/a.rs: reason`), newest first, or
/// `None` when there is none. Later records about the same finding replace earlier ones.
pub fn conventions(ledger: &Ledger) -> Option<String> {
    let mut seen = HashSet::new();
    let mut text = String::new();
    let mut n_listed = 0;
    for record in ledger.records().iter().rev() {
        if !seen.insert((record.fingerprint.as_str(), record.scope.as_deref())) {
            continue;
        }
        if n_listed == MAX_CONVENTIONS {
            break;
        }
        let verb = match record.disposition {
            Disposition::Dismissed => "dismissed",
            Disposition::Accepted => "accepted",
            Disposition::Fixed => "fixed",
        };
        let place = record.scope.as_deref().unwrap_or(&record.path);
        let reason: String = redact_line(&record.reason)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_REASON_CHARS)
            .collect();
        let line = if reason.trim().is_empty() {
            format!("- {verb} {} in {place}\n", record.rule_id)
        } else {
            format!(
                "- {verb} {} in {place}: {}\n",
                record.rule_id,
                reason.trim()
            )
        };
        if text.len() + line.len() > MAX_CONVENTIONS_CHARS {
            break;
        }
        text.push_str(&line);
        n_listed += 1;
    }
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learnings::Record;

    #[test]
    fn newest_decisions_first_bounded_and_masked() {
        let mut ledger = Ledger::default();
        let key = format!("AKIA{}", "QWERTYUIOPASDFGH");
        for idx in 0..100 {
            ledger.push(Record {
                fingerprint: format!("f{idx}"),
                rule_id: "TG003".into(),
                path: "src/a.rs".into(),
                scope: None,
                disposition: Disposition::Dismissed,
                reason: format!("reason {idx} {key}\nline two"),
                by: "a".into(),
                at: "t".into(),
                evidence: None,
            });
        }
        let text = conventions(&ledger).unwrap();
        assert!(
            text.starts_with("- dismissed TG003 in src/a.rs: reason 99 "),
            "{text}"
        );
        assert_eq!(text.lines().count(), MAX_CONVENTIONS);
        assert!(text.len() <= MAX_CONVENTIONS_CHARS);
        assert!(!text.contains(&key), "{text}");
        assert!(conventions(&Ledger::default()).is_none());
    }
}
