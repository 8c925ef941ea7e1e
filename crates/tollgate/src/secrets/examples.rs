//! Values that look like credentials but are published examples: AWS's documented example keys,
//! the JSON Web Tokens of jwt.io and RFC 7519, passwords in URLs on documentation hosts.
//!
//! Detection and masking do not change for them (masking an example costs nothing); the gate
//! reports them at a lower severity with the reason, so a JWT-validation library's tests or
//! MDN's `URL.password` example do not fail a build, and a real credential that happens to sit
//! beside them is still found. Nothing is ever dropped silently.

use super::SecretKind;

/// Why `value` (a match of `kind`) is a published example, if it is one.
pub fn known_example(kind: SecretKind, value: &str, line: &str) -> Option<&'static str> {
    match kind {
        SecretKind::AwsAccessKeyId | SecretKind::AwsSecretAccessKey
            if value.ends_with("EXAMPLE") || value.ends_with("EXAMPLEKEY") =>
        {
            Some("AWS's documented example key (it ends in EXAMPLE)")
        }
        SecretKind::Jwt => {
            let mut segments = value.split('.');
            let payload = segments.nth(1).unwrap_or_default();
            let signature = segments.next().unwrap_or_default();
            if EXAMPLE_JWT_PAYLOADS
                .iter()
                .any(|known| payload.starts_with(known))
            {
                Some("the example token of jwt.io or RFC 7519")
            } else if signature.len() < MIN_REAL_SIGNATURE_CHARS
                || signature.chars().all(|c| c.is_ascii_lowercase())
            {
                Some("its signature is a placeholder, too short or a plain word to be a real one")
            } else {
                None
            }
        }
        SecretKind::UrlCredentials => url_host(line, value)
            .filter(|host| is_documentation_host(host))
            .map(|_| "a password in a URL on a documentation or local host"),
        _ => None,
    }
}

/// The shortest real signature: HMAC-SHA256, the smallest common one, is 32 bytes, 43
/// characters of base64url.
const MIN_REAL_SIGNATURE_CHARS: usize = 43;

/// The start of the payload segment of the well-known example tokens: jwt.io's
/// `{"sub":"1234567890",…}` and RFC 7519's `{"iss":"joe",…}`. Only a prefix, so this file holds
/// no token-shaped text.
const EXAMPLE_JWT_PAYLOADS: &[&str] = &[
    "eyJzdWIiOiIxMjM0NTY3ODkwI",
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQog",
];

/// The host after the `@` that follows `password` in `line`.
fn url_host<'l>(line: &'l str, password: &str) -> Option<&'l str> {
    let at = line.find(password)? + password.len();
    let rest = line.get(at..)?.strip_prefix('@')?;
    let end = rest
        .find(|c: char| {
            c == '/'
                || c == ':'
                || c == '?'
                || c == '#'
                || c.is_whitespace()
                || c == '"'
                || c == '\''
        })
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Hosts reserved for documentation (RFC 2606), MDN's examples, and this machine.
pub(crate) fn is_documentation_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let reserved = [
        "example.com",
        "example.org",
        "example.net",
        "developer.mozilla.org",
    ];
    reserved
        .iter()
        .any(|domain| host == *domain || host.ends_with(&format!(".{domain}")))
        || host.ends_with(".example")
        || host.ends_with(".test")
        || host.ends_with(".invalid")
        || matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::find_secrets;

    /// The first secret `find_secrets` reports on `line`, with its example reason.
    fn judge(line: &str) -> (SecretKind, Option<&'static str>) {
        let found = find_secrets(line);
        let first = found
            .first()
            .unwrap_or_else(|| panic!("no secret in {line}"));
        let value = first.value(line).unwrap();
        (first.kind, known_example(first.kind, value, line))
    }

    /// Issue 28, as the README says: published examples are found (so masked everywhere) and
    /// then reported as examples, never passed over as placeholders.
    #[test]
    fn published_examples_are_found_masked_and_marked() {
        use crate::secrets::{redact_line, scrub};
        let aws_id = format!("AKIA{}", "IOSFODNN7EXAMPLE");
        let aws_secret = format!("wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}", "EXAMPLEKEY");
        let cases = [
            (format!("aws_access_key_id = {aws_id}"), aws_id.clone()),
            (
                format!("aws_secret_access_key = {aws_secret}"),
                aws_secret.clone(),
            ),
            (
                "curl https://admin:s3cr3tP4ss@example.com/".to_string(),
                "s3cr3tP4ss".to_string(),
            ),
        ];
        for (line, value) in &cases {
            let (_, reason) = judge(line);
            assert!(reason.is_some(), "{line}: reported as an example");
            assert!(!redact_line(line).contains(value.as_str()), "{line}");
            assert!(!scrub(line, 0, 0).text.contains(value.as_str()), "{line}");
        }
    }

    #[test]
    fn published_examples_are_recognised_and_real_looking_values_are_not() {
        // Assembled at run time: AWS's documented pair. The detector already takes these for
        // placeholders; whatever it reports of them must be an example.
        for line in [
            format!("aws_access_key_id = AKIA{}", "IOSFODNN7EXAMPLE"),
            format!(
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}",
                "EXAMPLEKEY"
            ),
        ] {
            for found in find_secrets(&line) {
                let value = found.value(&line).unwrap();
                assert!(known_example(found.kind, value, &line).is_some(), "{line}");
            }
        }
        let (_, reason) = judge(&format!("aws_access_key_id = AKIA{}", "Q7ZJ3KX2N5WPL4RT"));
        assert!(reason.is_none(), "a key that is not the example");

        let header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";
        let jwt_io = format!(
            "{header}.{}wiaWF0IjoxNTE2MjM5MDIyfQ.{}",
            EXAMPLE_JWT_PAYLOADS[0], "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        );
        let (kind, reason) = judge(&format!("const token = \"{jwt_io}\";"));
        assert_eq!(kind, SecretKind::Jwt);
        assert!(reason.is_some());
        // A benchmark's fixture: the signature is the word "signature".
        let fixture = format!("{header}.eyJ1c2VyIjoiYWxpY2UifQ.signature");
        assert_eq!(
            judge(&format!("const t = \"{fixture}\";")).1,
            Some("its signature is a placeholder, too short or a plain word to be a real one")
        );
        let other = format!(
            "{header}.eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ.{}",
            "Kx7q2LmN9pQr4StUv8WyZ1aBcDeFgHiJkLmNoPqRsTu"
        );
        assert!(judge(&format!("const token = \"{other}\";")).1.is_none());

        let mdn = "new URL(\"https://anonymous:flabada@developer.mozilla.org/en-US/docs/Web/API/URL/password\")";
        assert_eq!(
            judge(mdn),
            (
                SecretKind::UrlCredentials,
                Some("a password in a URL on a documentation or local host")
            )
        );
        assert!(
            judge("postgres://app:Zq8vW2xK9pL4mN7r@localhost:5432/app")
                .1
                .is_some()
        );
        assert!(
            judge("postgres://app:Zq8vW2xK9pL4mN7r@db.internal:5432/app")
                .1
                .is_none()
        );
        assert!(
            judge("https://u:Zq8vW2xK9pL4mN7r@localhost.attacker.io/")
                .1
                .is_none(),
            "only the reserved domain itself and its subdomains"
        );
    }
}
