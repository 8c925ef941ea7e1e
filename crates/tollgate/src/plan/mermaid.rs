//! Mermaid diagrams of a plan: `dependencies` (a flowchart of the step graph, critical path
//! highlighted), `architecture` (which parts of the codebase each step touches) and `gantt`
//! (steps on a timeline from their effort and dependencies).
//!
//! Every piece of plan text reaches the diagram through [`label`] (quoted flowchart labels) or
//! [`gantt_text`] (gantt task names and section titles): both replace the characters Mermaid
//! gives meaning to with entity codes or harmless look-alikes, so no title can end a label early,
//! open a comment or start a new statement. Node ids are generated (`s<number>`, `c<index>`),
//! never taken from plan text. The tests check every diagram with the real Mermaid parser.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::graph::StepGraph;
use crate::plan::model::{ChangeType, Plan, StepNumber};

/// Which diagram to draw (upstream's `diagram_type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiagramType {
    /// The step graph, critical path highlighted.
    #[default]
    Dependencies,
    /// Components (directories) and the steps that touch them.
    Architecture,
    /// Steps on a timeline.
    Gantt,
}

impl DiagramType {
    pub fn as_str(self) -> &'static str {
        match self {
            DiagramType::Dependencies => "dependencies",
            DiagramType::Architecture => "architecture",
            DiagramType::Gantt => "gantt",
        }
    }
}

/// Longest label kept, in characters (not bytes), before an ellipsis.
const MAX_LABEL_CHARS: usize = 60;

/// Draws `kind` for a plan whose graph is `graph` (from [`crate::plan::link_steps`] or
/// [`StepGraph::build`] on the same steps).
pub fn render(plan: &Plan, graph: &StepGraph, kind: DiagramType) -> String {
    match kind {
        DiagramType::Dependencies => dependencies(plan, graph),
        DiagramType::Architecture => architecture(plan),
        DiagramType::Gantt => gantt(plan, graph),
    }
}

fn step_title(plan: &Plan, step: StepNumber) -> &str {
    plan.steps
        .iter()
        .find(|s| s.step_number == step)
        .map_or("", |s| s.title.as_str())
}

fn dependencies(plan: &Plan, graph: &StepGraph) -> String {
    let critical = graph.critical_path().steps;
    let critical_edges: Vec<(StepNumber, StepNumber)> =
        critical.windows(2).map(|pair| (pair[0], pair[1])).collect();
    let mut out = String::from("flowchart TD\n");
    for step in &plan.steps {
        let text = format!("{}. {}", step.step_number, step.title);
        let _ = writeln!(out, "    s{}[\"{}\"]", step.step_number, label(&text));
    }
    let mut highlighted = Vec::new();
    for (idx, (from, to)) in graph.edges().into_iter().enumerate() {
        let _ = writeln!(out, "    s{from} --> s{to}");
        if critical_edges.contains(&(from, to)) {
            highlighted.push(idx.to_string());
        }
    }
    if !critical.is_empty() {
        out.push_str("    classDef critical fill:#fde2e2,stroke:#c62828,stroke-width:3px\n");
        let nodes: Vec<String> = critical.iter().map(|n| format!("s{n}")).collect();
        let _ = writeln!(out, "    class {} critical", nodes.join(","));
    }
    if !highlighted.is_empty() {
        let _ = writeln!(
            out,
            "    linkStyle {} stroke:#c62828,stroke-width:3px",
            highlighted.join(",")
        );
    }
    out
}

fn architecture(plan: &Plan) -> String {
    // Components are the directories the steps touch (the file's parent, or `.` at the root).
    let mut components: BTreeMap<String, BTreeMap<String, ChangeType>> = BTreeMap::new();
    let mut touches: BTreeMap<StepNumber, Vec<String>> = BTreeMap::new();
    for step in &plan.steps {
        let changes = step
            .files_to_modify
            .iter()
            .chain(&step.files_to_create)
            .map(|change| (change.path.as_str(), change.change_type))
            .chain(
                step.files_to_delete
                    .iter()
                    .map(|path| (path.as_str(), ChangeType::Delete)),
            );
        for (path, change_type) in changes {
            let component = component_of(path);
            components
                .entry(component.clone())
                .or_default()
                .insert(path.to_string(), change_type);
            let list = touches.entry(step.step_number).or_default();
            if !list.contains(&component) {
                list.push(component);
            }
        }
    }
    let component_ids: BTreeMap<&str, usize> = components
        .keys()
        .enumerate()
        .map(|(idx, name)| (name.as_str(), idx))
        .collect();
    let mut out = String::from("flowchart LR\n");
    if !plan.architecture.patterns_used.is_empty() {
        let patterns = format!("Patterns: {}", plan.architecture.patterns_used.join(", "));
        let _ = writeln!(out, "    patterns[\"{}\"]", label(&patterns));
    }
    out.push_str("    subgraph steps [\"Steps\"]\n");
    for step in &plan.steps {
        let text = format!("{}. {}", step.step_number, step.title);
        let _ = writeln!(out, "        s{}[\"{}\"]", step.step_number, label(&text));
    }
    out.push_str("    end\n");
    out.push_str("    subgraph codebase [\"Codebase\"]\n");
    for (name, files) in &components {
        let mut text = format!("{name}/");
        for (path, change_type) in files.iter().take(6) {
            let file = path.rsplit('/').next().unwrap_or(path);
            let _ = write!(text, " · {} ({})", file, change_marker(*change_type));
        }
        if files.len() > 6 {
            let _ = write!(text, " · +{} more", files.len() - 6);
        }
        let _ = writeln!(
            out,
            "        c{}[\"{}\"]",
            component_ids[name.as_str()],
            label_unbounded(&text, MAX_LABEL_CHARS * 3)
        );
    }
    out.push_str("    end\n");
    for (step, list) in &touches {
        for component in list {
            let _ = writeln!(
                out,
                "    s{step} --> c{}",
                component_ids[component.as_str()]
            );
        }
    }
    out
}

fn component_of(path: &str) -> String {
    let path = path.trim_start_matches("./");
    match path.rsplit_once('/') {
        Some((dir, _)) if !dir.is_empty() => dir.to_string(),
        _ => ".".to_string(),
    }
}

fn change_marker(change_type: ChangeType) -> &'static str {
    match change_type {
        ChangeType::Create => "new",
        ChangeType::Modify => "edit",
        ChangeType::Rename => "renamed",
        ChangeType::Delete => "delete",
    }
}

fn gantt(plan: &Plan, graph: &StepGraph) -> String {
    let mut out = String::from("gantt\n");
    let title = if plan.goal.trim().is_empty() {
        "Plan".to_string()
    } else {
        plan.goal.clone()
    };
    let _ = writeln!(out, "    title {}", gantt_text(&title));
    out.push_str("    dateFormat YYYY-MM-DD HH:mm\n");
    out.push_str("    axisFormat %m-%d %H:%M\n");
    let start = start_date(plan);
    let levels = graph.levels();
    let mut by_level: BTreeMap<usize, Vec<StepNumber>> = BTreeMap::new();
    for &step in graph.execution_order() {
        by_level.entry(levels[&step]).or_default().push(step);
    }
    for (level, steps) in by_level {
        let _ = writeln!(out, "    section Phase {}", level + 1);
        for step in steps {
            let minutes = plan
                .steps
                .iter()
                .find(|s| s.step_number == step)
                .and_then(|s| s.effort_hours())
                .map_or(60, |hours| ((hours * 60.0).round() as u64).max(1));
            let text = format!("{step}. {}", step_title(plan, step));
            let dependencies = graph.dependencies(step);
            let when = if dependencies.is_empty() {
                start.clone()
            } else {
                let ids: Vec<String> = dependencies.iter().map(|d| format!("s{d}")).collect();
                format!("after {}", ids.join(" "))
            };
            let _ = writeln!(
                out,
                "    {} :s{step}, {when}, {minutes}m",
                gantt_text(&text)
            );
        }
    }
    out
}

/// The plan's creation date at 09:00 (`YYYY-MM-DD HH:mm`), or a fixed date when it has none,
/// so the same plan always draws the same chart.
fn start_date(plan: &Plan) -> String {
    let date = plan.created_at.get(..10).filter(|date| {
        let bytes = date.as_bytes();
        bytes.len() == 10
            && bytes[4] == b'-'
            && bytes[7] == b'-'
            && bytes
                .iter()
                .enumerate()
                .all(|(idx, b)| idx == 4 || idx == 7 || b.is_ascii_digit())
    });
    format!("{} 09:00", date.unwrap_or("2026-01-05"))
}

/// Text for a quoted flowchart label (`["…"]`): one line, at most [`MAX_LABEL_CHARS`]
/// characters, with every character Mermaid treats specially written as an entity code.
pub fn label(text: &str) -> String {
    label_unbounded(text, MAX_LABEL_CHARS)
}

fn label_unbounded(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for c in truncate(text, max_chars).chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '&' => out.push_str("#amp;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '`' => out.push_str("#96;"),
            // `:` too: Mermaid drops the last `;` of any line matching `style.*:\S*#.*;`
            // before it decodes entities (found by the property test).
            '[' | ']' | '(' | ')' | '{' | '}' | '|' | '\\' | '%' | '@' | '~' | '*' | '_' | '^'
            | '$' | ':' => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text for a gantt task name, section or title. Gantt lines are not quoted: `:` ends a task
/// name, `#` and `%%` start comments, `;` ends a statement, and entity codes are not decoded in
/// every Mermaid version, so those characters become look-alikes.
pub fn gantt_text(text: &str) -> String {
    let mut out = String::new();
    for c in truncate(text, MAX_LABEL_CHARS).chars() {
        match c {
            ':' => out.push('\u{2236}'), // ∶ ratio
            '#' => out.push('\u{266F}'), // ♯
            ';' => out.push('\u{FF1B}'), // ；
            '%' => out.push('\u{FF05}'), // ％
            '"' => out.push('\u{201D}'), // ”
            '`' => out.push('\u{2018}'), // ‘
            '<' => out.push('\u{2039}'), // ‹
            '>' => out.push('\u{203A}'), // ›
            '&' => out.push('\u{FF06}'), // ＆
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    let trimmed = out.trim();
    if trimmed.is_empty() {
        "(untitled)".to_string()
    } else {
        trimmed.to_string()
    }
}

/// At most `max_chars` characters of `text` on one line, with an ellipsis when cut.
fn truncate(text: &str, max_chars: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max_chars {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::graph::link_steps;
    use crate::plan::model::{FileChange, Step};

    pub(crate) fn sample_plan() -> Plan {
        let step = |n: StepNumber, title: &str, effort: &str, deps: &[StepNumber]| Step {
            step_number: n,
            id: format!("step_{n}"),
            title: title.to_string(),
            estimated_effort: effort.to_string(),
            depends_on: deps.to_vec(),
            files_to_modify: vec![FileChange {
                path: format!("src/mod{n}.rs"),
                ..FileChange::default()
            }],
            ..Step::default()
        };
        let mut plan = Plan {
            goal: "Add \"retry\" support: #1; 100%".into(),
            created_at: "2026-03-02T10:00:00Z".into(),
            steps: vec![
                step(1, "Map the \"client\" [http] code", "2h", &[]),
                step(2, "Write tests", "1h", &[]),
                step(
                    3,
                    "Implement retry; backoff <jitter> & #limits",
                    "1 day",
                    &[1],
                ),
                step(4, "Docs: README `retry` section", "30 min", &[2, 3]),
            ],
            ..Plan::default()
        };
        link_steps(&mut plan).unwrap();
        plan
    }

    #[test]
    fn labels_escape_every_special_character() {
        assert_eq!(
            label("a \"b\" [c] #d; <e> & `f` |g|"),
            "a #quot;b#quot; #91;c#93; #35;d#59; #lt;e#gt; #amp; #96;f#96; #124;g#124;"
        );
        assert_eq!(label("two\nlines\tand\u{2028}more"), "two lines and more");
        let long = "é".repeat(100);
        assert_eq!(label(&long).chars().count(), MAX_LABEL_CHARS);
        assert!(label(&long).ends_with('…'));
        assert_eq!(gantt_text("a: b # c; d %% e"), "a∶ b ♯ c； d ％％ e");
        assert_eq!(gantt_text("  \n "), "(untitled)");
    }

    #[test]
    fn the_dependency_diagram_highlights_the_critical_path() {
        let plan = sample_plan();
        let graph = StepGraph::build(&plan.steps).unwrap();
        let text = render(&plan, &graph, DiagramType::Dependencies);
        assert!(text.starts_with("flowchart TD\n"));
        assert!(text.contains("s1[\"1. Map the #quot;client#quot; #91;http#93; code\"]"));
        // Critical path 1 → 3 → 4 (2 h + 8 h + 0.5 h), edges sorted (1,3) (2,4) (3,4).
        assert!(text.contains("    class s1,s3,s4 critical\n"), "{text}");
        assert!(text.contains("    linkStyle 0,2 stroke"), "{text}");
    }

    #[test]
    fn gantt_tasks_start_after_all_their_dependencies_defined_earlier() {
        let plan = sample_plan();
        let graph = StepGraph::build(&plan.steps).unwrap();
        let text = render(&plan, &graph, DiagramType::Gantt);
        assert!(
            text.contains("    title Add ”retry” support∶ ♯1； 100％\n"),
            "{text}"
        );
        assert!(text.contains(":s1, 2026-03-02 09:00, 120m\n"), "{text}");
        assert!(text.contains(":s4, after s2 s3, 30m\n"), "{text}");
        let mut defined = Vec::new();
        for line in text.lines().filter(|l| l.contains(" :s")) {
            let (_, data) = line.rsplit_once(" :").unwrap();
            let mut parts = data.split(", ");
            let id = parts.next().unwrap().to_string();
            if let Some(after) = parts.next().unwrap().strip_prefix("after ") {
                for dep in after.split(' ') {
                    assert!(
                        defined.iter().any(|d| d == dep),
                        "{dep} used before defined"
                    );
                }
            }
            defined.push(id);
        }
        assert_eq!(defined.len(), 4);
    }

    #[test]
    fn the_architecture_diagram_links_steps_to_components() {
        let plan = sample_plan();
        let graph = StepGraph::build(&plan.steps).unwrap();
        let text = render(&plan, &graph, DiagramType::Architecture);
        assert!(text.starts_with("flowchart LR\n"));
        assert!(
            text.contains("c0[\"src/ · mod1.rs #40;edit#41; · mod2.rs #40;edit#41;"),
            "{text}"
        );
        for step in 1..=4 {
            assert!(text.contains(&format!("    s{step} --> c0\n")), "{text}");
        }
    }
}
