//! Splitting a file into chunks (the unit the channels index) and extracting its symbols and
//! imports. Code in a supported language is chunked by syntax with tree-sitter: one chunk per
//! definition (function, method, type), its doc comments and attributes attached, methods
//! carrying their class/impl header, and gap chunks so that the code between definitions is not
//! lost. Oversized containers get a collapsed header chunk and their members recursed into;
//! oversized leaves and everything else are cut into overlapping line windows; Markdown by
//! heading sections.

use tree_sitter::{Node, Parser};

use crate::walk::Language;

/// A definition longer than this (in lines) is split.
const MAX_CHUNK_LINES: usize = 150;
/// Line windows for text and oversized leaves.
const WINDOW_LINES: usize = 50;
const WINDOW_OVERLAP: usize = 10;
/// Markdown sections shorter than this are merged into the next one.
const MIN_SECTION_LINES: usize = 5;

/// One indexable piece of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// The definition's name (`impl Foo` for impl blocks, a heading for Markdown sections).
    pub symbol: Option<String>,
    /// `function`, `method`, `class`, `struct`, …, `section`, `gap` or `window`.
    pub kind: &'static str,
    /// What gets indexed: the source span, or a collapsed view for container headers.
    pub text: String,
}

/// A definition in a file's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: &'static str,
    /// 1-based.
    pub line: usize,
    /// The definition's last line (1-based, inclusive).
    pub end_line: usize,
    /// The enclosing container (class, impl, trait), if any.
    pub parent: Option<String>,
}

/// A file cut into chunks, with its outline.
#[derive(Debug, Clone, Default)]
pub struct Chunked {
    pub chunks: Vec<Chunk>,
    pub symbols: Vec<Symbol>,
    /// Imported module paths as written (`crate::a::b`, `./util`, `os.path`).
    pub imports: Vec<String>,
}

pub fn chunk_file(language: Language, text: &str) -> Chunked {
    let ts_language: tree_sitter::Language = match language {
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::Markdown => return markdown_sections(text),
        Language::Other => {
            return Chunked {
                chunks: whole_file_windows(text),
                ..Chunked::default()
            };
        }
    };
    let mut parser = Parser::new();
    let tree = parser
        .set_language(&ts_language)
        .ok()
        .and_then(|()| parser.parse(text, None));
    let Some(tree) = tree else {
        return Chunked {
            chunks: whole_file_windows(text),
            ..Chunked::default()
        };
    };
    let mut out = Chunked::default();
    let mut cx = Cx {
        text,
        lines: LineIndex::new(text),
        language,
        out: &mut out,
    };
    cx.container_body(tree.root_node(), None);
    out.chunks.sort_by_key(|c| (c.start_line, c.end_line));
    out
}

/// Where each line of a text starts, so rows are sliced without rescanning the text (a large
/// file has hundreds of definitions).
struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    fn new(text: &'t str) -> LineIndex<'t> {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        if !text.is_empty() {
            starts.push(0);
        }
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(i, b)| b == b'\n' && i + 1 < text.len())
                .map(|(i, _)| i + 1),
        );
        LineIndex { text, starts }
    }

    /// Lines, as `split_inclusive('\n')` counts them.
    fn len(&self) -> usize {
        self.starts.len()
    }

    /// Rows `[start, end)` (0-based), newlines included; clamped to the text.
    fn rows(&self, start: usize, end: usize) -> &'t str {
        let at = |row: usize| self.starts.get(row).copied().unwrap_or(self.text.len());
        let (from, to) = (at(start), at(end.max(start)));
        &self.text[from..to]
    }
}

fn whole_file_windows(text: &str) -> Vec<Chunk> {
    let lines = LineIndex::new(text);
    windows(&lines, 1, lines.len(), None, "window")
}

struct Cx<'t, 'o> {
    text: &'t str,
    lines: LineIndex<'t>,
    language: Language,
    out: &'o mut Chunked,
}

impl Cx<'_, '_> {
    fn node_text(&self, node: Node) -> &str {
        &self.text[node.byte_range()]
    }

    /// Chunks the children of `body`: definitions on their own, the rest in gap chunks.
    fn container_body(&mut self, body: Node, parent: Option<&str>) {
        let mut gap_start: Option<usize> = None; // first line of pending gap
        let mut gap_end = 0;
        let mut gap_imports_only = true;
        let mut doc_start: Option<usize> = None; // first row of comments/attributes before a def
        let mut cursor = body.walk();
        let children: Vec<Node> = body.named_children(&mut cursor).collect();
        for (idx, child) in children.iter().enumerate() {
            self.collect_import(*child);
            let start_row = child.start_position().row;
            if is_doc_like(self.language, *child) {
                let next_is_adjacent_def = children.get(idx + 1).is_some_and(|next| {
                    definition_kind(self.language, *next, parent.is_some()).is_some()
                        || is_doc_like(self.language, *next)
                }) && children
                    .get(idx + 1)
                    .is_some_and(|next| next.start_position().row <= child.end_position().row + 1);
                if next_is_adjacent_def {
                    doc_start.get_or_insert(start_row);
                    continue;
                }
            }
            if let Some(kind) = definition_kind(self.language, *child, parent.is_some()) {
                let def_start = doc_start.take().unwrap_or(start_row);
                if let Some(start) = gap_start.take() {
                    self.gap(start, gap_end.min(def_start), gap_imports_only);
                }
                gap_imports_only = true;
                self.definition(*child, kind, def_start, parent);
            } else {
                let first = doc_start.take().unwrap_or(start_row);
                gap_start.get_or_insert(first);
                gap_end = child.end_position().row + 1;
                gap_imports_only &= is_import_or_comment(self.language, *child);
            }
        }
        if let Some(start) = doc_start {
            gap_start.get_or_insert(start);
            gap_end = gap_end.max(body.end_position().row + 1);
        }
        if let Some(start) = gap_start {
            self.gap(start, gap_end, gap_imports_only);
        }
    }

    /// A gap chunk over rows `[start, end)`, unless it is blank; `imports` when it holds only
    /// imports and comments (a header that matches every query naming a module it uses).
    fn gap(&mut self, start_row: usize, end_row: usize, imports_only: bool) {
        if end_row <= start_row {
            return;
        }
        let kind = if imports_only { "imports" } else { "gap" };
        let chunks = windows(&self.lines, start_row + 1, end_row, None, kind);
        self.out
            .chunks
            .extend(chunks.into_iter().filter(|c| !c.text.trim().is_empty()));
    }

    fn definition(
        &mut self,
        node: Node,
        kind: &'static str,
        start_row: usize,
        parent: Option<&str>,
    ) {
        // Wrappers (`export ...`, decorators) hold the real definition inside.
        let inner = unwrap_definition(self.language, node);
        let name = symbol_name(self.language, inner, self.text);
        let line = inner.start_position().row + 1;
        if let Some(name) = &name {
            self.out.symbols.push(Symbol {
                name: name.clone(),
                kind,
                line,
                end_line: node.end_position().row + 1,
                parent: parent.map(str::to_string),
            });
        }
        let end_row = node.end_position().row;
        let lines = end_row + 1 - start_row;
        let display = match (parent, &name) {
            (Some(parent), Some(name)) => Some(format!("{parent}::{name}")),
            _ => name.clone(),
        };
        let body = container_body_node(self.language, inner);
        if lines <= MAX_CHUNK_LINES {
            let text = self.rows_text(start_row, end_row + 1);
            let text = match parent {
                // A method carries its container's name so it matches queries about both.
                Some(parent) => format!("{parent}\n{text}"),
                None => text,
            };
            self.out.chunks.push(Chunk {
                start_line: start_row + 1,
                end_line: end_row + 1,
                symbol: display,
                kind,
                text,
            });
            // Members of a small container are still outline symbols.
            if let Some(body) = body {
                self.member_symbols(body, name.as_deref().unwrap_or(kind));
            }
            return;
        }
        match body {
            Some(body) => {
                // Collapsed header: everything but the body's members.
                let header_end = body.start_position().row;
                let mut text = self.rows_text(start_row, header_end + 1);
                text.push_str("    ...\n");
                self.out.chunks.push(Chunk {
                    start_line: start_row + 1,
                    end_line: header_end + 1,
                    symbol: display,
                    kind,
                    text,
                });
                let label = name.clone().unwrap_or_else(|| kind.to_string());
                self.container_body(body, Some(&label));
            }
            None => {
                self.out.chunks.extend(windows(
                    &self.lines,
                    start_row + 1,
                    end_row + 1,
                    display,
                    kind,
                ));
            }
        }
    }

    fn member_symbols(&mut self, body: Node, parent: &str) {
        let mut cursor = body.walk();
        for child in body.named_children(&mut cursor) {
            if let Some(kind) = definition_kind(self.language, child, true) {
                let inner = unwrap_definition(self.language, child);
                if let Some(name) = symbol_name(self.language, inner, self.text) {
                    self.out.symbols.push(Symbol {
                        name,
                        kind,
                        line: inner.start_position().row + 1,
                        end_line: child.end_position().row + 1,
                        parent: Some(parent.to_string()),
                    });
                }
            }
        }
    }

    /// Source of rows `[start, end)`.
    fn rows_text(&self, start_row: usize, end_row: usize) -> String {
        self.lines.rows(start_row, end_row).to_string()
    }

    fn collect_import(&mut self, node: Node) {
        let import = match (self.language, node.kind()) {
            (Language::Rust, "use_declaration") => node
                .child_by_field_name("argument")
                .map(|arg| self.node_text(arg).to_string()),
            (Language::Rust, "mod_item") if node.child_by_field_name("body").is_none() => node
                .child_by_field_name("name")
                .map(|name| format!("self::{}", self.node_text(name))),
            (Language::Python, "import_statement") => {
                let mut cursor = node.walk();
                let names: Vec<String> = node
                    .children_by_field_name("name", &mut cursor)
                    .map(|n| {
                        let n = n.child_by_field_name("name").unwrap_or(n);
                        self.node_text(n).to_string()
                    })
                    .collect();
                for name in names {
                    self.out.imports.push(name);
                }
                None
            }
            (Language::Python, "import_from_statement") => node
                .child_by_field_name("module_name")
                .map(|m| self.node_text(m).to_string()),
            (Language::JavaScript | Language::TypeScript | Language::Tsx, "import_statement")
            | (Language::JavaScript | Language::TypeScript | Language::Tsx, "export_statement") => {
                node.child_by_field_name("source").map(|s| {
                    self.node_text(s)
                        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
                        .to_string()
                })
            }
            (Language::Go, "import_declaration") => {
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    if n.kind() == "import_spec"
                        && let Some(path) = n.child_by_field_name("path")
                    {
                        let path = self.node_text(path).trim_matches('"').to_string();
                        self.out.imports.push(path);
                    }
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
                None
            }
            (Language::Java, "import_declaration") => Some(
                self.node_text(node)
                    .trim_start_matches("import")
                    .trim_end_matches(';')
                    .trim()
                    .trim_start_matches("static ")
                    .to_string(),
            ),
            _ => None,
        };
        if let Some(import) = import
            && !import.is_empty()
        {
            self.out.imports.push(import);
        }
    }
}

fn is_doc_like(language: Language, node: Node) -> bool {
    match node.kind() {
        "comment" | "line_comment" | "block_comment" => true,
        "attribute_item" | "inner_attribute_item" => {
            language == Language::Rust && node.kind() == "attribute_item"
        }
        "decorator" => true,
        _ => false,
    }
}

/// Imports, package lines and comments: what a file header is made of.
fn is_import_or_comment(language: Language, node: Node) -> bool {
    let kind = node.kind();
    kind.contains("comment")
        || match language {
            Language::Rust => {
                kind == "use_declaration"
                    || kind == "extern_crate_declaration"
                    || (kind == "mod_item" && node.child_by_field_name("body").is_none())
            }
            Language::Python => matches!(
                kind,
                "import_statement" | "import_from_statement" | "future_import_statement"
            ),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                kind == "import_statement"
                    || (kind == "export_statement" && node.child_by_field_name("source").is_some())
            }
            Language::Go => matches!(kind, "import_declaration" | "package_clause"),
            Language::Java => matches!(kind, "import_declaration" | "package_declaration"),
            Language::Markdown | Language::Other => false,
        }
}

/// The symbol kind of a definition node, or `None` for anything else.
fn definition_kind(language: Language, node: Node, in_container: bool) -> Option<&'static str> {
    let function = if in_container { "method" } else { "function" };
    let kind = match (language, node.kind()) {
        (Language::Rust, "function_item" | "function_signature_item") => function,
        (Language::Rust, "struct_item") => "struct",
        (Language::Rust, "enum_item") => "enum",
        (Language::Rust, "union_item") => "union",
        (Language::Rust, "trait_item") => "trait",
        (Language::Rust, "impl_item") => "impl",
        (Language::Rust, "mod_item") if node.child_by_field_name("body").is_some() => "module",
        (Language::Rust, "macro_definition") => "macro",
        (Language::Rust, "const_item") => "const",
        (Language::Rust, "static_item") => "static",
        (Language::Rust, "type_item") => "type",
        (Language::Python, "function_definition") => function,
        (Language::Python, "class_definition") => "class",
        (Language::Python, "decorated_definition") => {
            let inner = node.child_by_field_name("definition")?;
            return definition_kind(language, inner, in_container);
        }
        (Language::JavaScript | Language::TypeScript | Language::Tsx, kind) => match kind {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                function
            }
            "class_declaration" | "abstract_class_declaration" | "class" => "class",
            "method_definition" | "method_signature" | "abstract_method_signature" => "method",
            "interface_declaration" => "interface",
            "type_alias_declaration" => "type",
            "enum_declaration" => "enum",
            "internal_module" | "module" => "namespace",
            "lexical_declaration" | "variable_declaration" => {
                // `const f = () => ...` and `const f = function ...` are functions.
                let mut cursor = node.walk();
                let is_function = node.named_children(&mut cursor).any(|decl| {
                    decl.child_by_field_name("value").is_some_and(|v| {
                        matches!(
                            v.kind(),
                            "arrow_function" | "function_expression" | "function"
                        )
                    })
                });
                if !is_function {
                    return None;
                }
                function
            }
            "export_statement" => {
                let inner = node.child_by_field_name("declaration")?;
                return definition_kind(language, inner, in_container);
            }
            // `req.accepts = function () {…}`, `exports.parse = (s) => …`: CommonJS methods.
            "expression_statement" => {
                assigned_function(node)?;
                "function"
            }
            _ => return None,
        },
        (Language::Go, "function_declaration") => "function",
        (Language::Go, "method_declaration") => "method",
        (Language::Go, "type_declaration") => "type",
        (Language::Java, kind) => match kind {
            "class_declaration" | "record_declaration" => "class",
            "interface_declaration" | "annotation_type_declaration" => "interface",
            "enum_declaration" => "enum",
            "method_declaration" | "constructor_declaration" => "method",
            _ => return None,
        },
        _ => return None,
    };
    Some(kind)
}

/// The `a.b = function …` assignment of an expression statement, when it assigns a function.
fn assigned_function(statement: Node) -> Option<Node> {
    let assignment = statement.named_child(0)?;
    if assignment.kind() != "assignment_expression" {
        return None;
    }
    let value = assignment.child_by_field_name("right")?;
    matches!(
        value.kind(),
        "function_expression" | "function" | "arrow_function" | "generator_function"
    )
    .then_some(assignment)
}

/// The definition inside a wrapper (`export`, decorators).
fn unwrap_definition(language: Language, node: Node) -> Node {
    match (language, node.kind()) {
        (Language::Python, "decorated_definition") => {
            node.child_by_field_name("definition").unwrap_or(node)
        }
        (_, "export_statement") => node.child_by_field_name("declaration").unwrap_or(node),
        _ => node,
    }
}

fn symbol_name(language: Language, node: Node, text: &str) -> Option<String> {
    let get = |n: Node| text[n.byte_range()].to_string();
    match (language, node.kind()) {
        (Language::Rust, "impl_item") => {
            let ty = node.child_by_field_name("type").map(get)?;
            Some(match node.child_by_field_name("trait").map(get) {
                Some(tr) => format!("impl {tr} for {ty}"),
                None => format!("impl {ty}"),
            })
        }
        (Language::Go, "type_declaration") => {
            let mut cursor = node.walk();
            let spec = node
                .named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "type_spec" | "type_alias"))?;
            spec.child_by_field_name("name").map(get)
        }
        (_, "lexical_declaration" | "variable_declaration") => {
            let mut cursor = node.walk();
            let decl = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "variable_declarator")?;
            decl.child_by_field_name("name").map(get)
        }
        (Language::JavaScript | Language::TypeScript | Language::Tsx, "expression_statement") => {
            assigned_function(node)?
                .child_by_field_name("left")
                .map(get)
        }
        _ => node.child_by_field_name("name").map(get),
    }
}

/// The member list of a container definition, when it has one.
fn container_body_node(language: Language, node: Node) -> Option<Node> {
    let container = match language {
        Language::Rust => matches!(node.kind(), "impl_item" | "trait_item" | "mod_item"),
        Language::Python => node.kind() == "class_definition",
        Language::JavaScript | Language::TypeScript | Language::Tsx => matches!(
            node.kind(),
            "class_declaration"
                | "abstract_class_declaration"
                | "class"
                | "interface_declaration"
                | "internal_module"
                | "module"
        ),
        Language::Java => matches!(
            node.kind(),
            "class_declaration"
                | "interface_declaration"
                | "enum_declaration"
                | "record_declaration"
        ),
        _ => false,
    };
    if container {
        node.child_by_field_name("body")
    } else {
        None
    }
}

/// Overlapping line windows over lines `[first, last]` (1-based, inclusive).
fn windows(
    lines: &LineIndex<'_>,
    first: usize,
    last: usize,
    symbol: Option<String>,
    kind: &'static str,
) -> Vec<Chunk> {
    let last = last.min(lines.len());
    if last < first {
        return Vec::new();
    }
    let count = last + 1 - first;
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + WINDOW_LINES).min(count);
        let body = lines.rows(first - 1 + start, first - 1 + end);
        if !body.trim().is_empty() {
            out.push(Chunk {
                start_line: first + start,
                end_line: first + end - 1,
                symbol: symbol.clone(),
                kind,
                text: body.to_string(),
            });
        }
        if end >= count {
            break;
        }
        start = end - WINDOW_OVERLAP;
    }
    out
}

/// Markdown by heading sections; short sections merge into the next.
fn markdown_sections(text: &str) -> Chunked {
    let index = LineIndex::new(text);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut heads: Vec<usize> = Vec::new(); // 0-based rows starting a section
    let mut in_fence = false;
    for (row, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && trimmed.starts_with('#') && (row == 0 || heads.last() != Some(&row)) {
            heads.push(row);
        }
    }
    if heads.first() != Some(&0) {
        heads.insert(0, 0);
    }
    let mut out = Chunked::default();
    let mut pending_start: Option<usize> = None;
    for (idx, &start) in heads.iter().enumerate() {
        let end = heads.get(idx + 1).copied().unwrap_or(lines.len());
        let section_start = pending_start.unwrap_or(start);
        let is_last = idx + 1 == heads.len();
        if end - section_start < MIN_SECTION_LINES && !is_last {
            pending_start = Some(section_start);
            continue;
        }
        pending_start = None;
        let heading = lines[section_start..end]
            .iter()
            .find(|l| l.trim_start().starts_with('#'))
            .map(|l| l.trim().trim_start_matches('#').trim().to_string());
        if let Some(heading) = &heading {
            out.symbols.push(Symbol {
                name: heading.clone(),
                kind: "section",
                line: section_start + 1,
                end_line: end,
                parent: None,
            });
        }
        if end - section_start > MAX_CHUNK_LINES {
            out.chunks
                .extend(windows(&index, section_start + 1, end, heading, "section"));
        } else {
            let body: String = lines[section_start..end].concat();
            if !body.trim().is_empty() {
                out.chunks.push(Chunk {
                    start_line: section_start + 1,
                    end_line: end,
                    symbol: heading,
                    kind: "section",
                    text: body,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(chunked: &Chunked) -> Vec<(usize, usize, Option<&str>, &str)> {
        chunked
            .chunks
            .iter()
            .map(|c| (c.start_line, c.end_line, c.symbol.as_deref(), c.kind))
            .collect()
    }

    #[test]
    fn rust_definitions_docs_gaps_and_methods() {
        let src = "use std::fmt;\nuse crate::a::b;\n\n/// Adds.\n#[inline]\nfn add(a: i32) -> i32 {\n    a + 1\n}\n\nconst X: u8 = 1;\nlet_me_be!();\n\nstruct S;\n\nimpl S {\n    /// New.\n    fn new() -> S { S }\n}\n";
        let chunked = chunk_file(Language::Rust, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 2, None, "imports"),
                (4, 8, Some("add"), "function"),
                (10, 10, Some("X"), "const"),
                (11, 11, None, "gap"),
                (13, 13, Some("S"), "struct"),
                (15, 18, Some("impl S"), "impl"),
            ]
        );
        assert!(
            chunked.chunks[1]
                .text
                .starts_with("/// Adds.\n#[inline]\nfn add")
        );
        assert_eq!(chunked.imports, ["std::fmt", "crate::a::b"]);
        let names: Vec<_> = chunked
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.parent.as_deref()))
            .collect();
        assert!(
            names.contains(&("new", "method", Some("impl S"))),
            "{names:?}"
        );
    }

    #[test]
    fn oversized_containers_are_collapsed_and_recursed() {
        let mut src = String::from("class Big:\n    \"\"\"Doc.\"\"\"\n");
        for i in 0..40 {
            src.push_str(&format!(
                "    def m{i}(self):\n        x = {i}\n        return x\n\n"
            ));
        }
        let chunked = chunk_file(Language::Python, &src);
        assert_eq!(chunked.chunks[0].symbol.as_deref(), Some("Big"));
        assert!(chunked.chunks[0].text.ends_with("    ...\n"));
        let m7 = chunked
            .chunks
            .iter()
            .find(|c| c.symbol.as_deref() == Some("Big::m7"))
            .unwrap();
        assert_eq!(m7.kind, "method");
        assert!(m7.text.starts_with("Big\n    def m7"));
    }

    #[test]
    fn other_languages_and_markdown() {
        let ts = "import { a } from './util';\nexport function hello(name: string) {\n  return a(name);\n}\nexport const arrow = (x) => x;\nexport interface Shape { area(): number }\n";
        let chunked = chunk_file(Language::TypeScript, ts);
        let names: Vec<_> = chunked
            .chunks
            .iter()
            .filter_map(|c| c.symbol.as_deref())
            .collect();
        assert_eq!(names, ["hello", "arrow", "Shape"]);
        assert_eq!(chunked.imports, ["./util"]);

        let go = "package m\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n// Run runs.\nfunc (s *S) Run() { fmt.Println(os.Args) }\n\ntype S struct{}\n";
        let chunked = chunk_file(Language::Go, go);
        assert_eq!(chunked.imports, ["os", "fmt"]);
        let run = chunked
            .chunks
            .iter()
            .find(|c| c.symbol.as_deref() == Some("Run"))
            .unwrap();
        assert_eq!((run.start_line, run.kind), (8, "method"));

        let java = "import java.util.List;\n/** A. */\npublic class A {\n  void f() {}\n}\n";
        let chunked = chunk_file(Language::Java, java);
        assert_eq!(chunked.imports, ["java.util.List"]);
        assert_eq!(spans(&chunked)[1], (2, 5, Some("A"), "class"));

        let md = "# Title\n\nintro\n\n## Install\n\nrun it\nand more\nlines here\n\n## Tiny\nx\n";
        let chunked = chunk_file(Language::Markdown, md);
        // The short intro merges into the next section.
        assert_eq!(
            spans(&chunked),
            [
                (1, 10, Some("Title"), "section"),
                (11, 12, Some("Tiny"), "section")
            ]
        );

        let text: String = (1..=120).map(|i| format!("line {i}\n")).collect();
        let chunked = chunk_file(Language::Other, &text);
        assert_eq!(
            spans(&chunked),
            [
                (1, 50, None, "window"),
                (41, 90, None, "window"),
                (81, 120, None, "window")
            ]
        );
    }
}
