//! Each language's conventions for public API and in-file tests. What a path is (its language,
//! whether it is a test file) comes from `tollgate_lang`, the rule the code index shares.

use std::sync::LazyLock;

use regex::Regex;

pub(crate) use tollgate_lang::Language;

/// The review's per-language rules beyond what a path is (that is `tollgate_lang`, shared with
/// the code index).
pub(crate) trait LanguageRules {
    /// Whether an added or removed line declares part of the public API.
    fn declares_public_api(&self, line: &str) -> bool;
    /// Whether an added line in a source file is itself test code.
    fn is_inline_test_marker(&self, line: &str) -> bool;
}

impl LanguageRules for Language {
    fn declares_public_api(&self, line: &str) -> bool {
        let pattern: &Regex = match self {
            Language::Rust => &RUST_PUB,
            Language::TypeScript | Language::Tsx | Language::JavaScript => &JS_EXPORT,
            Language::Python => &PY_PUBLIC,
            Language::Go => &GO_EXPORTED,
            Language::Java | Language::Kotlin | Language::CSharp => &JAVA_PUBLIC,
            Language::Ruby
            | Language::C
            | Language::Cpp
            | Language::Php
            | Language::Swift
            | Language::Scala
            | Language::Elixir
            | Language::Dart
            | Language::Markdown
            | Language::Other => return false,
        };
        pattern.is_match(line)
    }

    /// Whether an added line in a source file is itself test code: Rust's inline test modules
    /// and doc tests, Vitest's in-source tests, Python doctests, Elixir `doctest`s are run by
    /// the language's test runner from the source file itself.
    fn is_inline_test_marker(&self, line: &str) -> bool {
        let trimmed = line.trim_start();
        match self {
            Language::Rust => {
                RUST_TEST_ATTR.is_match(line)
                    || ["/// ```", "//! ```"]
                        .iter()
                        .any(|fence| trimmed.starts_with(fence))
                        && !trimmed.contains("```text")
                        && !trimmed.contains("```ignore")
            }
            Language::TypeScript | Language::Tsx | Language::JavaScript => {
                trimmed.contains("import.meta.vitest")
            }
            Language::Python => trimmed.starts_with(">>> "),
            _ => false,
        }
    }
}

// `pub` but not `pub(crate)`, `pub(super)`, `pub(self)` or `pub(in …)`.
static RUST_PUB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*pub\s+((unsafe\s+|async\s+|const\s+|extern\s+"[^"]*"\s+)*(fn|struct|enum|trait|type|mod|const|static|use|union|macro)\b|[a-z_][a-z0-9_]*\s*:)"#)
        .expect("static regex")
});
static RUST_TEST_ATTR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*#\[(test|tokio::test|cfg\(test\))").expect("static regex"));
static JS_EXPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(export\s|export\{|module\.exports\b|exports\.[A-Za-z_$])")
        .expect("static regex")
});
// Top-level definitions whose name does not start with `_`, and `__all__`.
static PY_PUBLIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((async\s+)?def|class)\s+[A-Za-z][A-Za-z0-9_]*|^__all__\s*[+]?=")
        .expect("static regex")
});
// Exported (capitalised) top-level funcs, methods, types, vars and consts.
static GO_EXPORTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(func\s+(\([^)]*\)\s*)?[A-Z]|type\s+[A-Z]|(var|const)\s+[A-Z])")
        .expect("static regex")
});
static JAVA_PUBLIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(@\w+\s+)*(public|protected)\s").expect("static regex"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_tests_per_language() {
        let yes = [
            (Language::Rust, "#[cfg(test)]"),
            (Language::Rust, "    #[test]"),
            (Language::Rust, "/// ```"),
            (Language::Rust, "    /// ```rust"),
            (Language::TypeScript, "if (import.meta.vitest) {"),
            (Language::Python, "    >>> parse('a')"),
        ];
        for (lang, line) in yes {
            assert!(lang.is_inline_test_marker(line), "{lang:?}: {line}");
        }
        let no = [
            (Language::Rust, "/// ```text"),
            (Language::Rust, "// #[test] was here"),
            (Language::Python, "x = '>>> '"),
            (Language::Go, "func TestX(t *testing.T) {"),
        ];
        for (lang, line) in no {
            assert!(!lang.is_inline_test_marker(line), "{lang:?}: {line}");
        }
    }

    #[test]
    fn public_api_per_language() {
        let yes = [
            (Language::Rust, "pub fn run() {"),
            (Language::Rust, "    pub async fn run() {"),
            (Language::Rust, "pub struct Config {"),
            (Language::TypeScript, "export function f() {}"),
            (
                Language::of_path("web/Button.tsx"),
                "export const Button = () => {",
            ),
            (Language::JavaScript, "module.exports = { f };"),
            (Language::Python, "def handler(event):"),
            (Language::Python, "class Client:"),
            (Language::Go, "func (s *Server) Start() error {"),
            (Language::Go, "type Config struct {"),
            (Language::Java, "  public void run() {"),
        ];
        for (lang, line) in yes {
            assert!(lang.declares_public_api(line), "{lang:?}: {line}");
        }
        let no = [
            (Language::Rust, "pub(crate) fn run() {"),
            (Language::Rust, "fn run() {"),
            (Language::Rust, "    pub(super) struct X;"),
            (Language::TypeScript, "function f() {}"),
            (Language::Python, "def _private():"),
            (Language::Python, "    def method(self):"),
            (Language::Go, "func start() {"),
            (Language::Java, "  private void run() {"),
        ];
        for (lang, line) in no {
            assert!(!lang.declares_public_api(line), "{lang:?}: {line}");
        }
    }
}
