//! Which language a path is written in, and that language's conventions for tests and public
//! API. Preflight signals stay language-aware instead of assuming one repository's layout.

use std::sync::LazyLock;

use regex::Regex;

/// Languages with dedicated conventions. Everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    Rust,
    TypeScript,
    JavaScript,
    Python,
    Go,
    Java,
    Kotlin,
    CSharp,
    Ruby,
    C,
    Cpp,
    Php,
    Swift,
    Scala,
    Elixir,
    Dart,
    Other,
}

impl Language {
    pub(crate) fn of_path(path: &str) -> Language {
        let ext = file_name(path)
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "rs" => Language::Rust,
            "ts" | "tsx" | "mts" | "cts" => Language::TypeScript,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "py" | "pyi" => Language::Python,
            "go" => Language::Go,
            "java" => Language::Java,
            "kt" | "kts" => Language::Kotlin,
            "cs" => Language::CSharp,
            "rb" => Language::Ruby,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => Language::Cpp,
            "php" => Language::Php,
            "swift" => Language::Swift,
            "scala" | "sc" => Language::Scala,
            "ex" | "exs" => Language::Elixir,
            "dart" => Language::Dart,
            _ => Language::Other,
        }
    }

    /// Whether this is source code (as opposed to data, docs or config).
    pub(crate) fn is_code(self) -> bool {
        self != Language::Other
    }

    /// Test files by the language's own conventions.
    pub(crate) fn is_test_path(self, path: &str) -> bool {
        let lower = path.to_ascii_lowercase();
        let name = file_name(&lower);
        let in_dir = |dir: &str| {
            lower.starts_with(&format!("{dir}/")) || lower.contains(&format!("/{dir}/"))
        };
        let generic = in_dir("tests") || in_dir("test") || in_dir("__tests__") || in_dir("spec");
        match self {
            Language::Rust => generic || in_dir("benches") || name.ends_with("_test.rs"),
            Language::TypeScript | Language::JavaScript => {
                generic
                    || name.contains(".test.")
                    || name.contains(".spec.")
                    || name.contains(".e2e.")
                    || in_dir("cypress")
                    || in_dir("e2e")
            }
            Language::Python => {
                generic
                    || (name.starts_with("test_") && name.ends_with(".py"))
                    || name.ends_with("_test.py")
                    || name == "conftest.py"
            }
            Language::Go => name.ends_with("_test.go"),
            Language::Java | Language::Kotlin => {
                in_dir("src/test")
                    || lower.contains("/src/test/")
                    || generic
                    || ["test.java", "tests.java", "it.java", "test.kt", "tests.kt"]
                        .iter()
                        .any(|suffix| name.ends_with(suffix))
            }
            Language::CSharp => {
                generic
                    || name.ends_with("tests.cs")
                    || name.ends_with("test.cs")
                    || lower.contains(".tests/")
            }
            Language::Ruby => generic || name.ends_with("_spec.rb") || name.ends_with("_test.rb"),
            Language::C | Language::Cpp => {
                generic
                    || in_dir("unittests")
                    || name.starts_with("test_")
                    || ["_test.", "_tests.", "_unittest.", "-test.", ".test."]
                        .iter()
                        .any(|part| name.contains(part))
            }
            // PHPUnit's `FooTest.php`, Pest's `tests/`.
            Language::Php => generic || name.ends_with("test.php"),
            // SwiftPM puts tests in `Tests/<Target>Tests/`.
            Language::Swift => {
                generic || name.ends_with("tests.swift") || name.ends_with("test.swift")
            }
            Language::Scala => {
                lower.contains("src/test/")
                    || generic
                    || ["spec.scala", "test.scala", "suite.scala"]
                        .iter()
                        .any(|suffix| name.ends_with(suffix))
            }
            Language::Elixir => generic || name.ends_with("_test.exs"),
            Language::Dart => generic || name.ends_with("_test.dart"),
            Language::Other => generic,
        }
    }

    /// Whether an added or removed line declares part of the public API.
    pub(crate) fn declares_public_api(self, line: &str) -> bool {
        let pattern: &Regex = match self {
            Language::Rust => &RUST_PUB,
            Language::TypeScript | Language::JavaScript => &JS_EXPORT,
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
            | Language::Other => return false,
        };
        pattern.is_match(line)
    }

    /// Whether an added line in a source file is itself test code: Rust's inline test modules
    /// and doc tests, Vitest's in-source tests, Python doctests, Elixir `doctest`s are run by
    /// the language's test runner from the source file itself.
    pub(crate) fn is_inline_test_marker(self, line: &str) -> bool {
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
            Language::TypeScript | Language::JavaScript => trimmed.contains("import.meta.vitest"),
            Language::Python => trimmed.starts_with(">>> "),
            _ => false,
        }
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
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
    fn test_conventions_per_language() {
        let cases = [
            ("tests/cli.rs", true),
            ("src/lib.rs", false),
            ("web/src/app.test.tsx", true),
            ("web/src/__tests__/x.js", true),
            ("pkg/test_models.py", true),
            ("pkg/models.py", false),
            ("pkg/conftest.py", true),
            ("server/handler_test.go", true),
            ("server/handler.go", false),
            ("app/src/test/java/a/FooTest.java", true),
            ("app/src/main/java/a/Foo.java", false),
            ("lib/foo_spec.rb", true),
            ("src/parser_test.cc", true),
            ("test/test_buffer.c", true),
            ("src/buffer.c", false),
            ("tests/Unit/UserTest.php", true),
            ("src/UserTest.php", true),
            ("src/User.php", false),
            ("Tests/CoreTests/ParserTests.swift", true),
            ("Sources/Core/Parser.swift", false),
            ("core/src/test/scala/a/ParserSpec.scala", true),
            ("core/src/main/scala/a/Parser.scala", false),
            ("test/app/parser_test.exs", true),
            ("lib/app/parser.ex", false),
            ("test/widget_test.dart", true),
            ("lib/widget.dart", false),
        ];
        for (path, expected) in cases {
            assert_eq!(
                Language::of_path(path).is_test_path(path),
                expected,
                "{path}"
            );
        }
    }

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
