//! A YAML tree that remembers where each scalar was written, so every validation error in an
//! invariants file can name its line and column.
//!
//! `serde_yaml_ng` 0.10 has no span API: `Value` is position-less and only *errors* carry a
//! location. So the tree is built by a visitor that, for each scalar, stores the value in a slot
//! and returns a marker error; the deserializer stamps that error with the scalar's position
//! (`fix_mark`), and the enclosing sequence or mapping visitor catches it, reads the position and
//! carries on. The scalar's event is consumed before the visitor runs, so the deserializer's state
//! stays consistent. Because the sequence and mapping accessors are generic, the position is read
//! back from the error's `Display` (`… at line L column C`); the tests at the bottom pin this
//! behaviour, so a `serde_yaml_ng` upgrade that changes it fails loudly rather than silently.
//!
//! Containers have no position of their own in this scheme: a mapping or sequence takes the
//! position of its first child (for a rule, its first key, which is the `- id: …` line in the
//! usual layout), and an empty one has none.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

/// A 1-based line and column in the YAML text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    pub const START: Pos = Pos { line: 1, column: 1 };
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub value: Value,
    /// Where the node starts; `None` only for empty containers.
    pub pos: Option<Pos>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries in document order; duplicate keys are kept so the loader can report them.
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// A short name of the node's kind for "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

impl Node {
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(text) => Some(text),
            _ => None,
        }
    }

    /// The node's text when it is a scalar (used for mapping keys, which YAML lets be numbers).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(text) => Some(text.clone()),
            Value::Int(n) => Some(n.to_string()),
            Value::Float(x) => Some(x.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Null => Some("null".to_string()),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }

    pub fn pos_or(&self, fallback: Pos) -> Pos {
        self.pos.unwrap_or(fallback)
    }
}

/// The text is not well-formed YAML (or is too large a tree to build).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

/// Upper bound on nodes built from one document, so alias expansion ("billion laughs") cannot
/// exhaust memory. `serde_yaml_ng` bounds alias jumps to 100× the event count, which is still
/// far too much for a 1 MiB file; real invariants files have a few thousand nodes.
const MAX_NODES: usize = 200_000;

/// Parses one YAML document into a positioned tree. An empty document is `Null`.
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    if let Some((line, column)) = crate::invariants::yaml_depth::too_deep(text) {
        return Err(SyntaxError {
            pos: Pos { line, column },
            message: format!(
                "the document nests deeper than {} levels; flatten it",
                crate::invariants::yaml_depth::MAX_NESTING
            ),
        });
    }
    let budget = Cell::new(MAX_NODES);
    let mut slot = None;
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    match (NodeSeed {
        scalar: &mut slot,
        budget: &budget,
    })
    .deserialize(deserializer)
    {
        Ok(node) => Ok(node),
        Err(err) => match slot.take() {
            Some(value) if probe_position(&err.to_string()).is_some() => Ok(Node {
                value,
                pos: probe_position(&err.to_string()),
            }),
            _ => Err(syntax_error(&err)),
        },
    }
}

/// Marks the error a scalar visitor returns on purpose. Control characters keep it from
/// colliding with anything a user could plausibly write as a key (keys appear in the path
/// prefix of the error message).
const PROBE: &str = "\u{1}tollgate-yaml-position\u{1}";
const TOO_MANY_NODES: &str = "document has too many nodes (alias expansion?)";

fn syntax_error(err: &serde_yaml_ng::Error) -> SyntaxError {
    let pos = err.location().map_or(Pos::START, |loc| Pos {
        line: loc.line().max(1),
        column: loc.column().max(1),
    });
    SyntaxError {
        pos,
        message: strip_locations(&err.to_string()),
    }
}

/// Removes the ` at line L column C` fragments `serde_yaml_ng` appends, since the position is
/// reported separately.
fn strip_locations(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(idx) = rest.find(" at line ") {
        out.push_str(&rest[..idx]);
        let after = &rest[idx + " at line ".len()..];
        match parse_line_column(after) {
            Some((_, consumed)) => rest = &after[consumed..],
            None => {
                out.push_str(" at line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parses `L column C` at the start of `text`; returns the position and the bytes consumed.
fn parse_line_column(text: &str) -> Option<(Pos, usize)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let n_line = digits(text);
    let line: usize = text.get(..n_line)?.parse().ok()?;
    let rest = text[n_line..].strip_prefix(" column ")?;
    let n_column = digits(rest);
    let column: usize = rest.get(..n_column)?.parse().ok()?;
    let consumed = n_line + " column ".len() + n_column;
    Some((Pos { line, column }, consumed))
}

/// The position stamped on a probe error, read from its message. A probe at 1:1 carries no
/// location text (`serde_yaml_ng` omits it there).
fn probe_position(message: &str) -> Option<Pos> {
    let idx = message.rfind(PROBE)?;
    let rest = &message[idx + PROBE.len()..];
    if rest.is_empty() {
        return Some(Pos::START);
    }
    let (pos, consumed) = parse_line_column(rest.strip_prefix(" at line ")?)?;
    (consumed + " at line ".len() == rest.len()).then_some(pos)
}

struct NodeSeed<'a> {
    scalar: &'a mut Option<Value>,
    budget: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Node;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor {
            scalar: self.scalar,
            budget: self.budget,
        })
    }
}

struct NodeVisitor<'a> {
    scalar: &'a mut Option<Value>,
    budget: &'a Cell<usize>,
}

impl NodeVisitor<'_> {
    fn probe<E: de::Error>(self, value: Value) -> Result<Node, E> {
        spend(self.budget)?;
        *self.scalar = Some(value);
        Err(E::custom(PROBE))
    }
}

fn spend<E: de::Error>(budget: &Cell<usize>) -> Result<(), E> {
    match budget.get().checked_sub(1) {
        Some(left) => {
            budget.set(left);
            Ok(())
        }
        None => Err(E::custom(TOO_MANY_NODES)),
    }
}

/// Turns the outcome of deserializing one child into a node: a probe error becomes a positioned
/// scalar, any other error propagates.
fn child<E: de::Error>(result: Result<Node, E>, slot: &mut Option<Value>) -> Result<Node, E> {
    match result {
        Ok(node) => Ok(node),
        Err(err) => match (slot.take(), probe_position(&err.to_string())) {
            (Some(value), Some(pos)) => Ok(Node {
                value,
                pos: Some(pos),
            }),
            _ => Err(err),
        },
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        self.probe(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        self.probe(Value::Int(i128::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        self.probe(Value::Int(i128::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        self.probe(Value::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        match i128::try_from(v) {
            Ok(v) => self.probe(Value::Int(v)),
            Err(_) => self.probe(Value::Float(v as f64)),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        self.probe(Value::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        self.probe(Value::Str(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        self.probe(Value::Str(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        self.probe(Value::Str(String::from_utf8_lossy(v).into_owned()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        self.probe(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        self.probe(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        NodeSeed {
            scalar: self.scalar,
            budget: self.budget,
        }
        .deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        spend(self.budget)?;
        let mut items = Vec::new();
        loop {
            let mut slot = None;
            let result = seq.next_element_seed(NodeSeed {
                scalar: &mut slot,
                budget: self.budget,
            });
            let item = match result {
                Ok(Some(node)) => node,
                Ok(None) => break,
                Err(err) => child(Err(err), &mut slot)?,
            };
            items.push(item);
        }
        let pos = items.iter().find_map(|item| item.pos);
        Ok(Node {
            value: Value::Seq(items),
            pos,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        spend(self.budget)?;
        let mut entries = Vec::new();
        loop {
            let mut slot = None;
            let result = map.next_key_seed(NodeSeed {
                scalar: &mut slot,
                budget: self.budget,
            });
            let key = match result {
                Ok(Some(node)) => node,
                Ok(None) => break,
                Err(err) => child(Err(err), &mut slot)?,
            };
            let mut slot = None;
            let result = map.next_value_seed(NodeSeed {
                scalar: &mut slot,
                budget: self.budget,
            });
            let value = child(result, &mut slot)?;
            entries.push((key, value));
        }
        let pos = entries.first().and_then(|(key, _)| key.pos);
        Ok(Node {
            value: Value::Map(entries),
            pos,
        })
    }

    /// A tagged node (`!foo value`): the tag is dropped and the value kept. Any probe error of
    /// the inner scalar passes through to the caller, who owns the slot.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        use serde::de::VariantAccess;
        let (_tag, variant): (de::IgnoredAny, _) = data.variant()?;
        variant.newtype_variant_seed(NodeSeed {
            scalar: self.scalar,
            budget: self.budget,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Option<Pos> {
        Some(Pos { line, column })
    }

    fn map(node: &Node) -> &[(Node, Node)] {
        match &node.value {
            Value::Map(entries) => entries,
            other => panic!("expected a mapping, got {other:?}"),
        }
    }

    fn seq(node: &Node) -> &[Node] {
        match &node.value {
            Value::Seq(items) => items,
            other => panic!("expected a list, got {other:?}"),
        }
    }

    #[test]
    fn every_scalar_knows_its_line_and_column() {
        let text = "\
security:
  - id: no-eval
    rule: \"No eval\"
    paths: ['src/**', \"lib/*.js\"]
    confidence: 0.5
    enabled: false
    count: 3
    nothing:
";
        let root = parse(text).unwrap();
        assert_eq!(root.pos, at(1, 1));
        let (section_key, rules) = &map(&root)[0];
        assert_eq!(section_key.as_str(), Some("security"));
        let rule = &seq(rules)[0];
        assert_eq!(rule.pos, at(2, 5));
        let entries = map(rule);
        let find = |key: &str| {
            entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .unwrap()
        };
        assert_eq!(find("id").1.pos, at(2, 9));
        assert_eq!(find("id").1.as_str(), Some("no-eval"));
        assert_eq!(find("rule").1.pos, at(3, 11));
        let paths = seq(&find("paths").1);
        assert_eq!(paths[0].pos, at(4, 13));
        assert_eq!(paths[1].pos, at(4, 23));
        assert_eq!(paths[1].as_str(), Some("lib/*.js"));
        assert_eq!(find("confidence").1.value, Value::Float(0.5));
        assert_eq!(find("enabled").1.value, Value::Bool(false));
        assert_eq!(find("count").1.value, Value::Int(3));
        assert_eq!(find("nothing").1.value, Value::Null);
        assert_eq!(find("nothing").0.pos, at(8, 5));
    }

    #[test]
    fn first_scalar_of_the_document_is_at_one_one() {
        let root = parse("just text").unwrap();
        assert_eq!(root.value, Value::Str("just text".into()));
        assert_eq!(root.pos, at(1, 1));
        let root = parse("a: 1").unwrap();
        assert_eq!(map(&root)[0].0.pos, at(1, 1));
        assert_eq!(map(&root)[0].1.pos, at(1, 4));
    }

    #[test]
    fn empty_document_is_null() {
        assert_eq!(parse("").unwrap().value, Value::Null);
        assert_eq!(parse("# only a comment\n").unwrap().value, Value::Null);
    }

    #[test]
    fn duplicate_keys_are_kept_for_the_loader_to_report() {
        let root = parse("a: 1\na: 2\n").unwrap();
        assert_eq!(map(&root).len(), 2);
        assert_eq!(map(&root)[1].0.pos, at(2, 1));
    }

    #[test]
    fn keys_that_look_like_a_path_prefix_do_not_confuse_positions() {
        let root = parse("\"x at line 9 column 9\":\n  - \"y at line 7 column 7\"\n").unwrap();
        let (key, value) = &map(&root)[0];
        assert_eq!(key.pos, at(1, 1));
        assert_eq!(seq(value)[0].pos, at(2, 5));
        assert_eq!(seq(value)[0].as_str(), Some("y at line 7 column 7"));
    }

    #[test]
    fn tags_are_dropped_and_aliases_resolved() {
        let root = parse("a: !custom tagged\nb: &x anchored\nc: *x\n").unwrap();
        let entries = map(&root);
        assert_eq!(entries[0].1.as_str(), Some("tagged"));
        assert_eq!(entries[2].1.as_str(), Some("anchored"));
        // An anchored scalar starts at its anchor.
        assert_eq!(entries[2].1.pos, at(2, 4));
    }

    #[test]
    fn block_scalars_and_flow_mappings_have_positions() {
        let text = "r:\n  - {id: a, pattern: 'x\\y'}\n  - text: |\n      two\n      lines\n";
        let root = parse(text).unwrap();
        let items = seq(&map(&root)[0].1);
        assert_eq!(map(&items[0])[1].1.pos, at(2, 22));
        assert_eq!(map(&items[0])[1].1.as_str(), Some("x\\y"));
        assert_eq!(map(&items[1])[0].1.as_str(), Some("two\nlines\n"));
        assert_eq!(map(&items[1])[0].1.pos, at(3, 11));
    }

    #[test]
    fn syntax_errors_carry_the_position_without_repeating_it() {
        let err = parse("a: [1, 2\nb: c\n").unwrap_err();
        assert!(err.pos.line >= 1, "{err:?}");
        assert!(!err.message.contains(" at line "), "{}", err.message);
        let err = parse("a: b\n  c: d\n").unwrap_err();
        assert_eq!(err.pos.line, 2, "{err:?}");
        let err = parse("key: \"unterminated\n").unwrap_err();
        assert!(!err.message.is_empty());
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..9 {
            let prev = level - 1;
            text.push_str(&format!(
                "a{level}: &a{level} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let err = parse(&text).unwrap_err();
        assert!(
            err.message.contains("too many nodes") || err.message.contains("repetition limit"),
            "{err:?}"
        );
    }

    #[test]
    fn strip_locations_keeps_other_text() {
        assert_eq!(
            strip_locations(
                "did not find expected key at line 2 column 3, while parsing a block mapping at line 1 column 1"
            ),
            "did not find expected key, while parsing a block mapping"
        );
        assert_eq!(strip_locations("at line x"), "at line x");
    }
}
