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
use std::cmp::Ordering;
use std::rc::Rc;

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

/// The items of both sides, each with its side (`false` for A) and its
/// position there, stably sorted by `compare`: items that compare equal sit
/// together, A's before B's, each side in its own order. (One merge sort and
/// a walk over runs instead of a `BTreeMap` per key type: code size.)
fn both_sorted<'v, T: 'v>(
    a: impl IntoIterator<Item = &'v T>,
    b: impl IntoIterator<Item = &'v T>,
    compare: impl Fn(&T, &T) -> Ordering,
) -> Vec<(bool, usize, &'v T)> {
    let side = |is_b: bool| move |(pos, item): (usize, &'v T)| (is_b, pos, item);
    let mut items: Vec<(bool, usize, &T)> = (a.into_iter().enumerate().map(side(false)))
        .chain(b.into_iter().enumerate().map(side(true)))
        .collect();
    crate::cold_sort::sort_by(&mut items, |x, y| compare(x.2, y.2));
    items
}

/// The last item of side `is_b` in a run of [`both_sorted`]'s items.
fn last_of<'v, T>(run: &[(bool, usize, &'v T)], is_b: bool) -> Option<&'v T> {
    run.iter()
        .rev()
        .find(|item| item.0 == is_b)
        .map(|item| item.2)
}

fn diff_nodes(a: &PlaygroundView, b: &PlaygroundView) -> Vec<NodeDiff> {
    let items = both_sorted(&a.nodes, &b.nodes, |x, y| x.id.cmp(&y.id));
    items
        .chunk_by(|x, y| x.2.id == y.2.id)
        .filter_map(|run| {
            // The name as first seen (A's when the node is in A); each
            // side's status as last seen.
            let first = run[0].2;
            let status = |is_b| last_of(run, is_b).map(|node| node.status.clone());
            let (x, y) = (status(false), status(true));
            (x != y).then(|| NodeDiff {
                id: first.id.clone(),
                name: first.name.clone(),
                change: Change::of(&x, &y),
                a: x,
                b: y,
            })
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

/// Every alloc of a view, node by node.
fn all_allocs(view: &PlaygroundView) -> impl Iterator<Item = &AllocView> {
    view.nodes
        .iter()
        .flat_map(|node| node.allocs.iter().map(|alloc| &**alloc))
}

fn diff_allocs(a: &PlaygroundView, b: &PlaygroundView) -> Vec<AllocDiff> {
    let items = both_sorted(all_allocs(a), all_allocs(b), |x: &AllocView, y| {
        x.id.cmp(&y.id)
    });
    let mut diffs: Vec<AllocDiff> = items
        .chunk_by(|x, y| x.2.id == y.2.id)
        .filter_map(|run| {
            let alloc = run[0].2;
            let (x, y) = (
                last_of(run, false).map(alloc_side),
                last_of(run, true).map(alloc_side),
            );
            (x != y).then(|| AllocDiff {
                id: alloc.id.clone(),
                short_id: alloc.short_id.clone(),
                name: alloc.name.clone(),
                change: Change::of(&x, &y),
                a: x,
                b: y,
            })
        })
        .collect();
    crate::cold_sort::sort_by(&mut diffs, |x, y| {
        x.name.cmp(&y.name).then_with(|| x.id.cmp(&y.id))
    });
    diffs
}

/// An eval's DesiredTGUpdates counters as ((group, counter), value), sorted
/// by (group, counter), the last value of a repeated counter kept.
fn counters(eval: Option<&EvalView>) -> Vec<((&str, &str), u64)> {
    let mut all: Vec<((&str, &str), u64)> = eval
        .into_iter()
        .flat_map(|eval| &eval.desired_tg_updates)
        .flat_map(|(group, counters)| {
            counters
                .iter()
                .map(move |(name, value)| ((group.as_str(), name.as_str()), *value))
        })
        .collect();
    crate::cold_sort::sort_by(&mut all, |x, y| x.0.cmp(&y.0));
    let mut unique: Vec<((&str, &str), u64)> = Vec::with_capacity(all.len());
    for item in all {
        match unique.last_mut() {
            Some(last) if last.0 == item.0 => *last = item,
            _ => unique.push(item),
        }
    }
    unique
}

/// The value of counter `name` in [`counters`]'s list.
fn counter(counters: &[((&str, &str), u64)], name: (&str, &str)) -> Option<u64> {
    let at = counters.binary_search_by(|entry| entry.0.cmp(&name)).ok()?;
    Some(counters[at].1)
}

/// The eval of A and of B that answer each other: the n-th eval for the
/// same (job, trigger, node) on each side. A's evals first, in A's order,
/// then B's that have no partner, in B's order.
fn eval_pairs<'v>(
    a: &'v [Rc<EvalView>],
    b: &'v [Rc<EvalView>],
) -> Vec<(Option<&'v EvalView>, Option<&'v EvalView>)> {
    fn what(eval: &EvalView) -> (&str, &str, Option<&str>) {
        (
            eval.job_id.as_str(),
            eval.triggered_by.as_str(),
            eval.node_id.as_deref(),
        )
    }
    let items = both_sorted(a.iter().map(|x| &**x), b.iter().map(|y| &**y), |x, y| {
        what(x).cmp(&what(y))
    });
    let mut partner_of_a: Vec<Option<&EvalView>> = vec![None; a.len()];
    let mut b_paired = vec![false; b.len()];
    for run in items.chunk_by(|x, y| what(x.2) == what(y.2)) {
        let (in_a, in_b) = run.split_at(run.iter().take_while(|item| !item.0).count());
        for (x, y) in in_a.iter().zip(in_b) {
            partner_of_a[x.1] = Some(y.2);
            b_paired[y.1] = true;
        }
    }
    let extra_b = b
        .iter()
        .zip(b_paired)
        .filter(|(_, paired)| !paired)
        .map(|(eval, _)| (None, Some(&**eval)));
    a.iter()
        .map(|eval| Some(&**eval))
        .zip(partner_of_a)
        .chain(extra_b)
        .collect()
}

fn diff_evals(a: &PlaygroundView, b: &PlaygroundView) -> Vec<EvalDiff> {
    let side = |eval: &EvalView| EvalSide {
        id: eval.id.clone(),
        short_id: eval.short_id.clone(),
        status: eval.status.clone(),
    };
    eval_pairs(&a.evals, &b.evals)
        .into_iter()
        .filter_map(|(x, y)| {
            let (counters_a, counters_b) = (counters(x), counters(y));
            let mut names: Vec<(&str, &str)> = counters_a.iter().map(|c| c.0).collect();
            names.extend(
                counters_b
                    .iter()
                    .map(|c| c.0)
                    .filter(|name| counter(&counters_a, *name).is_none()),
            );
            let counter_diffs: Vec<CounterDiff> = names
                .into_iter()
                .filter_map(|name| {
                    let va = counter(&counters_a, name).unwrap_or(0);
                    let vb = counter(&counters_b, name).unwrap_or(0);
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
            // Both sides' evals are for the same (job, trigger, node).
            let key = x.or(y)?;
            Some(EvalDiff {
                job_id: key.job_id.clone(),
                triggered_by: key.triggered_by.clone(),
                node_id: key.node_id.clone(),
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
            allocs: allocs.into_iter().map(std::rc::Rc::new).collect(),
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
            nodes: nodes.into_iter().map(std::rc::Rc::new).collect(),
            evals: evals.into_iter().map(std::rc::Rc::new).collect(),
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
