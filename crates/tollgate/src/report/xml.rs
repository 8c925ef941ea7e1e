//! Escaping for the XML formats (Checkstyle, JUnit).
//!
//! Finding texts come from models and from the code under review, so every value is escaped:
//! the five markup characters become entities, line breaks and tabs in attributes become
//! character references (an XML parser would otherwise normalise them to spaces), and
//! characters XML 1.0 cannot carry at all (most C0 controls, lone surrogates cannot occur in a
//! Rust `str`, U+FFFE/U+FFFF) become U+FFFD, since not even a character reference may name them.

/// Escapes `text` for an attribute value in double quotes.
pub(super) fn attribute(text: &str) -> String {
    escape(text, true)
}

/// Escapes `text` for element content.
pub(super) fn content(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            c if is_xml_char(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// XML 1.0's `Char` production.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_breaks_and_forbidden_characters() {
        assert_eq!(
            attribute("a<b>&\"c\"'d'\n\te\r"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;&#10;&#9;e&#13;"
        );
        assert_eq!(content("x\ny\tz]]>"), "x\ny\tz]]&gt;");
        assert_eq!(
            attribute("nul\u{0}bell\u{7}\u{FFFF}"),
            "nul\u{FFFD}bell\u{FFFD}\u{FFFD}"
        );
        assert_eq!(content("日本語 ü"), "日本語 ü");
    }
}
