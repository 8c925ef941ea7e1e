//! Splitting a file into chunks (the unit the channels index) and extracting its symbols and
//! imports. Code in a supported language is chunked by syntax with tree-sitter: one chunk per
//! definition (function, method, type), its doc comments and attributes attached, methods
//! carrying their class/impl header, and gap chunks so that the code between definitions is not
//! lost. Oversized containers get a collapsed header chunk and their members recursed into;
//! oversized leaves and everything else are cut into overlapping line windows; Markdown by
//! heading sections.
//!
//! Languages chunked by syntax: Rust, TypeScript/TSX/JavaScript, Python, Go, Java, C, C++, C#,
//! Ruby, PHP, Kotlin (the kotlin-sg grammar) and Swift. C/C++ preprocessor conditionals,
//! `extern "C"` blocks and parse errors are transparent: their definitions are chunked as if
//! they sat at the enclosing level. Functions in a namespace are functions; in a type (or a Ruby
//! module, Rust impl or module) they are methods.

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
        Language::C => tree_sitter_c::LANGUAGE.into(),
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        // LANGUAGE_PHP, not LANGUAGE_PHP_ONLY: `.php` files open with `<?php` and may hold HTML.
        Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Language::Kotlin => tree_sitter_kotlin_sg::LANGUAGE.into(),
        Language::Swift => tree_sitter_swift::LANGUAGE.into(),
        Language::Markdown => return markdown_sections(text),
        // No grammar compiled in: line windows.
        Language::Scala | Language::Elixir | Language::Dart | Language::Other => {
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
    cx.container_body(tree.root_node(), None, false);
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
    /// `methods`: whether functions here are methods (a type's members, not a namespace's).
    fn container_body(&mut self, body: Node, parent: Option<&str>, methods: bool) {
        let mut gap_start: Option<usize> = None; // first line of pending gap
        let mut gap_end = 0;
        let mut gap_imports_only = true;
        let mut doc_start: Option<usize> = None; // first row of comments/attributes before a def
        let mut cursor = body.walk();
        let children: Vec<Node> = body.named_children(&mut cursor).collect();
        for (idx, child) in children.iter().enumerate() {
            self.collect_import(*child);
            let start_row = child.start_position().row;
            // Preprocessor conditionals, `extern "C" {}` and parse errors hold definitions that
            // belong to this level: chunk them in place.
            if let Some(inner) = transparent_body(self.language, *child) {
                if let Some(start) = gap_start.take() {
                    self.gap(start, gap_end.min(start_row), gap_imports_only);
                }
                gap_imports_only = true;
                self.container_body(inner, parent, methods);
                continue;
            }
            if is_doc_like(self.language, *child) {
                let next_is_adjacent_def = children.get(idx + 1).is_some_and(|next| {
                    definition_kind(self.language, *next, methods).is_some()
                        || is_doc_like(self.language, *next)
                }) && children
                    .get(idx + 1)
                    .is_some_and(|next| next.start_position().row <= last_row(*child) + 1);
                if next_is_adjacent_def {
                    doc_start.get_or_insert(start_row);
                    continue;
                }
            }
            if let Some(kind) = definition_kind(self.language, *child, methods) {
                let def_start = doc_start.take().unwrap_or(start_row);
                if let Some(start) = gap_start.take() {
                    self.gap(start, gap_end.min(def_start), gap_imports_only);
                }
                gap_imports_only = true;
                self.definition(*child, kind, def_start, parent);
            } else {
                let first = doc_start.take().unwrap_or(start_row);
                gap_start.get_or_insert(first);
                gap_end = last_row(*child) + 1;
                gap_imports_only &= is_import_or_comment(self.language, *child, self.text);
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
                end_line: last_row(node) + 1,
                parent: parent.map(str::to_string),
            });
        }
        let end_row = last_row(node);
        let lines = end_row + 1 - start_row;
        let display = match (parent, &name) {
            (Some(parent), Some(name)) => Some(format!("{parent}::{name}")),
            _ => name.clone(),
        };
        let body = container_body_node(self.language, inner);
        // A namespace's functions are functions; a class's, module's or impl's are methods.
        let methods = kind != "namespace";
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
                self.member_symbols(body, name.as_deref().unwrap_or(kind), methods);
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
                self.container_body(body, Some(&label), methods);
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

    fn member_symbols(&mut self, body: Node, parent: &str, methods: bool) {
        let mut cursor = body.walk();
        for child in body.named_children(&mut cursor) {
            if let Some(kind) = definition_kind(self.language, child, methods) {
                let inner = unwrap_definition(self.language, child);
                if let Some(name) = symbol_name(self.language, inner, self.text) {
                    self.out.symbols.push(Symbol {
                        name,
                        kind,
                        line: inner.start_position().row + 1,
                        end_line: last_row(child) + 1,
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
            (Language::C | Language::Cpp, "preproc_include") => node
                .child_by_field_name("path")
                .map(|path| strip_quotes(self.node_text(path))),
            // `using namespace std;`, `using std::string;`; inside a class `using Base::f;` only
            // brings a member into scope.
            (Language::Cpp, "using_declaration")
                if node
                    .parent()
                    .is_none_or(|p| p.kind() != "field_declaration_list") =>
            {
                let mut cursor = node.walk();
                let used = node
                    .named_children(&mut cursor)
                    .find(|c| matches!(c.kind(), "identifier" | "qualified_identifier"));
                used.map(|n| self.node_text(n).to_string())
            }
            (Language::CSharp, "using_directive") => {
                // `name` is only the alias of `using A = B;`: the import is the other name.
                let alias = node.child_by_field_name("name").map(|n| n.id());
                let mut cursor = node.walk();
                let used = node.named_children(&mut cursor).find(|c| {
                    Some(c.id()) != alias
                        && matches!(
                            c.kind(),
                            "identifier"
                                | "qualified_name"
                                | "generic_name"
                                | "alias_qualified_name"
                        )
                });
                used.map(|n| self.node_text(n).to_string())
            }
            (Language::Ruby, "call") => {
                ruby_require(node, self.text).map(|path| strip_quotes(self.node_text(path)))
            }
            (Language::Php, "namespace_use_declaration") => {
                let names = php_use_names(node, self.text);
                self.out.imports.extend(names);
                None
            }
            (Language::Php, "expression_statement") => php_require(node)
                .and_then(first_string)
                .map(|path| strip_quotes(self.node_text(path))),
            (Language::Kotlin, "import_list") => {
                let mut cursor = node.walk();
                let headers: Vec<Node> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() == "import_header")
                    .collect();
                for header in headers {
                    let mut cursor = header.walk();
                    let path = header
                        .named_children(&mut cursor)
                        .find(|c| c.kind() == "identifier");
                    if let Some(path) = path {
                        let path = self.node_text(path);
                        let wildcard = self.node_text(header).trim_end().ends_with('*');
                        let import = if wildcard {
                            format!("{path}.*")
                        } else {
                            path.to_string()
                        };
                        self.out.imports.push(import);
                    }
                }
                None
            }
            (Language::Swift, "import_declaration") => {
                let mut cursor = node.walk();
                let module = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "identifier");
                module.map(|n| self.node_text(n).to_string())
            }
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
    // The new languages' attributes and annotations are children of the definition itself.
    match node.kind() {
        "comment" | "line_comment" | "block_comment" | "multiline_comment" => true,
        "attribute_item" | "inner_attribute_item" => {
            language == Language::Rust && node.kind() == "attribute_item"
        }
        "decorator" => true,
        _ => false,
    }
}

/// Imports, package lines and comments: what a file header is made of.
fn is_import_or_comment(language: Language, node: Node, text: &str) -> bool {
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
            Language::C | Language::Cpp => matches!(
                kind,
                "preproc_include" | "using_declaration" | "namespace_alias_definition"
            ),
            Language::CSharp => matches!(
                kind,
                "using_directive" | "extern_alias_directive" | "file_scoped_namespace_declaration"
            ),
            Language::Ruby => ruby_require(node, text).is_some(),
            Language::Php => {
                matches!(
                    kind,
                    "php_tag" | "namespace_use_declaration" | "declare_statement"
                ) || (kind == "namespace_definition" && node.child_by_field_name("body").is_none())
                    || php_require(node).is_some()
            }
            Language::Kotlin => matches!(kind, "package_header" | "import_list"),
            Language::Swift => kind == "import_declaration",
            Language::Scala
            | Language::Elixir
            | Language::Dart
            | Language::Markdown
            | Language::Other => false,
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
        (Language::C | Language::Cpp, kind) => {
            return c_definition_kind(language, node, kind, function);
        }
        (Language::CSharp, kind) => match kind {
            "class_declaration" | "record_declaration" => "class",
            "struct_declaration" => "struct",
            "interface_declaration" => "interface",
            "enum_declaration" => "enum",
            "namespace_declaration" => "namespace",
            "delegate_declaration" => "type",
            "method_declaration"
            | "constructor_declaration"
            | "destructor_declaration"
            | "operator_declaration"
            | "conversion_operator_declaration" => "method",
            // Top-level statements' local functions.
            "local_function_statement" => function,
            _ => return None,
        },
        (Language::Ruby, kind) => match kind {
            "method" => function,
            "singleton_method" => "method",
            "class" | "singleton_class" => "class",
            "module" => "module",
            _ => return None,
        },
        (Language::Php, kind) => match kind {
            "function_definition" => function,
            "method_declaration" => "method",
            "class_declaration" => "class",
            "interface_declaration" => "interface",
            "trait_declaration" => "trait",
            "enum_declaration" => "enum",
            // `namespace A;` without braces is a header line; its declarations are siblings.
            "namespace_definition" if node.child_by_field_name("body").is_some() => "namespace",
            _ => return None,
        },
        (Language::Kotlin, kind) => match kind {
            "function_declaration" => function,
            "secondary_constructor" => "method",
            "class_declaration" => kotlin_class_kind(node),
            "object_declaration" | "companion_object" => "class",
            "type_alias" => "type",
            _ => return None,
        },
        (Language::Swift, kind) => match kind {
            "function_declaration" => function,
            "init_declaration"
            | "deinit_declaration"
            | "subscript_declaration"
            | "protocol_function_declaration" => "method",
            // `declaration_kind` is an anonymous token: its kind is the keyword.
            "class_declaration" => match node.child_by_field_name("declaration_kind")?.kind() {
                "struct" => "struct",
                "enum" => "enum",
                "extension" => "impl",
                _ => "class", // class, actor
            },
            "protocol_declaration" => "interface",
            "typealias_declaration" => "type",
            _ => return None,
        },
        _ => return None,
    };
    Some(kind)
}

/// C and C++ definitions. Forward declarations (`struct x;`, `class Fwd;`) have no body and are
/// not definitions; neither are top-level prototypes (a header would be a chunk per line).
fn c_definition_kind(
    language: Language,
    node: Node,
    kind: &str,
    function: &'static str,
) -> Option<&'static str> {
    let has_body = node.child_by_field_name("body").is_some();
    let cpp = language == Language::Cpp;
    let kind = match kind {
        "function_definition" => function,
        "struct_specifier" if has_body => "struct",
        "union_specifier" if has_body => "union",
        "enum_specifier" if has_body => "enum",
        "type_definition" => "type",
        "preproc_function_def" => "macro",
        "class_specifier" if cpp && has_body => "class",
        "namespace_definition" if cpp => "namespace",
        "alias_declaration" | "concept_definition" if cpp => "type",
        // In-class prototypes (`void draw();`, `Widget();`, `virtual int size() = 0;`).
        "field_declaration" | "declaration"
            if cpp
                && function == "method"
                && node
                    .child_by_field_name("declarator")
                    .is_some_and(declares_function) =>
        {
            "method"
        }
        "template_declaration" if cpp => {
            let inner = unwrap_definition(language, node);
            if inner.id() == node.id() {
                return None;
            }
            return definition_kind(language, inner, function == "method");
        }
        _ => return None,
    };
    Some(kind)
}

/// Whether a C/C++ declarator chain declares a function (a prototype, not a variable).
fn declares_function(mut declarator: Node) -> bool {
    loop {
        if declarator.kind() == "function_declarator" {
            return true;
        }
        let next = declarator.child_by_field_name("declarator").or_else(|| {
            // These wrap their declarator without a field.
            matches!(
                declarator.kind(),
                "reference_declarator" | "parenthesized_declarator"
            )
            .then(|| declarator.named_child(0))
            .flatten()
        });
        match next {
            Some(next) => declarator = next,
            None => return false,
        }
    }
}

/// The name node at the end of a C/C++ declarator chain: `*names(…)`, `(*fp)(…)`,
/// `&Widget::get()`, `~Widget`.
fn declarator_name(mut declarator: Node) -> Option<Node> {
    loop {
        match declarator.kind() {
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name"
            | "operator_cast"
            | "template_function"
            | "template_method"
            | "primitive_type" => return Some(declarator),
            // `reference_declarator`, `parenthesized_declarator` and `attributed_declarator`
            // have no `declarator` field: theirs is the first named child.
            _ => {
                declarator = declarator.child_by_field_name("declarator").or_else(|| {
                    let mut cursor = declarator.walk();
                    declarator.named_children(&mut cursor).find(|c| {
                        !matches!(
                            c.kind(),
                            "type_qualifier" | "ms_pointer_modifier" | "attribute_declaration"
                        )
                    })
                })?;
            }
        }
    }
}

/// A Kotlin `class_declaration` is also how interfaces and enums are written: the grammar
/// (kotlin-sg) keeps the keyword as an anonymous child.
fn kotlin_class_kind(node: Node) -> &'static str {
    let mut cursor = node.walk();
    let keyword = node.children(&mut cursor).find_map(|c| match c.kind() {
        "interface" => Some("interface"),
        "enum" | "enum_class_body" => Some("enum"),
        _ => None,
    });
    keyword.unwrap_or("class")
}

/// Containers whose children belong to the enclosing level: preprocessor conditionals (header
/// guards wrap whole C/C++ files), `extern "C" { }`, and parse errors (Kotlin's grammar
/// mis-parses some valid code; the definitions inside an ERROR node still parse).
fn transparent_body(language: Language, node: Node) -> Option<Node> {
    if node.is_error() {
        return Some(node);
    }
    match (language, node.kind()) {
        (
            Language::C | Language::Cpp,
            "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif" | "preproc_elifdef",
        ) => Some(node),
        (Language::C | Language::Cpp, "linkage_specification") => node.child_by_field_name("body"),
        _ => None,
    }
}

/// A node's last row (0-based). C/C++ preprocessor lines include their newline, so they end at
/// column 0 of the next row.
fn last_row(node: Node) -> usize {
    let (start, end) = (node.start_position(), node.end_position());
    if end.column == 0 && end.row > start.row {
        end.row - 1
    } else {
        end.row
    }
}

/// `require 'x'`, `require_relative "x"`, `load 'x'`: the path's string node.
fn ruby_require<'t>(node: Node<'t>, text: &str) -> Option<Node<'t>> {
    if node.kind() != "call" || node.child_by_field_name("receiver").is_some() {
        return None;
    }
    let method = node.child_by_field_name("method")?;
    if !matches!(
        &text[method.byte_range()],
        "require" | "require_relative" | "load" | "autoload"
    ) {
        return None;
    }
    let first = node.child_by_field_name("arguments")?.named_child(0)?;
    (first.kind() == "string").then_some(first)
}

/// `require_once 'x';`, `include __DIR__ . '/x.php';`: the require/include expression.
fn php_require(node: Node) -> Option<Node> {
    if node.kind() != "expression_statement" {
        return None;
    }
    let expr = node.named_child(0)?;
    matches!(
        expr.kind(),
        "require_expression"
            | "require_once_expression"
            | "include_expression"
            | "include_once_expression"
    )
    .then_some(expr)
}

/// The first string literal in an expression, depth first (`__DIR__ . '/x.php'` → `'/x.php'`).
fn first_string(node: Node) -> Option<Node> {
    if matches!(node.kind(), "string" | "encapsed_string") {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    children.into_iter().find_map(first_string)
}

/// The names a PHP `use` brings in: `use A\B;`, `use A\{B, C as D};` (`A\B`, `A\C`),
/// `use function A\f;`.
fn php_use_names(node: Node, text: &str) -> Vec<String> {
    let get = |n: Node| text[n.byte_range()].to_string();
    let mut cursor = node.walk();
    // A group's shared prefix.
    let prefix = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "namespace_name")
        .map(get);
    let mut clauses = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        for c in n.named_children(&mut cursor) {
            match c.kind() {
                "namespace_use_clause" => clauses.push(c),
                "namespace_use_group" => stack.push(c),
                _ => {}
            }
        }
    }
    clauses.sort_by_key(|c| c.start_byte());
    clauses
        .into_iter()
        .filter_map(|clause| {
            let alias = clause.child_by_field_name("alias").map(|a| a.id());
            let mut cursor = clause.walk();
            let name = clause
                .named_children(&mut cursor)
                .find(|c| Some(c.id()) != alias && matches!(c.kind(), "name" | "qualified_name"))?;
            let name = get(name);
            Some(match &prefix {
                Some(prefix) => format!("{prefix}\\{name}"),
                None => name,
            })
        })
        .collect()
}

fn strip_quotes(path: &str) -> String {
    path.trim_matches(|c| matches!(c, '"' | '\'' | '<' | '>'))
        .to_string()
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
        // `template <…> X` holds X (nested for member templates of class templates).
        (Language::Cpp, "template_declaration") => {
            let mut cursor = node.walk();
            let inner = node.named_children(&mut cursor).find(|c| {
                !matches!(
                    c.kind(),
                    "template_parameter_list" | "requires_clause" | "comment"
                )
            });
            inner.map_or(node, |inner| unwrap_definition(language, inner))
        }
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
        (
            Language::C | Language::Cpp,
            "function_definition" | "field_declaration" | "declaration" | "type_definition",
        ) => {
            let name = declarator_name(node.child_by_field_name("declarator")?)?;
            let name = get(name);
            // `Widget::operator bool() const` is one `operator_cast` node: keep the name part.
            Some(match name.split_once('(') {
                Some((head, _)) => head.trim_end().to_string(),
                None => name,
            })
        }
        // `namespace { … }` has no name.
        (Language::Cpp, "namespace_definition") => Some(
            node.child_by_field_name("name")
                .map_or_else(|| "(anonymous)".to_string(), get),
        ),
        (Language::CSharp, "destructor_declaration") => {
            Some(format!("~{}", get(node.child_by_field_name("name")?)))
        }
        (Language::CSharp, "operator_declaration") => Some(format!(
            "operator {}",
            get(node.child_by_field_name("operator")?)
        )),
        (Language::CSharp, "conversion_operator_declaration") => Some(format!(
            "operator {}",
            get(node.child_by_field_name("type")?)
        )),
        (Language::Ruby, "singleton_method") => Some(format!(
            "{}.{}",
            get(node.child_by_field_name("object")?),
            get(node.child_by_field_name("name")?)
        )),
        (Language::Ruby, "singleton_class") => {
            Some(format!("<< {}", get(node.child_by_field_name("value")?)))
        }
        // kotlin-sg has no fields: the name is a child by kind.
        (Language::Kotlin, "secondary_constructor") => Some("constructor".to_string()),
        (Language::Kotlin, kind) => {
            let mut cursor = node.walk();
            let name = node
                .named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "type_identifier" | "simple_identifier"))
                .map(get);
            // An unnamed companion object is called `Companion` by Kotlin itself.
            name.or_else(|| (kind == "companion_object").then(|| "Companion".to_string()))
        }
        (Language::Swift, "class_declaration")
            if node
                .child_by_field_name("declaration_kind")
                .is_some_and(|k| k.kind() == "extension") =>
        {
            Some(format!(
                "extension {}",
                get(node.child_by_field_name("name")?)
            ))
        }
        (Language::Swift, "init_declaration") => Some("init".to_string()),
        (Language::Swift, "deinit_declaration") => Some("deinit".to_string()),
        (Language::Swift, "subscript_declaration") => Some("subscript".to_string()),
        // Swift: the first `name` is the declaration's; a return type can carry one too.
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
        Language::C | Language::Cpp => matches!(
            node.kind(),
            "struct_specifier" | "union_specifier" | "class_specifier" | "namespace_definition"
        ),
        Language::CSharp => matches!(
            node.kind(),
            "class_declaration"
                | "record_declaration"
                | "struct_declaration"
                | "interface_declaration"
                | "namespace_declaration"
        ),
        Language::Ruby => matches!(node.kind(), "class" | "module" | "singleton_class"),
        Language::Php => matches!(
            node.kind(),
            "class_declaration"
                | "interface_declaration"
                | "trait_declaration"
                | "enum_declaration"
                | "namespace_definition"
        ),
        // kotlin-sg has no `body` field: the body is a child by kind.
        Language::Kotlin => {
            if !matches!(
                node.kind(),
                "class_declaration" | "object_declaration" | "companion_object"
            ) {
                return None;
            }
            let mut cursor = node.walk();
            return node
                .named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "class_body" | "enum_class_body"));
        }
        Language::Swift => matches!(node.kind(), "class_declaration" | "protocol_declaration"),
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

    /// Symbols as (name, kind, line, parent).
    fn outline(chunked: &Chunked) -> Vec<(&str, &str, usize, Option<&str>)> {
        chunked
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.line, s.parent.as_deref()))
            .collect()
    }

    #[test]
    fn c_header_guards_macros_and_declarators() {
        let src = "#include <stdio.h>\n#include \"util/str.h\"\n\n#ifndef LIST_H\n#define LIST_H\n\n/** A singly linked list node. */\nstruct node {\n    int value;\n    struct node *next;\n};\n\ntypedef struct node node_t;\n\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n\n/* Counts the nodes. */\nstatic int list_len(const node_t *head) {\n    int n = 0;\n    for (; head; head = head->next) n++;\n    return n;\n}\n\nchar **names(int n);\n\n#endif\n";
        let chunked = chunk_file(Language::C, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 2, None, "imports"),
                (4, 5, None, "gap"),
                (7, 11, Some("node"), "struct"),
                (13, 13, Some("node_t"), "type"),
                (15, 15, Some("MAX"), "macro"),
                (17, 22, Some("list_len"), "function"),
                (24, 24, None, "gap"),
            ]
        );
        assert!(
            chunked.chunks[5]
                .text
                .starts_with("/* Counts the nodes. */\nstatic int")
        );
        assert_eq!(chunked.imports, ["stdio.h", "util/str.h"]);
    }

    #[test]
    fn cpp_classes_templates_namespaces_and_prototypes() {
        let src = "#include <vector>\nusing namespace std;\n\n/// A 2D shape.\nclass Shape {\npublic:\n    virtual ~Shape();\n    /// The area.\n    virtual double area() const = 0;\n};\n\nnamespace geo {\ntemplate <typename T>\nT clamp(T v, T lo, T hi) {\n    return v < lo ? lo : (v > hi ? hi : v);\n}\n}\n\ndouble Shape::scale(double k) { return k; }\n";
        let chunked = chunk_file(Language::Cpp, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 2, None, "imports"),
                (4, 10, Some("Shape"), "class"),
                (12, 17, Some("geo"), "namespace"),
                (19, 19, Some("Shape::scale"), "function"),
            ]
        );
        assert_eq!(
            outline(&chunked),
            [
                ("Shape", "class", 5, None),
                ("~Shape", "method", 7, Some("Shape")),
                ("area", "method", 9, Some("Shape")),
                ("geo", "namespace", 12, None),
                // A namespace's function is not a method.
                ("clamp", "function", 14, Some("geo")),
                ("Shape::scale", "function", 19, None),
            ]
        );
        assert_eq!(chunked.imports, ["vector", "std"]);
    }

    #[test]
    fn csharp_file_scoped_namespace_members_and_usings() {
        let src = "using System;\nusing Sb = System.Text.StringBuilder;\n\nnamespace Acme.Tools;\n\n/// <summary>A counter.</summary>\n[Serializable]\npublic class Counter\n{\n    private int n;\n\n    public Counter(int start) { n = start; }\n\n    /// <summary>Adds one.</summary>\n    public int Next() => ++n;\n\n    ~Counter() { }\n}\n\npublic interface IReset { void Reset(); }\n";
        let chunked = chunk_file(Language::CSharp, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 4, None, "imports"),
                (6, 18, Some("Counter"), "class"),
                (20, 20, Some("IReset"), "interface"),
            ]
        );
        assert_eq!(
            outline(&chunked),
            [
                ("Counter", "class", 7, None),
                ("Counter", "method", 12, Some("Counter")),
                ("Next", "method", 15, Some("Counter")),
                ("~Counter", "method", 17, Some("Counter")),
                ("IReset", "interface", 20, None),
                ("Reset", "method", 20, Some("IReset")),
            ]
        );
        assert_eq!(chunked.imports, ["System", "System.Text.StringBuilder"]);
    }

    #[test]
    fn ruby_classes_methods_and_requires() {
        let src = "require \"json\"\nrequire_relative \"lib/util\"\n\n# A stack of items.\nclass Stack\n  def initialize\n    @items = []\n  end\n\n  # Pushes an item.\n  def push(item)\n    @items.push(item)\n  end\n\n  def self.build\n    new\n  end\nend\n\ndef helper(x)\n  x * 2\nend\n";
        let chunked = chunk_file(Language::Ruby, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 2, None, "imports"),
                (4, 18, Some("Stack"), "class"),
                (20, 22, Some("helper"), "function"),
            ]
        );
        assert_eq!(
            outline(&chunked),
            [
                ("Stack", "class", 5, None),
                ("initialize", "method", 6, Some("Stack")),
                ("push", "method", 11, Some("Stack")),
                ("self.build", "method", 15, Some("Stack")),
                ("helper", "function", 20, None),
            ]
        );
        assert_eq!(chunked.imports, ["json", "lib/util"]);
    }

    #[test]
    fn php_namespaces_attributes_uses_and_requires() {
        let src = "<?php\nnamespace App\\Models;\n\nuse Foo\\{Bar, Baz as Qux};\nrequire_once __DIR__ . '/vendor/autoload.php';\n\n/** A user. */\n#[Entity]\nclass User extends Model\n{\n    public function name(): string\n    {\n        return $this->name;\n    }\n}\n\nfunction helper(int $x): int { return $x * 2; }\n";
        let chunked = chunk_file(Language::Php, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 5, None, "imports"),
                (7, 15, Some("User"), "class"),
                (17, 17, Some("helper"), "function"),
            ]
        );
        assert_eq!(
            outline(&chunked),
            [
                ("User", "class", 8, None),
                ("name", "method", 11, Some("User")),
                ("helper", "function", 17, None),
            ]
        );
        assert_eq!(
            chunked.imports,
            ["Foo\\Bar", "Foo\\Baz", "/vendor/autoload.php"]
        );
    }

    #[test]
    fn kotlin_classes_companions_and_imports() {
        let src = "package com.acme\n\nimport kotlin.math.max\nimport com.acme.util.*\n\n/** A counter. */\nclass Counter(private var n: Int) {\n    fun next(): Int {\n        n += 1\n        return n\n    }\n\n    companion object {\n        fun zero() = Counter(0)\n    }\n}\n\n/* Larger of two. */\nfun bigger(a: Int, b: Int): Int = max(a, b)\n";
        let chunked = chunk_file(Language::Kotlin, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 4, None, "imports"),
                (6, 16, Some("Counter"), "class"),
                (18, 19, Some("bigger"), "function"),
            ]
        );
        assert_eq!(
            outline(&chunked),
            [
                ("Counter", "class", 7, None),
                ("next", "method", 8, Some("Counter")),
                ("Companion", "class", 13, Some("Counter")),
                ("bigger", "function", 19, None),
            ]
        );
        assert_eq!(chunked.imports, ["kotlin.math.max", "com.acme.util.*"]);
    }

    #[test]
    fn swift_structs_extensions_and_imports() {
        let src = "import Foundation\n@testable import MyModule\n\n/// A 2D vector.\nstruct Vec {\n    var x: Double\n    /// Length.\n    func length() -> Double { x }\n}\n\nextension Vec: Equatable {\n    init(_ x: Double) { self.x = x }\n}\n\n/* Doubles. */\nfunc twice(_ v: Vec) -> Vec { Vec(x: v.x * 2) }\n";
        let chunked = chunk_file(Language::Swift, src);
        assert_eq!(
            spans(&chunked),
            [
                (1, 2, None, "imports"),
                (4, 9, Some("Vec"), "struct"),
                (11, 13, Some("extension Vec"), "impl"),
                (15, 16, Some("twice"), "function"),
            ]
        );
        assert_eq!(
            outline(&chunked),
            [
                ("Vec", "struct", 5, None),
                ("length", "method", 8, Some("Vec")),
                ("extension Vec", "impl", 11, None),
                ("init", "method", 12, Some("extension Vec")),
                ("twice", "function", 16, None),
            ]
        );
        assert_eq!(chunked.imports, ["Foundation", "MyModule"]);
    }
}
