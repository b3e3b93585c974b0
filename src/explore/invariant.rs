//! The invariants explore mode checks after every step of every order: each
//! has a stable name, a one-line explanation for users, and a time when it
//! applies (whenever the reconciler has settled, or once the cluster is
//! idle). They encode what the reconnect bug reports (#12680, #14925,
//! #15068, #15808, #16609, #24165) expected Nomad to do.

use crate::model::{ClientStatus, DesiredStatus, EvalStatus, JobType, NodeStatus};
use crate::sim::Sim;
use crate::sim::check::{check_counts, settled};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One invariant explore mode can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Invariant {
    /// No two running allocs share a name index once the reconciler settled.
    UniqueNameIndex,
    /// Each group runs `count` live allocs once the cluster is idle.
    CountHonoured,
    /// A reconnected alloc runs the job version the server expects.
    ReconnectedVersion,
    /// No alloc stays unknown on a ready node once idle.
    NoUnknownOnReadyNode,
    /// No replacement placed during the episode is stopped again while an
    /// older alloc of the same name is kept.
    NoReplacementFlap,
    /// Follow-up evals of reconnected allocs are cancelled (profiles that do it).
    FollowupCancelled,
}

/// When an invariant is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckedWhen {
    /// After every step at which nothing is left to schedule.
    Settled,
    /// Once the cluster is idle (end of each exploration phase).
    Idle,
}

impl Invariant {
    /// Every invariant, in report order.
    pub const ALL: [Invariant; 6] = [
        Invariant::UniqueNameIndex,
        Invariant::CountHonoured,
        Invariant::ReconnectedVersion,
        Invariant::NoUnknownOnReadyNode,
        Invariant::NoReplacementFlap,
        Invariant::FollowupCancelled,
    ];

    /// The stable name (CLI flags, JSON, links).
    pub fn name(self) -> &'static str {
        match self {
            Invariant::UniqueNameIndex => "unique-name-index",
            Invariant::CountHonoured => "count-honoured",
            Invariant::ReconnectedVersion => "reconnected-version",
            Invariant::NoUnknownOnReadyNode => "no-unknown-on-ready-node",
            Invariant::NoReplacementFlap => "no-replacement-flap",
            Invariant::FollowupCancelled => "followup-cancelled",
        }
    }

    /// The invariant called `name`.
    pub fn parse(name: &str) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.name() == name)
    }

    /// What it means, for a user.
    pub fn explanation(self) -> &'static str {
        match self {
            Invariant::UniqueNameIndex => {
                "once the scheduler has nothing left to do, no two running allocations of a job \
                 share a name index (web[2] runs once, not twice)"
            }
            Invariant::CountHonoured => {
                "once the cluster is idle, every task group runs exactly `count` allocations \
                 that should run"
            }
            Invariant::ReconnectedVersion => {
                "once the cluster is idle, an allocation that came back from a disconnected node \
                 runs the same job version as the rest of its group (it got the job update)"
            }
            Invariant::NoUnknownOnReadyNode => {
                "once the cluster is idle, no allocation is still `unknown` on a node the \
                 servers consider ready"
            }
            Invariant::NoReplacementFlap => {
                "a replacement placed while the node reconnects is not stopped again in the same \
                 episode while an older allocation of the same name is kept (no needless churn)"
            }
            Invariant::FollowupCancelled => {
                "once the cluster is idle, the delayed follow-up eval of an allocation that \
                 reconnected has been cancelled (only in versions where Nomad does this, 1.10.2+)"
            }
        }
    }

    /// When it is checked.
    pub fn when(self) -> CheckedWhen {
        match self {
            Invariant::UniqueNameIndex => CheckedWhen::Settled,
            _ => CheckedWhen::Idle,
        }
    }
}

/// One broken invariant in one state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Which invariant.
    pub invariant: Invariant,
    /// What exactly is wrong.
    pub detail: String,
}

/// What the checks need besides the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckContext {
    /// The server's raft index when the explored window began: allocs
    /// created after it were placed during the episode.
    pub window_index: u64,
}

fn live(alloc: &crate::model::Allocation) -> bool {
    alloc.desired_status == DesiredStatus::Run && !alloc.client_terminal_status()
}

fn is_service(alloc: &crate::model::Allocation) -> bool {
    alloc
        .job
        .as_ref()
        .is_some_and(|j| j.job_type == JobType::Service)
}

fn reconnected(alloc: &crate::model::Allocation) -> bool {
    alloc
        .alloc_states
        .iter()
        .any(|s| s.field == crate::model::ALLOC_STATE_FIELD_CLIENT_STATUS && s.value == "unknown")
        && alloc.client_status == ClientStatus::Running
}

/// Checks the enabled invariants of kind [`CheckedWhen::Settled`] (only
/// when nothing is left to schedule) and, when `idle`, the idle ones.
pub fn check(sim: &Sim, ctx: &CheckContext, enabled: &[Invariant], idle: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    let on = |i: Invariant| enabled.contains(&i);
    if on(Invariant::UniqueNameIndex) && (idle || settled(sim)) {
        unique_name_index(sim, &mut out);
    }
    if !idle {
        return out;
    }
    if on(Invariant::CountHonoured) {
        for detail in check_counts(sim) {
            out.push(Violation {
                invariant: Invariant::CountHonoured,
                detail,
            });
        }
    }
    if on(Invariant::ReconnectedVersion) {
        reconnected_version(sim, &mut out);
    }
    if on(Invariant::NoUnknownOnReadyNode) {
        unknown_on_ready(sim, &mut out);
    }
    if on(Invariant::NoReplacementFlap) {
        replacement_flap(sim, ctx, &mut out);
    }
    if on(Invariant::FollowupCancelled) && sim.profile.rules.cancel_followup_on_reconnect {
        followup_cancelled(sim, &mut out);
    }
    out
}

fn unique_name_index(sim: &Sim, out: &mut Vec<Violation>) {
    let mut running: BTreeMap<(&str, &str, u32), Vec<&str>> = BTreeMap::new();
    for alloc in sim.server.state.allocs.values() {
        if is_service(alloc)
            && alloc.desired_status == DesiredStatus::Run
            && alloc.client_status == ClientStatus::Running
        {
            running
                .entry((&alloc.job_id, &alloc.task_group, alloc.name_index()))
                .or_default()
                .push(&alloc.node_id);
        }
    }
    for ((job, group, index), nodes) in running {
        if nodes.len() > 1 {
            out.push(Violation {
                invariant: Invariant::UniqueNameIndex,
                detail: format!(
                    "{} running allocs of {job}.{group}[{index}] (on {})",
                    nodes.len(),
                    nodes.join(", ")
                ),
            });
        }
    }
}

fn reconnected_version(sim: &Sim, out: &mut Vec<Violation>) {
    let state = &sim.server.state;
    for (id, record) in &state.jobs {
        if record.job.stop {
            continue;
        }
        let expected = record.job.version;
        let allocs = sim.server.job_allocs(id);
        for alloc in allocs.iter().filter(|a| live(a) && reconnected(a)) {
            let version = alloc.job_version();
            // The rest of the group moved on: some other live alloc runs the
            // version the server has.
            let group_updated = allocs.iter().any(|other| {
                other.id != alloc.id
                    && other.task_group == alloc.task_group
                    && live(other)
                    && other.job_version() == expected
            });
            if version != expected && group_updated {
                out.push(Violation {
                    invariant: Invariant::ReconnectedVersion,
                    detail: format!(
                        "{} on {} reconnected and runs job version {version}, the job is at \
                         version {expected}",
                        alloc.name, alloc.node_id
                    ),
                });
            }
        }
    }
}

fn unknown_on_ready(sim: &Sim, out: &mut Vec<Violation>) {
    let state = &sim.server.state;
    for alloc in state.allocs.values() {
        if alloc.client_status != ClientStatus::Unknown
            || alloc.desired_status != DesiredStatus::Run
        {
            continue;
        }
        let ready = state
            .nodes
            .get(&alloc.node_id)
            .is_some_and(|n| n.node.status == NodeStatus::Ready);
        if ready {
            out.push(Violation {
                invariant: Invariant::NoUnknownOnReadyNode,
                detail: format!(
                    "{} is still unknown on {}, which is ready",
                    alloc.name, alloc.node_id
                ),
            });
        }
    }
}

fn replacement_flap(sim: &Sim, ctx: &CheckContext, out: &mut Vec<Violation>) {
    let state = &sim.server.state;
    for alloc in state.allocs.values() {
        let placed_in_episode = alloc.create_index > ctx.window_index;
        let replacement = !alloc.previous_allocation.is_empty();
        if !(placed_in_episode && replacement && alloc.desired_status != DesiredStatus::Run) {
            continue;
        }
        let kept = state
            .allocs_by_name
            .get(&alloc.name)
            .into_iter()
            .flatten()
            .filter_map(|id| state.allocs.get(id))
            .find(|other| other.create_index <= ctx.window_index && live(other));
        if let Some(kept) = kept {
            out.push(Violation {
                invariant: Invariant::NoReplacementFlap,
                detail: format!(
                    "{} was placed on {} during the reconnect and stopped again, while the older \
                     {} on {} is kept",
                    alloc.name, alloc.node_id, kept.name, kept.node_id
                ),
            });
        }
    }
}

fn followup_cancelled(sim: &Sim, out: &mut Vec<Violation>) {
    let state = &sim.server.state;
    for alloc in state.allocs.values() {
        if !(live(alloc) && reconnected(alloc)) || alloc.followup_eval_id.is_empty() {
            continue;
        }
        let node_ready = state
            .nodes
            .get(&alloc.node_id)
            .is_some_and(|n| n.node.status == NodeStatus::Ready);
        // A follow-up shared with an alloc that is still unknown stays.
        let shared = state.allocs.values().any(|other| {
            other.id != alloc.id
                && other.followup_eval_id == alloc.followup_eval_id
                && other.client_status == ClientStatus::Unknown
        });
        let pending = state
            .evals
            .get(&alloc.followup_eval_id)
            .is_some_and(|r| r.eval.status == EvalStatus::Pending);
        if node_ready && !shared && pending {
            out.push(Violation {
                invariant: Invariant::FollowupCancelled,
                detail: format!(
                    "{} reconnected but its follow-up eval {} is still pending",
                    alloc.name,
                    crate::sim::trace::short(&alloc.followup_eval_id)
                ),
            });
        }
    }
}
