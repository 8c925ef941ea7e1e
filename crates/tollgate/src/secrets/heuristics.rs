//! Heuristics that tell a real secret value from a placeholder, a reference to a secret stored
//! elsewhere, or ordinary text.
//!
//! Provider detectors only ask [`is_placeholder`]: their shape is already specific. The generic
//! assignment detector asks everything here, because a name like `token` says little about the
//! value assigned to it.

/// Shannon entropy of `value` in bits per character (0 for an empty string).
///
/// Counts are summed in a fixed order (sorted characters) so the result, and any threshold
/// decision on it, is the same on every run.
pub(crate) fn shannon_entropy(value: &str) -> f64 {
    let mut chars: Vec<char> = value.chars().collect();
    if chars.is_empty() {
        return 0.0;
    }
    chars.sort_unstable();
    let n_chars = chars.len() as f64;
    chars
        .chunk_by(|a, b| a == b)
        .map(|run| {
            let p = run.len() as f64 / n_chars;
            -p * p.log2()
        })
        .sum()
}

/// Which kinds of characters a value uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CharClasses {
    pub lower: bool,
    pub upper: bool,
    pub digit: bool,
    /// Anything that is not an ASCII letter or digit.
    pub other: bool,
}

impl CharClasses {
    pub(crate) fn of(value: &str) -> CharClasses {
        let mut classes = CharClasses::default();
        for ch in value.chars() {
            match ch {
                'a'..='z' => classes.lower = true,
                'A'..='Z' => classes.upper = true,
                '0'..='9' => classes.digit = true,
                _ => classes.other = true,
            }
        }
        classes
    }

    /// How many of lowercase, uppercase and digits appear: a slug or a word has one, a random
    /// token almost always has two or three.
    pub(crate) fn n_alnum(self) -> usize {
        usize::from(self.lower) + usize::from(self.upper) + usize::from(self.digit)
    }

    pub(crate) fn n_all(self) -> usize {
        self.n_alnum() + usize::from(self.other)
    }
}

/// Length of the longest run of one repeated character.
pub(crate) fn longest_run(value: &str) -> usize {
    let mut longest = 0;
    let mut current = 0;
    let mut previous = None;
    for ch in value.chars() {
        if previous == Some(ch) {
            current += 1;
        } else {
            current = 1;
            previous = Some(ch);
        }
        longest = longest.max(current);
    }
    longest
}

/// Values that documentation, templates and tests put where a secret would go.
///
/// Substring markers are safe on provider tokens too: a random base62 token of 40 characters
/// contains a given 4-letter word with odds around 1 in 50,000, and a run of six equal characters
/// with odds below 1 in 10,000,000.
pub(crate) fn is_placeholder(value: &str) -> bool {
    const EXACT: &[&str] = &[
        "admin",
        "changeit",
        "false",
        "none",
        "null",
        "pass",
        "passwd",
        "password",
        "pwd",
        "root",
        "secret",
        "string",
        "test",
        "token",
        "true",
        "undefined",
        "user",
        "username",
    ];
    const MARKERS: &[&str] = &[
        "example",
        "changeme",
        "change_me",
        "change-me",
        "placeholder",
        "your",
        "dummy",
        "sample",
        "redacted",
        "replace",
        "xxxx",
        "***",
        "...",
        "<",
        ">",
        "fake",
        "notreal",
        "not_real",
        "not-real",
        "todo",
        "fixme",
    ];
    // Runs of one character are how people fill a value they do not want to type
    // (`xxxxxxxx`, `00000000`, `********`).
    const MIN_FILLER_RUN: usize = 6;

    let lower = value.to_ascii_lowercase();
    EXACT.contains(&lower.as_str())
        || MARKERS.iter().any(|marker| lower.contains(marker))
        || longest_run(value) >= MIN_FILLER_RUN
        || (value.chars().count() >= 2 && longest_run(value) == value.chars().count())
}

/// A value that points at a secret kept elsewhere rather than being one: template and shell
/// interpolation, environment and vault references, URLs, file paths, email addresses.
pub(crate) fn is_indirection(value: &str) -> bool {
    const TEMPLATE_MARKERS: &[&str] = &["${", "{{", "#{", "%(", "$(", "%s", "://"];
    const REFERENCE_PREFIXES: &[&str] = &[
        "env:", "vault:", "ref+", "arn:", "ssm:", "secrets.", "./", "../", "~/",
    ];
    if TEMPLATE_MARKERS.iter().any(|marker| value.contains(marker))
        || REFERENCE_PREFIXES
            .iter()
            .any(|prefix| value.starts_with(prefix))
    {
        return true;
    }
    // An absolute path has a second slash; requiring it keeps the 1 in 64 base64 secrets that
    // happen to start with `/` detectable.
    if value
        .strip_prefix('/')
        .is_some_and(|rest| rest.contains('/'))
    {
        return true;
    }
    let mut chars = value.chars();
    let first = chars.next();
    let last = value.chars().next_back();
    let second = chars.next();
    // `$NAME`, `${NAME}`, `$(cmd)`, but not a secret that merely starts with `$`.
    if first == Some('$') && second.is_some_and(|ch| ch.is_ascii_alphabetic() || "_{(".contains(ch))
    {
        return true;
    }
    // `%NAME%` (Windows), `{name}` (format strings), `<name>` and `[name]` (docs).
    if value.len() > 2
        && matches!(
            (first, last),
            (Some('%'), Some('%'))
                | (Some('{'), Some('}'))
                | (Some('<'), Some('>'))
                | (Some('['), Some(']'))
        )
    {
        return true;
    }
    is_email(value)
}

/// A bare (unquoted) value that reads as code: a variable, a member path or a call.
///
/// `next` is the character right after the value; `(` or `[` there means a call or an index.
pub(crate) fn is_code_reference(value: &str, next: Option<char>) -> bool {
    if matches!(next, Some('(' | '[' | '{' | '<')) {
        return true;
    }
    // A YAML tag (`!vault`, `!Ref`) or a dereference (`*ptr`, `&config`).
    if value.starts_with(['!', '*', '&']) {
        return true;
    }
    let segments: Vec<&str> = value
        .split(['.', ':'])
        .flat_map(|part| part.split("->"))
        .filter(|segment| !segment.is_empty())
        .collect();
    if segments.len() > 1 {
        // `settings.API_KEY`, `process.env.TOKEN`, `env::var`: member paths, not values. A random
        // value containing dots would need every dot-separated piece to start with a letter.
        return segments.iter().all(|segment| is_identifier(segment));
    }
    if !is_identifier(value) {
        return false;
    }
    let classes = CharClasses::of(value);
    // A bare identifier without digits is a variable (`accessToken`); one in CONSTANT_CASE or
    // snake_case is a constant or a variable even with digits (`API_KEY_V2`, `token_2`).
    let single_case_with_underscores = value.contains('_') && !(classes.lower && classes.upper);
    !classes.digit || single_case_with_underscores
}

fn is_identifier(value: &str) -> bool {
    let mut chars = value.chars();
    chars
        .next()
        .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_' || ch == '$')
        && chars.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$')
}

fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.split_once('@') else {
        return false;
    };
    let Some((_, tld)) = domain.rsplit_once('.') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && tld.len() >= 2
        && tld.chars().all(|ch| ch.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_simple_strings() {
        assert!(shannon_entropy("").abs() < f64::EPSILON);
        assert!(shannon_entropy("aaaa").abs() < f64::EPSILON);
        assert!((shannon_entropy("ab") - 1.0).abs() < 1e-9);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-9);
        assert!((shannon_entropy("a1B2".repeat(9).as_str()) - 2.0).abs() < 1e-9);
        // Multibyte characters count once each.
        assert!((shannon_entropy("éü") - 1.0).abs() < 1e-9);
    }

    #[test]
    fn char_classes() {
        let classes = CharClasses::of("aB3-");
        assert_eq!(classes.n_alnum(), 3);
        assert_eq!(classes.n_all(), 4);
        assert_eq!(CharClasses::of("abc").n_alnum(), 1);
        assert_eq!(CharClasses::of("é").n_all(), 1);
    }

    #[test]
    fn runs() {
        assert_eq!(longest_run(""), 0);
        assert_eq!(longest_run("abc"), 1);
        assert_eq!(longest_run("abbbc"), 3);
        assert_eq!(longest_run("ééé"), 3);
    }

    #[test]
    fn placeholders() {
        for value in [
            "changeme",
            "Your-Token-Here",
            "xxxxxxxx",
            "********",
            "000000000",
            "example",
            "<token>",
            "password",
            "zz",
            "ab...cd",
        ] {
            assert!(is_placeholder(value), "{value}");
        }
        for value in ["q8Zr3LmT0vXw", "a1B2a1B2", "hunter2"] {
            assert!(!is_placeholder(value), "{value}");
        }
    }

    #[test]
    fn indirections() {
        for value in [
            "${SECRET}",
            "$SECRET",
            "$(cat /run/secret)",
            "{{ .Values.token }}",
            "#{token}",
            "%(password)s",
            "%DB_PASSWORD%",
            "{password}",
            "<your-token>",
            "[TOKEN]",
            "vault:secret/data/db#password",
            "op://vault/item/field",
            "https://auth.example.org/token",
            "/run/secrets/db_password",
            "./secrets/token.txt",
            "jane@company.org",
        ] {
            assert!(is_indirection(value), "{value}");
        }
        for value in ["q8Zr3LmT0vXw", "$9a8B7c6", "/b+c9=", "!Qz8rT3w", "ab%cd"] {
            assert!(!is_indirection(value), "{value}");
        }
    }

    #[test]
    fn code_references() {
        for (value, next) in [
            ("process.env.GITHUB_TOKEN", None),
            ("os.environ", Some('[')),
            ("getToken", Some('(')),
            ("uuid4", Some('(')),
            ("accessToken", None),
            ("self.password", None),
            ("env::var", Some('(')),
            ("API_KEY_V2", None),
            ("token_2", None),
            ("this->secret", None),
            ("!vault", None),
        ] {
            assert!(is_code_reference(value, next), "{value}");
        }
        for value in ["q8Zr3LmT0vXw9", "3f9a0c7e1b2d", "Ab1_Cd2_Ef3", "a/b+c9="] {
            assert!(!is_code_reference(value, None), "{value}");
        }
    }
}
