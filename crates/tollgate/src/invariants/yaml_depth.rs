//! Refuses deeply nested YAML before the parser sees it.
//!
//! libyaml (under `serde_yaml_ng`) does work per token proportional to the open flow
//! collections, so `a: [[[[…` 200 KB deep took ~40 s before its recursion limit said no. This
//! one linear pass over the text over-estimates the nesting (block indentation levels, compact
//! `- `/`? ` entries and open `[`/`{`, skipping quoted scalars, block scalars and comments) and
//! stops at [`MAX_NESTING`]. Over-estimating is safe: real invariants files nest a few levels.

/// Deepest nesting of collections a YAML document may have.
pub const MAX_NESTING: usize = 64;

/// Where the nesting first goes deeper than [`MAX_NESTING`]: 1-based line and column.
pub(crate) fn too_deep(text: &str) -> Option<(usize, usize)> {
    let mut flow_depth = 0usize;
    let mut quote: Option<char> = None;
    // Indentation of the line that opened a block scalar; more-indented lines are its text.
    let mut block_scalar: Option<usize> = None;
    let mut indents: Vec<usize> = Vec::new();
    for (line_idx, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let indent = line.len() - line.trim_start_matches(' ').len();
        let blank = line.trim().is_empty();
        if let Some(parent) = block_scalar {
            if blank || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut idx = 0;
        let mut block_depth = 0;
        if quote.is_none() && flow_depth == 0 {
            if blank || line.trim_start().starts_with('#') {
                continue;
            }
            while indents.last().is_some_and(|&top| top > indent) {
                indents.pop();
            }
            if indents.last().is_none_or(|&top| top < indent) {
                indents.push(indent);
            }
            block_depth = indents.len();
            idx = line[..indent].chars().count();
            // Compact entries (`- - x`, `? - x`) nest on one line.
            while matches!(chars.get(idx), Some('-' | '?'))
                && chars.get(idx + 1).is_none_or(|c| c.is_whitespace())
            {
                block_depth += 1;
                idx += 1;
                while chars.get(idx).is_some_and(|c| c.is_whitespace()) {
                    idx += 1;
                }
            }
            if block_depth > MAX_NESTING {
                return Some((line_idx + 1, idx.min(chars.len()) + 1));
            }
        }
        let mut at_node_start = true;
        while idx < chars.len() {
            let c = chars[idx];
            match quote {
                Some('\'') => {
                    if c == '\'' {
                        if chars.get(idx + 1) == Some(&'\'') {
                            idx += 1;
                        } else {
                            quote = None;
                            at_node_start = false;
                        }
                    }
                }
                Some(_) => {
                    if c == '\\' {
                        idx += 1;
                    } else if c == '"' {
                        quote = None;
                        at_node_start = false;
                    }
                }
                None => {
                    let after_space = idx == 0 || chars[idx - 1].is_whitespace();
                    let next_is_space = chars.get(idx + 1).is_none_or(|c| c.is_whitespace());
                    match c {
                        '#' if after_space => break,
                        '[' | '{' if flow_depth > 0 || at_node_start => {
                            flow_depth += 1;
                            if block_depth + flow_depth > MAX_NESTING {
                                return Some((line_idx + 1, idx + 1));
                            }
                            at_node_start = true;
                        }
                        ']' | '}' if flow_depth > 0 => {
                            flow_depth -= 1;
                            at_node_start = false;
                        }
                        ',' if flow_depth > 0 => at_node_start = true,
                        '\'' | '"' if at_node_start => quote = Some(c),
                        '|' | '>' if at_node_start && flow_depth == 0 => {
                            block_scalar = Some(indent);
                            break;
                        }
                        ':' | '?' | '-' if next_is_space => at_node_start = true,
                        // Anchors and tags come before a node's content.
                        '&' | '!' if at_node_start => {
                            while chars.get(idx + 1).is_some_and(|c| !c.is_whitespace()) {
                                idx += 1;
                            }
                        }
                        c if c.is_whitespace() => {}
                        _ => at_node_start = false,
                    }
                }
            }
            idx += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_documents_pass() {
        let yaml = "\
sec:
  - id: a
    rule: 'it''s [not a list'
    paths: [\"src/**\", 'lib/{a,b}/**']
    deny: {regex: {pattern: \"\\\\[\", flags: i}}
    notes: |
      [[[[[[[[ text, not structure
      {{{{{{{{
    other: >-
      [ more text
  - id: b   # [ comment
    rule: a[0] is fine
    map: {a: [1, {b: [2]}]}
";
        assert_eq!(too_deep(yaml), None);
    }

    #[test]
    fn deep_flow_nesting_is_refused_at_the_bracket_past_the_limit() {
        let yaml = format!("a: {}", "[".repeat(200_000));
        assert_eq!(too_deep(&yaml), Some((1, 4 + MAX_NESTING - 1)));
        let ok = format!(
            "a: {}1{}",
            "[".repeat(MAX_NESTING - 1),
            "]".repeat(MAX_NESTING - 1)
        );
        assert_eq!(too_deep(&ok), None);
    }

    #[test]
    fn deep_block_nesting_is_refused() {
        let compact = format!("{}x", "- ".repeat(MAX_NESTING + 1));
        assert!(too_deep(&compact).is_some());
        let mut indented = String::new();
        for level in 0..=MAX_NESTING {
            indented.push_str(&format!("{}k{level}:\n", " ".repeat(level)));
        }
        assert_eq!(
            too_deep(&indented).map(|(line, _)| line),
            Some(MAX_NESTING + 1)
        );
    }
}
