//! Project invariants: `.review-invariants.yml` rules, checked deterministically against diffs.
//!
//! An invariants file maps free-text section names to lists of rules (upstream's format,
//! accepted unchanged; the Tollgate extensions are documented in `invariants/README.md` at the
//! repository root, next to the shipped packs). Loading parses it once into an [`InvariantSet`]
//! of validated [`Invariant`]s, with compiled globs ([`PathFilter`]) and regexes ([`Pattern`],
//! JavaScript syntax translated for the `regex` crate), and reports every problem with its line
//! and column ([`InvariantsError`], [`Problem`]). [`InvariantSet::evaluate`] then turns a
//! [`Diff`](crate::diff::Diff) into [`Finding`](crate::findings::Finding)s anchored at the exact
//! changed lines that caused them.
//!
//! ```
//! use std::path::Path;
//! use tollgate::invariants::InvariantSet;
//!
//! let yaml = r#"
//! security:
//!   - id: no-eval
//!     rule: Never call eval() in application code
//!     paths: ["src/**/*.js"]
//!     severity: HIGH
//!     category: security
//!     action: deny
//!     deny: { regex: { pattern: "\\beval\\(" } }
//! "#;
//! let set = InvariantSet::from_yaml(Path::new(".review-invariants.yml"), yaml).unwrap();
//! assert_eq!(set.checks().count(), 1);
//! ```
//!
//! Paths that come from users or models go through [`resolve_invariants_path`] (or
//! [`load_from_workspace`]), which keeps them inside the workspace. The packs shipped in
//! `invariants/` are embedded as [`PACKS`].

mod error;
mod evaluate;
mod load;
mod model;
mod packs;
mod paths;
mod pattern;
mod resolve;
#[cfg(test)]
mod testutil;
mod yaml;
mod yaml_depth;

pub use error::{InvariantsError, PathRefusal, Problem};
pub use evaluate::{
    EVIDENCE_CHARS, Evaluation, MAX_FINDINGS_PER_RULE_AND_FILE, MULTI_LINE_WORK_FLOOR,
    MULTI_LINE_WORK_PER_BYTE,
};
pub use load::{
    CheckReport, DEFAULT_FILE_NAME, MAX_FILE_BYTES, TITLE_CHARS, check_file, load_from_workspace,
};
pub use model::{Check, DEFAULT_CONFIDENCE, Invariant, InvariantSet, Lines, Origin};
pub use packs::{PACKS, Pack, pack};
pub use paths::{GlobError, PathFilter};
pub use pattern::{MAX_PATTERN_CHARS, Pattern, PatternError, REGEX_SIZE_LIMIT};
pub use resolve::resolve_invariants_path;
pub use yaml_depth::MAX_NESTING as MAX_YAML_NESTING;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::testutil::diff;
    use super::*;

    const PACKS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../invariants");

    /// One example per row: a rule, the file it is added to, whole-file contents (lines
    /// separated by `\n`) on which the rule must fire, and contents on which it must not.
    struct Case {
        rule: &'static str,
        path: &'static str,
        fires: &'static [&'static str],
        quiet: &'static [&'static str],
    }

    const CASES: &[Case] = &[
        // security.yml
        Case {
            rule: "js-eval-call",
            path: "src/app.js",
            fires: &[
                "const x = eval(input);",
                "const f = new Function('a', body);",
                "eval (code)",
            ],
            quiet: &["model.eval();", "const evaluation = 1;", "retrieval(x);"],
        },
        Case {
            rule: "js-eval-call",
            path: "public/vendor/lib.min.js",
            fires: &[],
            quiet: &["eval(x)"],
        },
        Case {
            rule: "react-dangerously-set-html",
            path: "src/View.tsx",
            fires: &["<div dangerouslySetInnerHTML={{ __html: html }} />"],
            quiet: &["<div>{text}</div>"],
        },
        Case {
            rule: "python-tls-verify-disabled",
            path: "app/client.py",
            fires: &[
                "r = requests.get(url, verify=False)",
                "httpx.Client(verify = False)",
            ],
            quiet: &["r = requests.get(url, verify=True)", "verify_false = 1"],
        },
        Case {
            rule: "python-subprocess-shell",
            path: "tools/run.py",
            fires: &["subprocess.run(cmd, shell=True)"],
            quiet: &[
                "subprocess.run(['ls', path], shell=False)",
                "subprocess.run(['ls'])",
            ],
        },
        Case {
            rule: "go-tls-insecure-skip-verify",
            path: "pkg/net/client.go",
            fires: &["cfg := &tls.Config{InsecureSkipVerify: true}"],
            quiet: &["cfg := &tls.Config{InsecureSkipVerify: false}"],
        },
        Case {
            rule: "go-tls-insecure-skip-verify",
            path: "pkg/net/client_test.go",
            fires: &[],
            quiet: &["cfg := &tls.Config{InsecureSkipVerify: true}"],
        },
        Case {
            rule: "node-tls-reject-disabled",
            path: "scripts/start.sh",
            fires: &[
                "export NODE_TLS_REJECT_UNAUTHORIZED=0",
                "process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';",
            ],
            quiet: &[
                "export NODE_TLS_REJECT_UNAUTHORIZED=1",
                "NODE_TLS_REJECT_UNAUTHORIZED=10",
            ],
        },
        Case {
            rule: "rust-unsafe-needs-safety",
            path: "src/lib.rs",
            fires: &["let v = unsafe { ptr.read() };"],
            quiet: &[
                "// SAFETY: ptr is valid for reads and aligned\nlet v = unsafe { ptr.read() };",
                "unsafe fn f();",
            ],
        },
        // rust.yml
        Case {
            rule: "rust-dbg-macro",
            path: "src/main.rs",
            fires: &["dbg!(x);", "let y = dbg!(compute());"],
            quiet: &["debug!(\"x\");", "tracing::debug!(value = ?x);"],
        },
        Case {
            rule: "rust-todo-macro",
            path: "src/lib.rs",
            fires: &["todo!()", "    unimplemented!(\"later\")"],
            quiet: &["// todo: later", "let todo = 1;"],
        },
        Case {
            rule: "rust-todo-macro",
            path: "crates/x/tests/it.rs",
            fires: &[],
            quiet: &["todo!()"],
        },
        Case {
            rule: "rust-unwrap-outside-tests",
            path: "src/config.rs",
            fires: &["let v = x.unwrap();"],
            quiet: &["let v = x.unwrap_or(0);", "let v = x?;"],
        },
        Case {
            rule: "rust-unwrap-outside-tests",
            path: "tests/it.rs",
            fires: &[],
            quiet: &["x.unwrap();"],
        },
        Case {
            rule: "rust-expect-empty-message",
            path: "src/lib.rs",
            fires: &["x.expect(\"\")", "x.expect( \"\" );"],
            quiet: &["x.expect(\"config was validated\")"],
        },
        Case {
            rule: "rust-mem-transmute",
            path: "src/lib.rs",
            fires: &[
                "let y: u32 = unsafe { std::mem::transmute(x) };",
                "let y = transmute::<f32, u32>(x);",
            ],
            quiet: &["let y = x.to_bits();"],
        },
        // typescript.yml
        Case {
            rule: "ts-console-log",
            path: "src/app.ts",
            fires: &["console.log(user);", "  console.debug('x')"],
            quiet: &["logger.info('x');", "console.error(err);"],
        },
        Case {
            rule: "ts-console-log",
            path: "src/app.test.ts",
            fires: &[],
            quiet: &["console.log(1)"],
        },
        Case {
            rule: "ts-ignore-without-reason",
            path: "src/a.ts",
            fires: &[
                "// @ts-ignore",
                "  /* @ts-expect-error */",
                "// @ts-nocheck",
            ],
            quiet: &[
                "// @ts-expect-error: upstream types are wrong (#123)",
                "// @ts-ignore -- legacy API",
            ],
        },
        Case {
            rule: "ts-explicit-any",
            path: "src/a.ts",
            fires: &[
                "function f(x: any) {}",
                "const y = z as any;",
                "let list: any[] = [];",
                "const w = <any>v;",
            ],
            quiet: &[
                "function f(x: unknown) {}",
                "const company = 1;",
                "let x: anyway;",
            ],
        },
        Case {
            rule: "ts-explicit-any",
            path: "types/global.d.ts",
            fires: &[],
            quiet: &["declare const x: any;"],
        },
        Case {
            rule: "js-debugger-statement",
            path: "src/a.js",
            fires: &["  debugger;", "debugger"],
            quiet: &["const debuggerEnabled = true;"],
        },
        Case {
            rule: "js-focused-test",
            path: "src/a.test.ts",
            fires: &["it.only('works', () => {});", "describe.only('x', fn)"],
            quiet: &["it('works', () => {});"],
        },
        // migrations.yml
        Case {
            rule: "sql-migration-down-section",
            path: "db/migrations/20240101_add_users.sql",
            fires: &["-- +migrate Up\nCREATE TABLE users (id int);"],
            quiet: &[
                "-- +migrate Up\nCREATE TABLE users (id int);\n-- +migrate Down\nDROP TABLE users;",
                "-- +goose Up\nALTER TABLE t ADD c int;\n-- +goose Down\nALTER TABLE t DROP c;",
                "-- migrate:up\ncreate table t (id int);\n-- migrate:down\ndrop table t;",
                "INSERT INTO t VALUES (1);",
            ],
        },
        Case {
            rule: "sql-migration-down-section",
            path: "db/migrations/001_users.up.sql",
            fires: &[],
            quiet: &["CREATE TABLE t (id int);"],
        },
        Case {
            rule: "sql-destructive-change",
            path: "db/schema.sql",
            fires: &[
                "DROP TABLE users;",
                "ALTER TABLE t DROP COLUMN c;",
                "truncate table logs;",
            ],
            quiet: &["CREATE TABLE users (id int);", "-- the dropped_at column"],
        },
        Case {
            rule: "rails-migration-down",
            path: "db/migrate/20240101000000_add_x.rb",
            fires: &[
                "class AddX < ActiveRecord::Migration[7.1]\n  def up\n    add_column :t, :c, :int\n  end\nend",
            ],
            quiet: &[
                "class AddX < ActiveRecord::Migration[7.1]\n  def up\n    add_column :t, :c, :int\n  end\n  def down\n    remove_column :t, :c\n  end\nend",
                "  def change\n    add_column :t, :c, :int\n  end",
            ],
        },
        Case {
            rule: "django-runpython-reverse",
            path: "app/migrations/0002_data.py",
            fires: &[
                "        migrations.RunPython(forwards),",
                "migrations.RunPython(forwards)",
            ],
            quiet: &[
                "        migrations.RunPython(forwards, backwards),",
                "        migrations.RunPython(forwards, migrations.RunPython.noop),",
            ],
        },
        Case {
            rule: "alembic-empty-downgrade",
            path: "alembic/versions/abc123_add_c.py",
            fires: &[
                "def upgrade():\n    op.add_column('t', sa.Column('c', sa.Integer()))\n\n\ndef downgrade() -> None:\n    pass",
                "def downgrade():  # nothing to do\n    pass",
            ],
            quiet: &[
                "def downgrade() -> None:\n    op.drop_column('t', 'c')",
                "def downgrade():\n    passes = 1",
            ],
        },
        Case {
            rule: "knex-migration-down",
            path: "migrations/20240101_users.js",
            fires: &[
                "exports.up = function (knex) {\n  return knex.schema.createTable('u', () => {});\n};",
                "export async function up(knex: Knex) {}",
            ],
            quiet: &[
                "exports.up = (knex) => knex.schema.createTable('u', () => {});\nexports.down = (knex) => knex.schema.dropTable('u');",
                "export async function up(knex) {}\nexport async function down(knex) {}",
            ],
        },
        // ci.yml
        Case {
            rule: "gha-pull-request-target-checkout",
            path: ".github/workflows/pr.yml",
            fires: &[
                "on:\n  pull_request_target:\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}",
            ],
            quiet: &[
                "on:\n  pull_request:\njobs:\n  build:\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}",
                "on:\n  pull_request_target:\njobs:\n  label:\n    steps:\n      - uses: actions/labeler@8558fd74291d67161a8a78ce36a881fa63b766a9",
            ],
        },
        Case {
            rule: "gha-action-not-pinned",
            path: ".github/workflows/ci.yml",
            fires: &[
                "      - uses: actions/checkout@v4",
                "      - uses: some/action@main",
                "    - uses: 'owner/repo/sub@abc1234' # v1",
                "- uses: owner/repo@abc1234",
                "- uses: owner/repo@abc1234 # v1",
            ],
            quiet: &[
                "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2",
                "      - uses: \"actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\"",
                "      - uses: ./.github/actions/local",
                "      - uses: docker://alpine:3.20",
            ],
        },
        Case {
            rule: "gha-script-injection",
            path: ".github/workflows/triage.yml",
            fires: &[
                "      - run: echo \"${{ github.event.pull_request.title }}\"",
                "      - run: git checkout ${{ github.head_ref }}",
                "        run: |\n          echo ${{ github.event.issue.body }}",
                "      - run: ${{ github.event.comment.body }}",
                "          script: console.log(\"${{ github.event.issue.title }}\")",
            ],
            quiet: &[
                "        env:\n          TITLE: ${{ github.event.pull_request.title }}\n        run: echo \"$TITLE\"",
                "        with:\n          ref: ${{ github.head_ref }}",
                "      - run: echo ${{ github.event.pull_request.number }}",
                "    if: ${{ github.event.pull_request.title == 'release' }}",
            ],
        },
        Case {
            rule: "gha-permissions-write-all",
            path: ".github/workflows/ci.yaml",
            fires: &["permissions: write-all", "    permissions: write-all"],
            quiet: &["permissions:\n  contents: read"],
        },
        Case {
            rule: "curl-pipe-shell",
            path: "scripts/install.sh",
            fires: &[
                "curl -fsSL https://example.com/x.sh | sh",
                "wget -qO- https://x | sudo bash",
            ],
            quiet: &[
                "curl -fsSL -o install.sh https://example.com/x.sh",
                "curl https://x | jq .",
            ],
        },
        Case {
            rule: "curl-pipe-shell",
            path: "Dockerfile",
            fires: &["RUN curl -sL https://deb.example.com/setup | bash -"],
            quiet: &["RUN apt-get install -y curl"],
        },
    ];

    /// A diff adding `path` with the given contents (lines separated by `\n`).
    fn new_file_diff(path: &str, contents: &str) -> crate::diff::Diff {
        let lines: Vec<&str> = contents.split('\n').collect();
        let mut text = format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
            lines.len()
        );
        for line in lines {
            text.push('+');
            text.push_str(line);
            text.push('\n');
        }
        diff(&text)
    }

    fn pack_files() -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(PACKS_DIR)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "yml"))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn every_shipped_pack_loads_without_errors_or_warnings() {
        let files = pack_files();
        assert!(files.len() >= 3, "{files:?}");
        for file in &files {
            let set = InvariantSet::load(file).unwrap_or_else(|err| panic!("{err}"));
            assert!(set.checks().count() >= 3, "{}", file.display());
            assert!(set.warnings().is_empty(), "{:?}", set.warnings());
        }
    }

    #[test]
    fn embedded_packs_are_the_files_in_the_directory() {
        let names: Vec<String> = pack_files()
            .iter()
            .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        let mut embedded: Vec<&str> = PACKS.iter().map(|pack| pack.name).collect();
        embedded.sort_unstable();
        assert_eq!(names, embedded);
        for pack in PACKS {
            let on_disk =
                std::fs::read_to_string(Path::new(PACKS_DIR).join(format!("{}.yml", pack.name)))
                    .unwrap();
            assert_eq!(pack.yaml, on_disk);
            assert!(pack.load().is_ok());
        }
        assert!(super::pack("security").is_some());
        assert!(super::pack("nope").is_none());
    }

    #[test]
    fn every_pack_rule_fires_on_its_positive_examples_and_only_there() {
        let mut all = InvariantSet::empty();
        for file in pack_files() {
            all = all.merge(InvariantSet::load(&file).unwrap()).unwrap();
        }
        for case in CASES {
            let rule = all
                .get(case.rule)
                .unwrap_or_else(|| panic!("no rule `{}` in the packs", case.rule));
            for contents in case.fires {
                let evaluation = all.evaluate(&new_file_diff(case.path, contents));
                let hits: Vec<_> = evaluation
                    .findings
                    .iter()
                    .filter(|f| f.rule_id == case.rule)
                    .collect();
                assert!(
                    !hits.is_empty(),
                    "`{}` should fire on {}:\n{contents}",
                    case.rule,
                    case.path
                );
                for hit in hits {
                    assert_eq!(hit.severity, rule.severity());
                    assert_eq!(hit.location.file, case.path);
                    assert!(hit.location.start_line >= 1);
                }
            }
            for contents in case.quiet {
                let evaluation = all.evaluate(&new_file_diff(case.path, contents));
                let hits: Vec<_> = evaluation
                    .findings
                    .iter()
                    .filter(|f| f.rule_id == case.rule)
                    .map(|f| (f.location.start_line, f.evidence.clone()))
                    .collect();
                assert!(
                    hits.is_empty(),
                    "`{}` should stay quiet on {}:\n{contents}\nbut reported {hits:?}",
                    case.rule,
                    case.path
                );
            }
        }
    }

    #[test]
    fn every_pack_rule_has_a_positive_example() {
        let mut missing = Vec::new();
        for file in pack_files() {
            for rule in InvariantSet::load(&file).unwrap().checks() {
                if !CASES
                    .iter()
                    .any(|case| case.rule == rule.id() && !case.fires.is_empty())
                {
                    missing.push(rule.id().to_string());
                }
            }
        }
        assert!(
            missing.is_empty(),
            "rules without a positive example: {missing:?}"
        );
    }

    #[test]
    fn pull_request_target_finding_points_at_the_trigger_line() {
        let set = pack("ci").unwrap().load().unwrap();
        let contents = "name: pr\non:\n  pull_request_target:\njobs:\n  build:\n    steps:\n      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n        with:\n          ref: ${{ github.head_ref }}";
        let evaluation = set.evaluate(&new_file_diff(".github/workflows/pr.yml", contents));
        let finding = evaluation
            .findings
            .iter()
            .find(|f| f.rule_id == "gha-pull-request-target-checkout")
            .unwrap();
        assert_eq!(
            (finding.location.start_line, finding.location.end_line),
            (3, 9)
        );
        assert_eq!(finding.evidence, ["pull_request_target:"]);
    }
}
