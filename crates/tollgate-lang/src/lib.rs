//! What a repository path is: the language it is written in ([`Language::of_path`]) and whether
//! it is a test by that language's conventions ([`is_test_path`]). One list of languages: the
//! review's conventions, the code index's grammars and its `--lang` filter all name these.
//!
//! The review (whether a change touched tests) and the code index (tests rank below the code
//! they test) must agree on what a test is, so the rule lives here, below both: one home, no
//! dependencies.

/// A file's language, by its name: the one list the review's conventions and the code index's
/// chunkers and filters share. `Other` is any other text (config, data, scripts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Rust,
    TypeScript,
    /// TypeScript with JSX: the same conventions, its own grammar.
    Tsx,
    JavaScript,
    Python,
    Go,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Kotlin,
    Swift,
    Scala,
    Elixir,
    Dart,
    Markdown,
    Other,
}

impl Language {
    /// The language of `path` (`/`-separated), by its file name: its extension, or the
    /// name itself for build files without one (`Gemfile`).
    pub fn of_path(path: &str) -> Language {
        let name = file_name(path).to_ascii_lowercase();
        if matches!(name.as_str(), "gemfile" | "rakefile") {
            return Language::Ruby;
        }
        let ext = name.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
        match ext {
            "rs" => Language::Rust,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "py" | "pyi" => Language::Python,
            "go" => Language::Go,
            "java" => Language::Java,
            // `.h` stays C: C code may use `new` or `class` as identifiers.
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" | "inl" => {
                Language::Cpp
            }
            "cs" | "csx" => Language::CSharp,
            "rb" | "rake" | "gemspec" => Language::Ruby,
            "php" | "phtml" => Language::Php,
            "kt" | "kts" => Language::Kotlin,
            "swift" => Language::Swift,
            "scala" | "sc" => Language::Scala,
            "ex" | "exs" => Language::Elixir,
            "dart" => Language::Dart,
            "md" | "markdown" | "mdx" => Language::Markdown,
            _ => Language::Other,
        }
    }

    /// Whether this is source code (as opposed to docs, data or config).
    pub fn is_code(self) -> bool {
        !matches!(self, Language::Markdown | Language::Other)
    }

    /// Its name in filters and output (`--lang rust`).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Scala => "scala",
            Language::Elixir => "elixir",
            Language::Dart => "dart",
            Language::Markdown => "markdown",
            Language::Other => "text",
        }
    }

    /// A language by its name or a usual alias (`rs`, `golang`, `c#`), case-insensitive.
    pub fn parse(name: &str) -> Option<Language> {
        let lang = match name.to_ascii_lowercase().as_str() {
            "rust" | "rs" => Language::Rust,
            "typescript" | "ts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "javascript" | "js" | "jsx" => Language::JavaScript,
            "python" | "py" => Language::Python,
            "go" | "golang" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cpp" | "c++" | "cc" | "cxx" | "hpp" => Language::Cpp,
            "csharp" | "cs" | "c#" => Language::CSharp,
            "ruby" | "rb" => Language::Ruby,
            "php" => Language::Php,
            "kotlin" | "kt" | "kts" => Language::Kotlin,
            "swift" => Language::Swift,
            "scala" => Language::Scala,
            "elixir" | "ex" => Language::Elixir,
            "dart" => Language::Dart,
            "markdown" | "md" => Language::Markdown,
            "text" | "other" => Language::Other,
            _ => return None,
        };
        Some(lang)
    }
}

/// Whether `path` (repository-relative, `/`-separated) holds samples rather than the code that
/// runs: an example, sample, demo or fixture directory, or a directory or file named for
/// throwaway credentials (`self_signed…`, `snakeoil`, `dummy…`, `fake…`). Test paths are
/// [`is_test_path`]'s.
pub fn is_sample_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let mut components = lower.split('/').rev();
    let name = components.next().unwrap_or_default();
    let throwaway = |part: &str| {
        let part = part.replace('-', "_");
        ["self_signed", "selfsigned", "snakeoil", "dummy", "fake"]
            .iter()
            .any(|word| part.starts_with(word))
    };
    throwaway(name)
        || components.any(|dir| {
            matches!(
                dir,
                "example"
                    | "examples"
                    | "sample"
                    | "samples"
                    | "demo"
                    | "demos"
                    | "fixture"
                    | "fixtures"
                    | "__fixtures__"
            ) || throwaway(dir)
        })
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
        Language::TypeScript | Language::Tsx | Language::JavaScript => {
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
        Language::Markdown | Language::Other => {
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
        assert_eq!(Language::of_path("a/b.TSX"), Language::Tsx);
        assert_eq!(Language::of_path("Gemfile"), Language::Ruby);
        assert_eq!(Language::of_path("lib/tasks/db.rake"), Language::Ruby);
        assert_eq!(Language::of_path("a.hpp"), Language::Cpp);
        assert_eq!(Language::of_path("x.h"), Language::C);
        assert_eq!(Language::of_path("Makefile"), Language::Other);
        assert_eq!(Language::of_path("README.md"), Language::Markdown);
        assert!(!Language::of_path("README.md").is_code());
        assert!(Language::of_path("src/app.scala").is_code());
        for language in [
            Language::Rust,
            Language::Tsx,
            Language::Dart,
            Language::Other,
        ] {
            assert_eq!(Language::parse(language.as_str()), Some(language));
        }
    }
}
