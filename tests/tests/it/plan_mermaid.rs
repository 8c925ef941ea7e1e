//! Every Mermaid diagram kind `visualize_plan` draws, checked by the real Mermaid parser (npm
//! `mermaid`, headless under happy-dom: `tests/mermaid/validate.mjs`).
//!
//! `.ci/run` installs it and sets `TOLLGATE_MERMAID_VALIDATOR` (the install directory). Without
//! it (or without `node`) the tests say so and return, except under CI, where a missing
//! validator is a failure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;
use tollgate::plan::{DiagramType, FileChange, Plan, Step, StepGraph, link_steps, render_mermaid};

const KINDS: [DiagramType; 3] = [
    DiagramType::Dependencies,
    DiagramType::Architecture,
    DiagramType::Gantt,
];

fn validator() -> Option<PathBuf> {
    let from_env = std::env::var_os("TOLLGATE_MERMAID_VALIDATOR").map(PathBuf::from);
    let in_repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/mermaid");
    let dir = from_env
        .or(Some(in_repo))
        .filter(|dir| dir.join("node_modules/mermaid/package.json").is_file());
    let node = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("node").is_file()));
    if dir.is_none() || !node {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install node and the Mermaid validator (.ci/run does)"
        );
        eprintln!("Mermaid validator not installed; run .ci/run to check diagrams");
        return None;
    }
    dir
}

/// One parser verdict per diagram (see validate.mjs for the shape).
fn validate(dir: &Path, diagrams: &[String]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mermaid/validate.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    let input = serde_json::to_vec(diagrams).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "validator failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(results.len(), diagrams.len());
    results
}

fn step(number: u32, title: &str, effort: &str, deps: &[u32], path: &str) -> Step {
    Step {
        step_number: number,
        id: format!("step_{number}"),
        title: title.to_string(),
        estimated_effort: effort.to_string(),
        depends_on: deps.to_vec(),
        files_to_modify: vec![FileChange {
            path: path.to_string(),
            ..FileChange::default()
        }],
        ..Step::default()
    }
}

fn linked(goal: &str, steps: Vec<Step>) -> Plan {
    let mut plan = Plan {
        goal: goal.to_string(),
        created_at: "2026-04-01T08:00:00Z".to_string(),
        steps,
        ..Plan::default()
    };
    link_steps(&mut plan).unwrap();
    plan
}

/// Plans with and without dependencies, with titles full of Mermaid syntax.
fn sample_plans() -> Vec<Plan> {
    vec![
        linked(
            "Add \"retry\" support: #1; 100% <b>now</b>",
            vec![
                step(
                    1,
                    "Map the \"client\" [http] code",
                    "2h",
                    &[],
                    "src/http/client.rs",
                ),
                step(2, "Write tests (unit) {fast}", "1h", &[], "tests/retry.rs"),
                step(
                    3,
                    "Implement retry; backoff <jitter> & #limits",
                    "1 day",
                    &[1],
                    "src/http/retry.rs",
                ),
                step(
                    4,
                    "Docs: README `retry` section | end %% not a comment",
                    "30 min",
                    &[2, 3],
                    "README.md",
                ),
                step(5, "end", "", &[4], "src/lib.rs"),
            ],
        ),
        linked(
            "",
            vec![
                step(1, "One", "", &[], "a.rs"),
                step(2, "Two --> Three", "", &[], "b/c.rs"),
                step(3, "graph TD; A-->B", "", &[], "b/d.rs"),
            ],
        ),
        linked(
            "single",
            vec![step(1, "click s1 call alert()", "3h", &[], "x.py")],
        ),
    ]
}

#[test]
fn every_diagram_kind_parses_and_keeps_its_labels() {
    let Some(dir) = validator() else { return };
    let plans = sample_plans();
    let mut diagrams = Vec::new();
    for plan in &plans {
        let graph = StepGraph::build(&plan.steps).unwrap();
        for kind in KINDS {
            diagrams.push(render_mermaid(plan, &graph, kind));
        }
    }
    let results = validate(&dir, &diagrams);
    for ((plan, kind), (diagram, result)) in plans
        .iter()
        .flat_map(|plan| KINDS.iter().map(move |kind| (plan, *kind)))
        .zip(diagrams.iter().zip(&results))
    {
        assert_eq!(result["ok"], true, "{kind:?} failed: {result}\n{diagram}");
        match kind {
            DiagramType::Dependencies => check_flowchart_steps(plan, result, diagram),
            DiagramType::Architecture => check_flowchart_steps(plan, result, diagram),
            DiagramType::Gantt => check_gantt(plan, result, diagram),
        }
    }
}

/// Every step is one node whose label is exactly `N. title`, and the dependency edges are the
/// graph's edges (architecture diagrams link steps to components instead).
fn check_flowchart_steps(plan: &Plan, result: &Value, diagram: &str) {
    let nodes = result["nodes"].as_array().unwrap();
    for step in &plan.steps {
        let id = format!("s{}", step.step_number);
        let node = nodes
            .iter()
            .find(|node| node["id"] == id.as_str())
            .unwrap_or_else(|| panic!("no node {id}: {result}\n{diagram}"));
        assert_eq!(node["label"], expected_label(step), "{result}\n{diagram}");
    }
    if result["type"] == "flowchart-v2" && diagram.starts_with("flowchart TD") {
        let mut edges: Vec<(String, String)> = result["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e[0].as_str().unwrap().into(), e[1].as_str().unwrap().into()))
            .collect();
        edges.sort();
        let mut expected: Vec<(String, String)> = plan
            .dependency_graph
            .edges
            .iter()
            .map(|e| (format!("s{}", e.from), format!("s{}", e.to)))
            .collect();
        expected.sort();
        assert_eq!(edges, expected, "{diagram}");
        assert_eq!(nodes.len(), plan.steps.len(), "{result}\n{diagram}");
    }
}

/// One task per step, every task has computed dates, and none starts before a dependency ends.
fn check_gantt(plan: &Plan, result: &Value, diagram: &str) {
    let tasks = result["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), plan.steps.len(), "{result}\n{diagram}");
    for step in &plan.steps {
        let task = tasks
            .iter()
            .find(|t| t["id"] == format!("s{}", step.step_number).as_str())
            .unwrap_or_else(|| panic!("no task for step {}: {diagram}", step.step_number));
        let start = task["start"].as_str().expect("start computed");
        assert!(task["end"].as_str().expect("end computed") > start);
        for dep in &step.depends_on {
            let dep_task = tasks
                .iter()
                .find(|t| t["id"] == format!("s{dep}").as_str())
                .unwrap();
            assert!(
                dep_task["end"].as_str().unwrap() <= start,
                "step {} starts before step {dep} ends: {diagram}",
                step.step_number
            );
        }
        if step.depends_on.is_empty() {
            assert_eq!(start, "2026-04-01T09:00:00.000Z", "{diagram}");
        }
    }
}

/// What a reader sees: `N. title` on one line, cut to 60 characters with an ellipsis.
fn expected_label(step: &Step) -> String {
    let text = format!("{}. {}", step.step_number, step.title);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 60 {
        one_line
    } else {
        one_line.chars().take(59).chain(['…']).collect()
    }
}

/// Any title, however much Mermaid syntax it holds, stays inside its label.
#[test]
fn escaped_titles_never_break_a_diagram() {
    let Some(dir) = validator() else { return };
    let title = prop_oneof![
        "[\"'\\[\\](){}<>#;:%&|`\\\\/ a-zé漢@*_~^$=!?.,+-]{0,70}",
        "(end|graph|flowchart|subgraph|click|style|classDef|section|title|after|%%|-->|:::) ?[a-z\"#;:]{0,8}",
        any::<String>().prop_filter("printable", |s| !s.chars().any(char::is_control)),
    ];
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    let plans = std::cell::RefCell::new(Vec::new());
    runner
        .run(&prop::collection::vec(title, 1..6), |titles| {
            let steps = titles
                .iter()
                .enumerate()
                .map(|(idx, title)| {
                    let number = idx as u32 + 1;
                    let deps: Vec<u32> = if number > 1 { vec![number - 1] } else { vec![] };
                    step(number, title, "1h", &deps, &format!("{title}/f.rs"))
                })
                .collect();
            plans.borrow_mut().push(linked(&titles[0], steps));
            Ok(())
        })
        .unwrap();
    let plans = plans.into_inner();
    let mut diagrams = Vec::new();
    for plan in &plans {
        let graph = StepGraph::build(&plan.steps).unwrap();
        for kind in KINDS {
            diagrams.push(render_mermaid(plan, &graph, kind));
        }
    }
    let results = validate(&dir, &diagrams);
    for (idx, (diagram, result)) in diagrams.iter().zip(&results).enumerate() {
        assert_eq!(result["ok"], true, "{result}\n{diagram}");
        let plan = &plans[idx / KINDS.len()];
        match KINDS[idx % KINDS.len()] {
            DiagramType::Gantt => check_gantt(plan, result, diagram),
            _ => check_flowchart_steps(plan, result, diagram),
        }
    }
}
