//! What a repository path is: the language it is written in ([`Language::of_path`]) and whether
//! it is a test by that language's conventions ([`is_test_path`]).
//!
//! The review (whether a change touched tests) and the code index (tests rank below the code
//! they test) must agree on what a test is, so the rule lives here, below both: one home, no
//! dependencies.

/// Languages with conventions of their own. Everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
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
    /// The language of `path`, by its extension (`.tsx` is TypeScript, `.h` is C).
    pub fn of_path(path: &str) -> Language {
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
    pub fn is_code(self) -> bool {
        self != Language::Other
    }
}

/// Whether `path` (repository-relative, `/`-separated) is a test file or test data: test
/// directories every ecosystem uses (`tests/`, `__tests__/`, `spec/`, `testdata/`, Rust's
/// `*_tests/`), then the conventions of the path's own language (`_test.go`, `test_*.py`,
/// `*.spec.ts`, `src/test/` for the JVM, `*Test.php`, …).
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = file_name(&lower);
    let dirs = || lower.split('/').rev().skip(1);
    let in_test_dir = dirs().any(|dir| {
        matches!(
            dir,
            "test"
                | "tests"
                | "__tests__"
                | "spec"
                | "specs"
                | "testdata"
                | "test_data"
                | "test-data"
                | "testing"
                | "e2e"
                | "cypress"
                | "unittests"
        ) || dir.ends_with("_tests")
            || dir.ends_with(".tests")
    });
    if in_test_dir || name.starts_with("testutil") {
        return true;
    }
    let language = Language::of_path(&lower);
    match language {
        Language::Rust => {
            dirs().any(|dir| dir == "benches")
                || name.starts_with("test_")
                || name.ends_with("_test.rs")
                || name.ends_with("_tests.rs")
                // `#[cfg(test)] mod tests;` lives in `tests.rs`.
                || matches!(name, "tests.rs" | "test.rs")
        }
        Language::TypeScript | Language::JavaScript => {
            [".test.", ".spec.", ".e2e.", "_test.", "_spec."]
                .iter()
                .any(|part| name.contains(part))
        }
        Language::Python => {
            name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py"
        }
        Language::Go => name.ends_with("_test.go"),
        Language::Java | Language::Kotlin | Language::Scala => {
            lower.starts_with("src/test/")
                || lower.contains("/src/test/")
                || [
                    "test.java",
                    "tests.java",
                    "it.java",
                    "test.kt",
                    "tests.kt",
                    "spec.scala",
                    "test.scala",
                    "suite.scala",
                ]
                .iter()
                .any(|suffix| name.ends_with(suffix))
        }
        Language::CSharp => name.ends_with("tests.cs") || name.ends_with("test.cs"),
        Language::Ruby => name.ends_with("_spec.rb") || name.ends_with("_test.rb"),
        Language::C | Language::Cpp => {
            name.starts_with("test_")
                || ["_test.", "_tests.", "_unittest.", "-test.", ".test."]
                    .iter()
                    .any(|part| name.contains(part))
        }
        // PHPUnit's `FooTest.php`.
        Language::Php => name.ends_with("test.php"),
        // SwiftPM puts tests in `Tests/<Target>Tests/`.
        Language::Swift => name.ends_with("tests.swift") || name.ends_with("test.swift"),
        Language::Elixir => name.ends_with("_test.exs"),
        Language::Dart => name.ends_with("_test.dart"),
        Language::Other => {
            name.starts_with("test_") || name.contains("_test.") || name.contains(".test.")
        }
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_conventions_per_language() {
        let cases = [
            ("tests/cli.rs", true),
            ("src/lib.rs", false),
            ("crates/ide/src/tests.rs", true),
            ("crates/parser/test_data/parser/ok/0001.rs", true),
            ("crates/hir_tests/src/lib.rs", true),
            ("benches/parse.rs", true),
            ("src/attestation.rs", false),
            ("web/src/app.test.tsx", true),
            ("web/src/__tests__/x.js", true),
            ("web/e2e/login.ts", true),
            ("src/latest.ts", false),
            ("pkg/test_models.py", true),
            ("pkg/models.py", false),
            ("pkg/conftest.py", true),
            ("pkg/testing/helpers.py", true),
            ("server/handler_test.go", true),
            ("server/handler.go", false),
            ("server/testdata/input.json", true),
            ("app/src/test/java/a/FooTest.java", true),
            ("app/src/main/java/a/Foo.java", false),
            ("Core.Tests/ParserTests.cs", true),
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
            ("docs/testing.md", false),
            ("contest/main.rs", false),
        ];
        for (path, expected) in cases {
            assert_eq!(is_test_path(path), expected, "{path}");
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::of_path("a/b.TSX"), Language::TypeScript);
        assert_eq!(Language::of_path("x.h"), Language::C);
        assert_eq!(Language::of_path("Makefile"), Language::Other);
        assert!(!Language::of_path("README.md").is_code());
    }
}
