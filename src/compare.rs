//! Compare mode: the same scenario under two profiles (say 1.4.2 and
//! 1.4.3), stepped together. [`follow_session`] makes the second session
//! replay the first one's action log up to its step, and [`diff_views`]
//! computes what differs at that step: node statuses, allocations' client
//! and desired status, evaluation outcomes with their DesiredTGUpdates, and
//! the first trace line where the two runs part ([`first_trace_difference`]).
//! The UI only renders the [`ViewDiff`].

use crate::sim::history::{Session, SessionError};
use crate::view::{AllocView, EvalView, PlaygroundView};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How an entry differs between run A and run B (Nomad's job-diff markers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Change {
    /// Only in B (`+`).
    Added,
    /// Only in A (`−`).
    Removed,
    /// In both, with different values (`±`).
    Edited,
}

impl Change {
    /// The marker drawn beside the entry, as in Nomad's job diff.
    pub fn marker(self) -> &'static str {
        match self {
            Change::Added => "+",
            Change::Removed => "−",
            Change::Edited => "±",
        }
    }

    fn of<T>(a: &Option<T>, b: &Option<T>) -> Change {
        match (a, b) {
            (None, Some(_)) => Change::Added,
            (Some(_), None) => Change::Removed,
            _ => Change::Edited,
        }
    }
}

/// A node whose status differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDiff {
    /// Node ID.
    pub id: String,
    /// Node name.
    pub name: String,
    /// Status in A (absent: no such node in A).
    pub a: Option<String>,
    /// Status in B.
    pub b: Option<String>,
    /// How it differs.
    pub change: Change,
}

/// One side of an allocation's comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocSide {
    /// Node the allocation is on.
    pub node_id: String,
    /// Client status.
    pub client_status: String,
    /// Desired status.
    pub desired_status: String,
}

/// An allocation whose node, client status or desired status differs, or
/// that exists in one run only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocDiff {
    /// Allocation ID.
    pub id: String,
    /// Short ID.
    pub short_id: String,
    /// Allocation name.
    pub name: String,
    /// The allocation in A.
    pub a: Option<AllocSide>,
    /// The allocation in B.
    pub b: Option<AllocSide>,
    /// How it differs.
    pub change: Change,
}

/// One side of an evaluation's comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalSide {
    /// Evaluation ID.
    pub id: String,
    /// Short ID.
    pub short_id: String,
    /// Status.
    pub status: String,
}

/// A DesiredTGUpdates counter that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterDiff {
    /// Task group.
    pub group: String,
    /// Counter name (`Place`, `Stop`, `Reconnect`, ...).
    pub counter: String,
    /// Value in A (0 when absent).
    pub a: u64,
    /// Value in B.
    pub b: u64,
}

/// An evaluation whose outcome differs. Evaluations are matched by what
/// they are for (job, trigger, node and rank among such evals), since IDs
/// part once the runs do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalDiff {
    /// Job.
    pub job_id: String,
    /// Trigger.
    pub triggered_by: String,
    /// Node of a node-update eval.
    pub node_id: Option<String>,
    /// The eval in A.
    pub a: Option<EvalSide>,
    /// The eval in B.
    pub b: Option<EvalSide>,
    /// The DesiredTGUpdates counters that differ.
    pub counters: Vec<CounterDiff>,
    /// How it differs.
    pub change: Change,
}

/// The first trace line where the two runs differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceDifference {
    /// Step of the first differing line (of A's, or of B's when A has none).
    pub step: usize,
    /// A's line (absent: A's trace ended).
    pub a: Option<String>,
    /// B's line.
    pub b: Option<String>,
}

/// Everything that differs between two runs at the same step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ViewDiff {
    /// Profile of run A.
    pub profile_a: String,
    /// Profile of run B.
    pub profile_b: String,
    /// The step both runs are at.
    pub step: usize,
    /// Nodes whose status differs.
    pub nodes: Vec<NodeDiff>,
    /// Allocations that differ.
    pub allocs: Vec<AllocDiff>,
    /// Evaluations whose outcome differs.
    pub evals: Vec<EvalDiff>,
    /// The first trace line that differs, up to this step.
    pub first_difference: Option<TraceDifference>,
}

impl ViewDiff {
    /// Whether the two runs agree on everything compared.
    pub fn is_same(&self) -> bool {
        self.nodes.is_empty()
            && self.allocs.is_empty()
            && self.evals.is_empty()
            && self.first_difference.is_none()
    }
}

/// Makes `follower` replay `leader`'s action log up to the leader's step.
/// While the follower's log agrees with the leader's, this only steps or
/// jumps; after an edit it is rebuilt from the scenario with the leader's
/// log, under its own profile.
pub fn follow_session(leader: &Session, follower: &mut Session) -> Result<(), SessionError> {
    let target = leader.cursor();
    let wanted = leader.actions();
    let have = follower.actions();
    let common = wanted.iter().zip(have).take_while(|(a, b)| a == b).count();
    if common < target && common < have.len() {
        let mut scenario = leader.scenario().clone();
        scenario.script = wanted.to_vec();
        let profile = follower.profile().name.clone();
        *follower = Session::new(scenario, Some(&profile))?;
        follower.jump(target);
        return Ok(());
    }
    if common >= target {
        follower.jump(target);
    } else {
        follower.jump(common);
        for action in &wanted[common..target] {
            follower.apply(action.clone());
        }
    }
    Ok(())
}

/// The first trace line where two sessions differ, up to their current steps.
pub fn first_trace_difference(a: &Session, b: &Session) -> Option<TraceDifference> {
    let mut lines_a = a.records().iter().flat_map(|r| r.entries.iter());
    let mut lines_b = b.records().iter().flat_map(|r| r.entries.iter());
    loop {
        match (lines_a.next(), lines_b.next()) {
            (None, None) => return None,
            // Equal entries print equal lines: only a differing pair is formatted.
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                let line_a = x.map(|entry| entry.line());
                let line_b = y.map(|entry| entry.line());
                if line_a != line_b {
                    let step = x.or(y).map_or(0, |entry| entry.step);
                    return Some(TraceDifference {
                        step,
                        a: line_a,
                        b: line_b,
                    });
                }
            }
        }
    }
}

/// Compares two runs' views at the same step (the trace difference is left
/// empty: see [`first_trace_difference`]).
pub fn diff_views(a: &PlaygroundView, b: &PlaygroundView) -> ViewDiff {
    ViewDiff {
        profile_a: a.profile.clone(),
        profile_b: b.profile.clone(),
        step: a.step,
        nodes: diff_nodes(a, b),
        allocs: diff_allocs(a, b),
        evals: diff_evals(a, b),
        first_difference: None,
    }
}

fn diff_nodes(a: &PlaygroundView, b: &PlaygroundView) -> Vec<NodeDiff> {
    let mut nodes: BTreeMap<&str, (&str, Option<&str>, Option<&str>)> = BTreeMap::new();
    for node in &a.nodes {
        nodes.entry(&node.id).or_insert((&node.name, None, None)).1 = Some(&node.status);
    }
    for node in &b.nodes {
        nodes.entry(&node.id).or_insert((&node.name, None, None)).2 = Some(&node.status);
    }
    nodes
        .into_iter()
        .filter(|(_, (_, x, y))| x != y)
        .map(|(id, (name, x, y))| {
            let (x, y) = (x.map(str::to_string), y.map(str::to_string));
            NodeDiff {
                id: id.to_string(),
                name: name.to_string(),
                change: Change::of(&x, &y),
                a: x,
                b: y,
            }
        })
        .collect()
}

fn alloc_side(alloc: &AllocView) -> AllocSide {
    AllocSide {
        node_id: alloc.node_id.clone(),
        client_status: alloc.client_status.clone(),
        desired_status: alloc.desired_status.clone(),
    }
}

fn diff_allocs(a: &PlaygroundView, b: &PlaygroundView) -> Vec<AllocDiff> {
    let mut allocs: BTreeMap<&str, (&AllocView, Option<AllocSide>, Option<AllocSide>)> =
        BTreeMap::new();
    for alloc in a.nodes.iter().flat_map(|node| &node.allocs) {
        allocs.entry(&alloc.id).or_insert((alloc, None, None)).1 = Some(alloc_side(alloc));
    }
    for alloc in b.nodes.iter().flat_map(|node| &node.allocs) {
        allocs.entry(&alloc.id).or_insert((alloc, None, None)).2 = Some(alloc_side(alloc));
    }
    let mut diffs: Vec<AllocDiff> = allocs
        .into_values()
        .filter(|(_, x, y)| x != y)
        .map(|(alloc, x, y)| AllocDiff {
            id: alloc.id.clone(),
            short_id: alloc.short_id.clone(),
            name: alloc.name.clone(),
            change: Change::of(&x, &y),
            a: x,
            b: y,
        })
        .collect();
    crate::cold_sort::sort_by(&mut diffs, |x, y| {
        x.name.cmp(&y.name).then_with(|| x.id.cmp(&y.id))
    });
    diffs
}

type EvalKey = (String, String, Option<String>, usize);

/// Keys each eval by what it is for and its rank among evals for the same thing.
fn keyed_evals(evals: &[EvalView]) -> Vec<(EvalKey, &EvalView)> {
    let mut seen: BTreeMap<(&str, &str, Option<&str>), usize> = BTreeMap::new();
    evals
        .iter()
        .map(|eval| {
            let rank = seen
                .entry((&eval.job_id, &eval.triggered_by, eval.node_id.as_deref()))
                .or_default();
            let key = (
                eval.job_id.clone(),
                eval.triggered_by.clone(),
                eval.node_id.clone(),
                *rank,
            );
            *rank += 1;
            (key, eval)
        })
        .collect()
}

fn counters(eval: Option<&EvalView>) -> BTreeMap<(&str, &str), u64> {
    crate::cold_sort::map_from(
        eval.into_iter()
            .flat_map(|eval| &eval.desired_tg_updates)
            .flat_map(|(group, counters)| {
                counters
                    .iter()
                    .map(move |(name, value)| ((group.as_str(), name.as_str()), *value))
            }),
    )
}

fn diff_evals(a: &PlaygroundView, b: &PlaygroundView) -> Vec<EvalDiff> {
    let keyed_a = keyed_evals(&a.evals);
    let keyed_b: BTreeMap<EvalKey, &EvalView> = crate::cold_sort::map_from(keyed_evals(&b.evals));
    // A's order first, then B's extras in B's order.
    let mut keys: Vec<&EvalKey> = keyed_a.iter().map(|(key, _)| key).collect();
    let in_a: BTreeMap<&EvalKey, &EvalView> =
        crate::cold_sort::map_from(keyed_a.iter().map(|(k, e)| (k, *e)));
    let extra_b: Vec<(EvalKey, &EvalView)> = keyed_evals(&b.evals)
        .into_iter()
        .filter(|(key, _)| !in_a.contains_key(key))
        .collect();
    keys.extend(extra_b.iter().map(|(key, _)| key));
    let side = |eval: &EvalView| EvalSide {
        id: eval.id.clone(),
        short_id: eval.short_id.clone(),
        status: eval.status.clone(),
    };
    keys.into_iter()
        .filter_map(|key| {
            let x = in_a.get(key).copied();
            let y = keyed_b.get(key).copied();
            let (counters_a, counters_b) = (counters(x), counters(y));
            let mut names: Vec<&(&str, &str)> = counters_a.keys().collect();
            names.extend(counters_b.keys().filter(|k| !counters_a.contains_key(*k)));
            let counter_diffs: Vec<CounterDiff> = names
                .into_iter()
                .filter_map(|name| {
                    let va = counters_a.get(name).copied().unwrap_or(0);
                    let vb = counters_b.get(name).copied().unwrap_or(0);
                    (va != vb).then(|| CounterDiff {
                        group: name.0.to_string(),
                        counter: name.1.to_string(),
                        a: va,
                        b: vb,
                    })
                })
                .collect();
            let (sa, sb) = (x.map(side), y.map(side));
            let status_differs = sa.as_ref().map(|s| &s.status) != sb.as_ref().map(|s| &s.status);
            if !status_differs && counter_diffs.is_empty() {
                return None;
            }
            Some(EvalDiff {
                job_id: key.0.clone(),
                triggered_by: key.1.clone(),
                node_id: key.2.clone(),
                change: Change::of(&sa, &sb),
                a: sa,
                b: sb,
                counters: counter_diffs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::NodeView;

    fn alloc(id: &str, node: &str, client: &str, desired: &str) -> AllocView {
        AllocView {
            id: id.to_string(),
            short_id: id.chars().take(8).collect(),
            name: format!("web.web[{}]", id.len() % 3),
            node_id: node.to_string(),
            client_status: client.to_string(),
            desired_status: desired.to_string(),
            ..AllocView::default()
        }
    }

    fn node(id: &str, status: &str, allocs: Vec<AllocView>) -> NodeView {
        NodeView {
            id: id.to_string(),
            name: id.to_string(),
            status: status.to_string(),
            link_up: true,
            eligible: true,
            allocs: allocs.into_iter().map(std::sync::Arc::new).collect(),
            ..NodeView::default()
        }
    }

    fn eval(id: &str, trigger: &str, status: &str, place: u64) -> EvalView {
        EvalView {
            id: id.to_string(),
            short_id: id.to_string(),
            job_id: "web".to_string(),
            triggered_by: trigger.to_string(),
            status: status.to_string(),
            desired_tg_updates: vec![(
                "web".to_string(),
                vec![("Place".to_string(), place), ("Stop".to_string(), 0)],
            )],
            ..EvalView::default()
        }
    }

    fn view(profile: &str, nodes: Vec<NodeView>, evals: Vec<EvalView>) -> PlaygroundView {
        PlaygroundView {
            profile: profile.to_string(),
            nodes: nodes.into_iter().map(std::sync::Arc::new).collect(),
            evals,
            ..PlaygroundView::default()
        }
    }

    #[test]
    fn equal_views_have_no_difference() {
        let v = view(
            "1.4.2",
            vec![node(
                "n1",
                "ready",
                vec![alloc("a1", "n1", "running", "run")],
            )],
            vec![eval("e1", "job-register", "complete", 1)],
        );
        let diff = diff_views(&v, &v);
        assert!(diff.is_same(), "{diff:?}");
    }

    #[test]
    fn node_status_and_alloc_statuses_differ() {
        let a = view(
            "1.4.2",
            vec![node(
                "n1",
                "disconnected",
                vec![alloc("a1", "n1", "unknown", "run")],
            )],
            vec![],
        );
        let b = view(
            "1.4.3",
            vec![
                node("n1", "ready", vec![alloc("a1", "n1", "running", "run")]),
                node("n2", "ready", vec![alloc("a2", "n2", "pending", "run")]),
            ],
            vec![],
        );
        let diff = diff_views(&a, &b);
        assert_eq!(diff.profile_a, "1.4.2");
        assert_eq!(diff.nodes.len(), 2);
        assert_eq!(diff.nodes[0].id, "n1");
        assert_eq!(diff.nodes[0].change, Change::Edited);
        assert_eq!(diff.nodes[0].a.as_deref(), Some("disconnected"));
        assert_eq!(diff.nodes[1].change, Change::Added);
        assert_eq!(diff.nodes[1].change.marker(), "+");
        let a1 = diff
            .allocs
            .iter()
            .find(|d| d.id == "a1")
            .expect("a1 differs");
        assert_eq!(a1.change, Change::Edited);
        assert_eq!(
            a1.a.as_ref().map(|s| s.client_status.as_str()),
            Some("unknown")
        );
        assert_eq!(
            a1.b.as_ref().map(|s| s.client_status.as_str()),
            Some("running")
        );
        let a2 = diff
            .allocs
            .iter()
            .find(|d| d.id == "a2")
            .expect("a2 only in B");
        assert_eq!(a2.change, Change::Added);
        assert!(a2.a.is_none());
    }

    #[test]
    fn desired_status_alone_is_a_difference() {
        let a = view(
            "x",
            vec![node(
                "n1",
                "ready",
                vec![alloc("a1", "n1", "running", "run")],
            )],
            vec![],
        );
        let b = view(
            "y",
            vec![node(
                "n1",
                "ready",
                vec![alloc("a1", "n1", "running", "stop")],
            )],
            vec![],
        );
        let diff = diff_views(&a, &b);
        assert!(diff.nodes.is_empty());
        assert_eq!(diff.allocs.len(), 1);
        assert_eq!(
            diff.allocs[0].b.as_ref().map(|s| s.desired_status.as_str()),
            Some("stop")
        );
    }

    #[test]
    fn evals_are_matched_by_trigger_not_id() {
        // B has an extra reconnect eval and different IDs; the register evals still pair up.
        let a = view(
            "a",
            vec![],
            vec![
                eval("aaaa0001", "job-register", "complete", 3),
                eval("aaaa0002", "node-update", "complete", 1),
            ],
        );
        let b = view(
            "b",
            vec![],
            vec![
                eval("bbbb0001", "job-register", "complete", 3),
                eval("bbbb0002", "reconnect", "complete", 1),
                eval("bbbb0003", "node-update", "complete", 0),
            ],
        );
        let diff = diff_views(&a, &b);
        assert_eq!(diff.evals.len(), 2, "{:?}", diff.evals);
        let update = &diff.evals[0];
        assert_eq!(update.triggered_by, "node-update");
        assert_eq!(update.change, Change::Edited);
        assert_eq!(
            update.counters,
            vec![CounterDiff {
                group: "web".to_string(),
                counter: "Place".to_string(),
                a: 1,
                b: 0
            }]
        );
        let reconnect = &diff.evals[1];
        assert_eq!(reconnect.triggered_by, "reconnect");
        assert_eq!(reconnect.change, Change::Added);
        assert_eq!(
            reconnect.b.as_ref().map(|s| s.short_id.as_str()),
            Some("bbbb0002")
        );
    }

    #[test]
    fn eval_status_difference_is_reported() {
        let a = view("a", vec![], vec![eval("e1", "node-update", "complete", 0)]);
        let b = view("b", vec![], vec![eval("e1", "node-update", "blocked", 0)]);
        let diff = diff_views(&a, &b);
        assert_eq!(diff.evals.len(), 1);
        assert!(diff.evals[0].counters.is_empty());
        assert_eq!(
            diff.evals[0].b.as_ref().map(|s| s.status.as_str()),
            Some("blocked")
        );
    }

    fn session(profile: &str) -> Session {
        let scenario = crate::playground::builtin("pr-15068-heartbeat-order").expect("built in");
        Session::load(scenario.json, Some(profile)).expect("loads")
    }

    #[test]
    fn follower_replays_the_leader_and_the_runs_part_under_pr_15068() {
        let mut a = session("1.4.2");
        let mut b = session("1.4.3");
        for _ in 0..8 {
            a.step();
        }
        follow_session(&a, &mut b).expect("follows");
        assert_eq!(b.cursor(), 8);
        // Both runs are identical before the early UpdateAlloc is delivered.
        assert_eq!(first_trace_difference(&a, &b), None);
        a.step();
        a.step();
        follow_session(&a, &mut b).expect("follows");
        assert_eq!(b.cursor(), 10);
        let difference = first_trace_difference(&a, &b).expect("the runs part");
        assert_eq!(difference.step, 9, "{difference:?}");
        let diff = diff_views(
            &crate::playground::build_view(&a),
            &crate::playground::build_view(&b),
        );
        assert!(
            diff.evals.iter().any(|e| e.triggered_by == "reconnect"),
            "1.4.2 runs a reconnect eval that 1.4.3 does not: {:?}",
            diff.evals
        );
        assert!(!diff.allocs.is_empty(), "the second replacement differs");
        // Back: the follower goes back too.
        a.back();
        follow_session(&a, &mut b).expect("follows");
        assert_eq!(b.cursor(), 9);
    }

    #[test]
    fn follower_is_rebuilt_after_the_leader_forks() {
        use crate::scenario::format::Action;
        let mut a = session("1.4.2");
        let mut b = session("1.4.3");
        for _ in 0..4 {
            a.step();
        }
        follow_session(&a, &mut b).expect("follows");
        a.jump(2);
        a.apply(Action::Note {
            text: "edited".to_string(),
        });
        follow_session(&a, &mut b).expect("follows");
        assert_eq!(b.cursor(), 3);
        assert_eq!(b.actions(), a.actions());
        assert_eq!(b.profile().name, "1.4.3");
    }
}
