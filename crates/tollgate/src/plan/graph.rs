//! The step graph: a petgraph DAG built from every step's `depends_on` (dep → step) and
//! `blocks` (step → blocked).
//!
//! Building it validates the plan's structure: duplicate step numbers, references to unknown
//! steps and cycles are errors, and a cycle error names the steps on it. Once built, the graph
//! answers the scheduling questions: execution order, critical path (weighted by estimated
//! effort), parallel groups, and which steps are ready given what has completed, failed or been
//! skipped. Every answer is deterministic: ties are broken by step number.

use crate::ErrorCode;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::fmt;

use petgraph::Direction;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::plan::model::{DependencyGraph, EdgeKind, GraphEdge, GraphNode, Plan, Step, StepNumber};

/// A plan's structure is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    #[error("the plan has no steps")]
    NoSteps,
    #[error("step number 0 is not allowed (\"{title}\"): step numbers start at 1")]
    ZeroStepNumber { title: String },
    #[error("step {step} appears more than once (\"{first}\" and \"{second}\")")]
    DuplicateStep {
        step: StepNumber,
        first: String,
        second: String,
    },
    #[error(
        "step {step} lists step {reference} in `{field}`, but the plan has no step {reference}"
    )]
    UnknownStep {
        step: StepNumber,
        reference: StepNumber,
        field: &'static str,
    },
    /// The steps on one cycle, in dependency order; the first step depends on the last.
    #[error("the steps depend on each other in a cycle: {}", describe_cycle(.steps))]
    Cycle { steps: Vec<CycleStep> },
}

impl GraphError {
    /// The stable machine code (every structural error is bad input).
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidInput
    }
}

/// A step named in a cycle error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleStep {
    pub step_number: StepNumber,
    pub title: String,
}

fn describe_cycle(steps: &[CycleStep]) -> String {
    let mut text = String::new();
    for step in steps.iter().chain(steps.first()) {
        if !text.is_empty() {
            text.push_str(" → ");
        }
        text.push_str(&format!("step {} (\"{}\")", step.step_number, step.title));
    }
    text
}

/// What has happened to a plan's steps so far, as the lifecycle code records it. A step in none
/// of the sets has not started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepOutcomes {
    pub completed: BTreeSet<StepNumber>,
    pub failed: BTreeSet<StepNumber>,
    pub skipped: BTreeSet<StepNumber>,
    pub in_progress: BTreeSet<StepNumber>,
}

impl StepOutcomes {
    /// Whether a dependency on `step` is satisfied: it completed or was skipped (a skipped step is
    /// given up on deliberately; use `skip_dependents` to give up on what follows it as well).
    pub fn satisfies(&self, step: StepNumber) -> bool {
        self.completed.contains(&step) || self.skipped.contains(&step)
    }

    fn has_started(&self, step: StepNumber) -> bool {
        self.satisfies(step) || self.failed.contains(&step) || self.in_progress.contains(&step)
    }
}

/// Which not-yet-started steps may start now, and why the others may not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readiness {
    /// Steps whose dependencies are all satisfied, in execution order.
    pub ready: Vec<StepNumber>,
    /// Steps still waiting, in execution order.
    pub blocked: Vec<BlockedStep>,
}

/// A step that cannot start yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedStep {
    pub step_number: StepNumber,
    /// Direct dependencies not yet completed or skipped (including failed ones).
    pub waiting_on: Vec<StepNumber>,
    /// Those of `waiting_on` that failed: the step stays blocked until they are retried or skipped.
    pub failed_dependencies: Vec<StepNumber>,
}

/// The longest chain of dependent steps.
#[derive(Debug, Clone, PartialEq)]
pub struct CriticalPath {
    /// Step numbers, first to last.
    pub steps: Vec<StepNumber>,
    /// Total effort in hours; a step without a readable estimate counts one hour.
    pub hours: f64,
}

/// The validated dependency graph of a plan's steps.
#[derive(Clone)]
pub struct StepGraph {
    graph: DiGraph<StepNumber, ()>,
    nodes: BTreeMap<StepNumber, NodeIndex>,
    ids: BTreeMap<StepNumber, String>,
    /// Effort weight per step, hours.
    weights: BTreeMap<StepNumber, f64>,
    /// Topological order, ties by step number; computed once at build time.
    order: Vec<StepNumber>,
}

impl fmt::Debug for StepGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepGraph")
            .field("steps", &self.order)
            .field("edges", &self.edges())
            .finish()
    }
}

/// The effort a step without a readable estimate counts for on the critical path.
const DEFAULT_STEP_HOURS: f64 = 1.0;

impl StepGraph {
    /// Builds and validates the graph of `steps`.
    pub fn build(steps: &[Step]) -> Result<StepGraph, GraphError> {
        if steps.is_empty() {
            return Err(GraphError::NoSteps);
        }
        let mut graph = DiGraph::new();
        let mut nodes = BTreeMap::new();
        let mut titles: BTreeMap<StepNumber, &str> = BTreeMap::new();
        for step in steps {
            if step.step_number == 0 {
                return Err(GraphError::ZeroStepNumber {
                    title: step.title.clone(),
                });
            }
            if let Some(first) = titles.insert(step.step_number, &step.title) {
                return Err(GraphError::DuplicateStep {
                    step: step.step_number,
                    first: first.to_string(),
                    second: step.title.clone(),
                });
            }
            nodes.insert(step.step_number, graph.add_node(step.step_number));
        }
        let mut edges = BTreeSet::new();
        for step in steps {
            for (field, references) in [("depends_on", &step.depends_on), ("blocks", &step.blocks)]
            {
                for &reference in references {
                    if !nodes.contains_key(&reference) {
                        return Err(GraphError::UnknownStep {
                            step: step.step_number,
                            reference,
                            field,
                        });
                    }
                    let edge = if field == "depends_on" {
                        (reference, step.step_number)
                    } else {
                        (step.step_number, reference)
                    };
                    edges.insert(edge);
                }
            }
        }
        for &(from, to) in &edges {
            graph.add_edge(nodes[&from], nodes[&to], ());
        }
        let step_graph = StepGraph {
            graph,
            ids: steps
                .iter()
                .map(|step| (step.step_number, step.id.clone()))
                .collect(),
            weights: steps
                .iter()
                .map(|step| {
                    let hours = step.effort_hours().unwrap_or(DEFAULT_STEP_HOURS);
                    (step.step_number, hours)
                })
                .collect(),
            nodes,
            order: Vec::new(),
        };
        if let Some(cycle) = step_graph.find_cycle() {
            return Err(GraphError::Cycle {
                steps: cycle
                    .into_iter()
                    .map(|step_number| CycleStep {
                        step_number,
                        title: titles[&step_number].to_string(),
                    })
                    .collect(),
            });
        }
        let order = step_graph.topological_order();
        Ok(StepGraph {
            order,
            ..step_graph
        })
    }

    /// Every step number, ascending.
    pub fn steps(&self) -> impl Iterator<Item = StepNumber> + '_ {
        self.nodes.keys().copied()
    }

    /// Every edge `(from, to)`: `from` must finish before `to` starts; sorted.
    pub fn edges(&self) -> Vec<(StepNumber, StepNumber)> {
        let mut edges: Vec<_> = self
            .graph
            .edge_indices()
            .filter_map(|edge| self.graph.edge_endpoints(edge))
            .map(|(from, to)| (self.graph[from], self.graph[to]))
            .collect();
        edges.sort_unstable();
        edges
    }

    /// The steps `step` depends on directly, ascending (empty for an unknown step).
    pub fn dependencies(&self, step: StepNumber) -> Vec<StepNumber> {
        self.neighbours(step, Direction::Incoming)
    }

    /// The steps that depend on `step` directly, ascending (empty for an unknown step).
    pub fn dependents(&self, step: StepNumber) -> Vec<StepNumber> {
        self.neighbours(step, Direction::Outgoing)
    }

    /// Every step that depends on `step` directly or through others, ascending: what
    /// `skip_dependents` skips.
    pub fn transitive_dependents(&self, step: StepNumber) -> Vec<StepNumber> {
        let mut seen = BTreeSet::new();
        let mut stack = self.dependents(step);
        while let Some(next) = stack.pop() {
            if seen.insert(next) {
                stack.extend(self.dependents(next));
            }
        }
        seen.into_iter().collect()
    }

    /// A topological order: every step after its dependencies, ties broken by step number.
    pub fn execution_order(&self) -> &[StepNumber] {
        &self.order
    }

    /// Each step's level: 0 without dependencies, else one more than its deepest dependency.
    pub fn levels(&self) -> BTreeMap<StepNumber, usize> {
        let mut levels = BTreeMap::new();
        for &step in &self.order {
            let level = self
                .dependencies(step)
                .iter()
                .map(|dep| levels[dep] + 1)
                .max()
                .unwrap_or(0);
            levels.insert(step, level);
        }
        levels
    }

    /// Steps that can run at the same time: the steps of each level, for levels with more than
    /// one step, in level order.
    pub fn parallel_groups(&self) -> Vec<Vec<StepNumber>> {
        let mut by_level: BTreeMap<usize, Vec<StepNumber>> = BTreeMap::new();
        for (step, level) in self.levels() {
            by_level.entry(level).or_default().push(step);
        }
        by_level
            .into_values()
            .filter(|group| group.len() > 1)
            .collect()
    }

    /// The chain of dependent steps with the largest total effort. Among equal chains the one
    /// reached through smaller step numbers wins.
    pub fn critical_path(&self) -> CriticalPath {
        // Longest path in a DAG: relax in topological order.
        let mut best: BTreeMap<StepNumber, (f64, Option<StepNumber>)> = BTreeMap::new();
        for &step in &self.order {
            let own = self.weights[&step];
            let mut entry = (own, None);
            for dep in self.dependencies(step) {
                let through = best[&dep].0 + own;
                if through > entry.0 {
                    entry = (through, Some(dep));
                }
            }
            best.insert(step, entry);
        }
        let mut end = None;
        for (&step, &(hours, _)) in &best {
            if end.is_none_or(|(_, best_hours)| hours > best_hours) {
                end = Some((step, hours));
            }
        }
        let Some((end, hours)) = end else {
            return CriticalPath {
                steps: Vec::new(),
                hours: 0.0,
            };
        };
        let mut steps = vec![end];
        while let Some(previous) = best[steps.last().expect("non-empty")].1 {
            steps.push(previous);
        }
        steps.reverse();
        CriticalPath { steps, hours }
    }

    /// Which of the steps not yet started may start, given `outcomes`. A step is ready when
    /// every dependency completed or was skipped; steps already ready stay ready when another
    /// step completes, and a blocked step becomes ready when its last blocker finishes.
    /// Step numbers in `outcomes` that the plan lacks are ignored.
    pub fn readiness(&self, outcomes: &StepOutcomes) -> Readiness {
        let mut readiness = Readiness::default();
        for &step in &self.order {
            if outcomes.has_started(step) {
                continue;
            }
            let waiting_on: Vec<StepNumber> = self
                .dependencies(step)
                .into_iter()
                .filter(|dep| !outcomes.satisfies(*dep))
                .collect();
            if waiting_on.is_empty() {
                readiness.ready.push(step);
            } else {
                let failed_dependencies = waiting_on
                    .iter()
                    .copied()
                    .filter(|dep| outcomes.failed.contains(dep))
                    .collect();
                readiness.blocked.push(BlockedStep {
                    step_number: step,
                    waiting_on,
                    failed_dependencies,
                });
            }
        }
        readiness
    }

    /// The serialisable form upstream's `dependency_graph` field carries.
    pub fn to_dependency_graph(&self) -> DependencyGraph {
        let critical = self.critical_path();
        DependencyGraph {
            nodes: self
                .nodes
                .keys()
                .map(|&step_number| GraphNode {
                    id: self.ids[&step_number].clone(),
                    step_number,
                })
                .collect(),
            edges: self
                .edges()
                .into_iter()
                .map(|(from, to)| GraphEdge {
                    from,
                    to,
                    kind: EdgeKind::Blocks,
                })
                .collect(),
            critical_path: critical.steps,
            critical_path_hours: Some(critical.hours),
            parallel_groups: self.parallel_groups(),
            execution_order: self.order.clone(),
        }
    }

    fn neighbours(&self, step: StepNumber, direction: Direction) -> Vec<StepNumber> {
        let Some(&node) = self.nodes.get(&step) else {
            return Vec::new();
        };
        let mut out: Vec<StepNumber> = self
            .graph
            .neighbors_directed(node, direction)
            .map(|n| self.graph[n])
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Kahn's algorithm with a min-heap, so ties go to the smaller step number. Only called on
    /// an acyclic graph.
    fn topological_order(&self) -> Vec<StepNumber> {
        let mut indegree: BTreeMap<StepNumber, usize> = self
            .nodes
            .keys()
            .map(|&step| (step, self.dependencies(step).len()))
            .collect();
        let mut heap: BinaryHeap<Reverse<StepNumber>> = indegree
            .iter()
            .filter(|(_, degree)| **degree == 0)
            .map(|(&step, _)| Reverse(step))
            .collect();
        let mut order = Vec::with_capacity(self.nodes.len());
        while let Some(Reverse(step)) = heap.pop() {
            order.push(step);
            for next in self.dependents(step) {
                let degree = indegree.get_mut(&next).expect("known step");
                *degree -= 1;
                if *degree == 0 {
                    heap.push(Reverse(next));
                }
            }
        }
        order
    }

    /// One cycle, as step numbers in dependency order starting from its smallest step, or
    /// `None`. Tarjan's algorithm finds the strongly connected components (terminating on any
    /// graph); a breadth-first search inside the first cyclic component recovers a shortest
    /// cycle through its smallest step.
    fn find_cycle(&self) -> Option<Vec<StepNumber>> {
        let mut components: Vec<BTreeSet<StepNumber>> = tarjan_scc(&self.graph)
            .into_iter()
            .map(|component| component.into_iter().map(|n| self.graph[n]).collect())
            .filter(|component: &BTreeSet<StepNumber>| {
                component.len() > 1
                    || component
                        .first()
                        .is_some_and(|&step| self.dependents(step).contains(&step))
            })
            .collect();
        components.sort_by_key(|component| component.first().copied());
        let component = components.into_iter().next()?;
        let start = *component.first()?;
        // Shortest path start → … → start inside the component.
        let mut previous: BTreeMap<StepNumber, StepNumber> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(step) = queue.pop_front() {
            for next in self.dependents(step) {
                if !component.contains(&next) {
                    continue;
                }
                if next == start {
                    let mut cycle = vec![step];
                    while let Some(&before) = previous.get(cycle.last().expect("non-empty")) {
                        cycle.push(before);
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
                if next != start && !previous.contains_key(&next) {
                    previous.insert(next, step);
                    queue.push_back(next);
                }
            }
        }
        // Unreachable for a strongly connected component; report the component rather than
        // nothing.
        Some(component.into_iter().collect())
    }
}

/// Validates `plan`'s steps and rewrites everything derived from the graph: `depends_on` and
/// `blocks` become consistent (each the inverse of the other, sorted, deduplicated),
/// `can_parallel_with` is the step's parallel group (the nearest [`MAX_PARALLEL_PEERS`] by
/// number), steps are sorted by number, and `dependency_graph` is recomputed. Returns the graph
/// for further questions.
/// The most peers a step lists in `can_parallel_with`. Listing whole groups would make a plan's
/// size quadratic in its steps (3,000 independent steps: 9 million entries, 124 MB of JSON);
/// `dependency_graph.parallel_groups` keeps every group whole.
pub const MAX_PARALLEL_PEERS: usize = 20;

pub fn link_steps(plan: &mut Plan) -> Result<StepGraph, GraphError> {
    let graph = StepGraph::build(&plan.steps)?;
    let levels = graph.levels();
    let mut by_level: BTreeMap<usize, Vec<StepNumber>> = BTreeMap::new();
    for (&step, &level) in &levels {
        by_level.entry(level).or_default().push(step);
    }
    plan.steps.sort_by_key(|step| step.step_number);
    for step in &mut plan.steps {
        let number = step.step_number;
        step.depends_on = graph.dependencies(number);
        step.blocks = graph.dependents(number);
        let group = &by_level[&levels[&number]];
        // The group is sorted: take the window of peers around the step's own position.
        let at = group.partition_point(|&other| other < number);
        let from = at
            .saturating_sub(MAX_PARALLEL_PEERS / 2)
            .min(group.len().saturating_sub(MAX_PARALLEL_PEERS + 1));
        step.can_parallel_with = group[from..]
            .iter()
            .copied()
            .filter(|&other| other != number)
            .take(MAX_PARALLEL_PEERS)
            .collect();
    }
    plan.dependency_graph = graph.to_dependency_graph();
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `spec` is `number:effort:deps` per step, e.g. `"1:2h:"`, `"3:1h:1,2"`.
    fn steps(spec: &[&str]) -> Vec<Step> {
        spec.iter()
            .map(|entry| {
                let mut parts = entry.split(':');
                let step_number: StepNumber = parts.next().unwrap().parse().unwrap();
                let estimated_effort = parts.next().unwrap_or("").to_string();
                let depends_on = parts
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse().unwrap())
                    .collect();
                Step {
                    step_number,
                    id: format!("step_{step_number}"),
                    title: format!("Step {step_number}"),
                    estimated_effort,
                    depends_on,
                    ..Step::default()
                }
            })
            .collect()
    }

    fn graph(spec: &[&str]) -> StepGraph {
        StepGraph::build(&steps(spec)).unwrap()
    }

    #[test]
    fn a_cycle_is_an_error_naming_its_steps_in_order() {
        let err = StepGraph::build(&steps(&["1::", "2::4", "3::2", "4::3", "5::1"])).unwrap_err();
        let GraphError::Cycle { steps } = &err else {
            panic!("{err:?}");
        };
        let numbers: Vec<_> = steps.iter().map(|s| s.step_number).collect();
        assert_eq!(numbers, vec![2, 3, 4]);
        assert_eq!(
            err.to_string(),
            "the steps depend on each other in a cycle: step 2 (\"Step 2\") → step 3 (\"Step 3\") \
             → step 4 (\"Step 4\") → step 2 (\"Step 2\")"
        );
        assert_eq!(err.code(), "INVALID_INPUT");
    }

    #[test]
    fn a_self_dependency_and_a_blocks_cycle_are_cycles() {
        let err = StepGraph::build(&steps(&["1::", "2::2"])).unwrap_err();
        assert!(
            matches!(&err, GraphError::Cycle { steps } if steps.len() == 1 && steps[0].step_number == 2)
        );

        // 1 blocks 2 while 1 depends on 2: a cycle made of both edge sources.
        let mut two = steps(&["1::2", "2::"]);
        two[0].blocks = vec![2];
        let err = StepGraph::build(&two).unwrap_err();
        assert!(
            matches!(&err, GraphError::Cycle { steps } if steps.len() == 2),
            "{err}"
        );
    }

    #[test]
    fn a_large_cycle_terminates_and_is_reported() {
        let mut spec: Vec<String> = (1..=2000).map(|n| format!("{n}::{}", n + 1)).collect();
        spec.push("2001::1".into());
        let spec: Vec<&str> = spec.iter().map(String::as_str).collect();
        let err = StepGraph::build(&steps(&spec)).unwrap_err();
        assert!(matches!(&err, GraphError::Cycle { steps } if steps.len() == 2001));
    }

    #[test]
    fn unknown_references_duplicates_and_empty_plans_are_errors() {
        assert_eq!(
            StepGraph::build(&steps(&["1::", "2::7"])).unwrap_err(),
            GraphError::UnknownStep {
                step: 2,
                reference: 7,
                field: "depends_on"
            }
        );
        let mut blocked = steps(&["1::"]);
        blocked[0].blocks = vec![9];
        assert_eq!(
            StepGraph::build(&blocked).unwrap_err().to_string(),
            "step 1 lists step 9 in `blocks`, but the plan has no step 9"
        );
        assert!(matches!(
            StepGraph::build(&steps(&["1::", "1::"])).unwrap_err(),
            GraphError::DuplicateStep { step: 1, .. }
        ));
        assert_eq!(StepGraph::build(&[]).unwrap_err(), GraphError::NoSteps);
        assert!(matches!(
            StepGraph::build(&steps(&["0::"])).unwrap_err(),
            GraphError::ZeroStepNumber { .. }
        ));
    }

    #[test]
    fn execution_order_is_topological_with_ties_by_number() {
        let g = graph(&["1::", "2::5", "3::1", "4::", "5::"]);
        assert_eq!(g.execution_order(), &[1, 3, 4, 5, 2]);
    }

    #[test]
    fn the_critical_path_follows_effort_not_edge_count() {
        // 1 → 2 → 3 → 5 is longer in steps (3 h); 1 → 4 → 5 is longer in effort (1+8+1).
        let g = graph(&["1:1h:", "2:1h:1", "3:1h:2", "4:1 day:1", "5:1h:3,4"]);
        let path = g.critical_path();
        assert_eq!(path.steps, vec![1, 4, 5]);
        assert_eq!(path.hours, 10.0);
        // Without estimates every step counts one hour: the longest chain by steps wins.
        let g = graph(&["1::", "2::1", "3::2", "4::1", "5::3,4"]);
        assert_eq!(g.critical_path().steps, vec![1, 2, 3, 5]);
        assert_eq!(g.critical_path().hours, 4.0);
    }

    #[test]
    fn parallel_groups_are_levels_with_more_than_one_step() {
        let g = graph(&["1::", "2::", "3::1", "4::1,2", "5::4"]);
        assert_eq!(g.parallel_groups(), vec![vec![1, 2], vec![3, 4]]);
        let chain = graph(&["1::", "2::1"]);
        assert!(chain.parallel_groups().is_empty());
    }

    #[test]
    fn ready_steps_follow_progress() {
        let g = graph(&["1::", "2::", "3::1", "4::1,2", "5::3,4"]);
        let mut outcomes = StepOutcomes::default();
        assert_eq!(g.readiness(&outcomes).ready, vec![1, 2]);

        // Completing 1 keeps 2 ready (no step vanishes) and readies 3; 4 still waits on 2.
        outcomes.completed.insert(1);
        let readiness = g.readiness(&outcomes);
        assert_eq!(readiness.ready, vec![2, 3]);
        assert_eq!(readiness.blocked[0].step_number, 4);
        assert_eq!(readiness.blocked[0].waiting_on, vec![2]);

        // A failed blocker is reported; skipping it unblocks its dependents.
        outcomes.failed.insert(2);
        outcomes.in_progress.insert(3);
        let readiness = g.readiness(&outcomes);
        assert!(readiness.ready.is_empty());
        assert_eq!(readiness.blocked[0].failed_dependencies, vec![2]);
        outcomes.failed.remove(&2);
        outcomes.skipped.insert(2);
        assert_eq!(g.readiness(&outcomes).ready, vec![4]);

        outcomes.in_progress.remove(&3);
        outcomes.completed.extend([3, 4]);
        assert_eq!(g.readiness(&outcomes).ready, vec![5]);
        outcomes.completed.insert(5);
        let done = g.readiness(&outcomes);
        assert!(done.ready.is_empty() && done.blocked.is_empty());
    }

    #[test]
    fn transitive_dependents_follow_both_edge_sources() {
        let mut s = steps(&["1::", "2::", "3::2", "4::"]);
        s[0].blocks = vec![2];
        s[2].blocks = vec![4];
        let g = StepGraph::build(&s).unwrap();
        assert_eq!(g.transitive_dependents(1), vec![2, 3, 4]);
        assert_eq!(g.transitive_dependents(4), Vec::<StepNumber>::new());
    }

    #[test]
    fn parallel_peers_are_the_nearest_few_and_groups_stay_whole() {
        let spec: Vec<String> = (1..=100).map(|n| format!("{n}:1h:")).collect();
        let spec: Vec<&str> = spec.iter().map(String::as_str).collect();
        let mut plan = Plan {
            steps: steps(&spec),
            ..Plan::default()
        };
        link_steps(&mut plan).unwrap();
        let peers = |n: usize| plan.steps[n - 1].can_parallel_with.clone();
        assert_eq!(peers(1), (2..=21).collect::<Vec<_>>());
        assert_eq!(
            peers(50),
            (40..=60).filter(|&n| n != 50).collect::<Vec<_>>()
        );
        assert_eq!(peers(100), (80..=99).collect::<Vec<_>>());
        assert!(plan.steps.iter().all(|s| s.can_parallel_with.len() == 20));
        assert_eq!(
            plan.dependency_graph.parallel_groups,
            vec![(1..=100).collect::<Vec<_>>()]
        );
    }

    #[test]
    fn link_steps_makes_both_lists_consistent_and_fills_the_graph() {
        let mut plan = Plan {
            steps: steps(&["3:2h:1", "1:1h:", "2:1h:"]),
            ..Plan::default()
        };
        plan.steps[2].blocks = vec![3, 3];
        let graph = link_steps(&mut plan).unwrap();
        let numbers: Vec<_> = plan.steps.iter().map(|s| s.step_number).collect();
        assert_eq!(numbers, vec![1, 2, 3]);
        assert_eq!(plan.steps[0].blocks, vec![3]);
        assert_eq!(plan.steps[1].blocks, vec![3]);
        assert_eq!(plan.steps[2].depends_on, vec![1, 2]);
        assert_eq!(plan.steps[0].can_parallel_with, vec![2]);
        assert_eq!(plan.dependency_graph.execution_order, vec![1, 2, 3]);
        assert_eq!(plan.dependency_graph.critical_path, vec![1, 3]);
        assert_eq!(plan.dependency_graph.edges.len(), 2);
        assert_eq!(plan.dependency_graph.parallel_groups, vec![vec![1, 2]]);
        assert_eq!(graph.edges(), vec![(1, 3), (2, 3)]);
    }
}
