//! View models: plain data the UI renders. The UI makes no decision of its
//! own; everything it shows (statuses, sets, reasons, the sequence diagram's
//! arrows) is computed here from the core's state.

use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// One allocation as a block in the cluster view and a row in inspectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AllocView {
    /// Allocation ID.
    pub id: String,
    /// The first 8 characters of the ID, as Nomad shows it.
    pub short_id: String,
    /// Allocation name, `<job>.<group>[<index>]`.
    pub name: String,
    /// Name index, the number in brackets.
    pub name_index: u32,
    /// Node the allocation is on.
    pub node_id: String,
    /// Client status (`pending`, `running`, `complete`, `failed`, `lost`, `unknown`).
    pub client_status: String,
    /// Desired status (`run`, `stop`, `evict`).
    pub desired_status: String,
    /// Job version the allocation runs.
    pub job_version: u64,
    /// The server-written AllocStates, oldest first, as `(value, time label)`.
    pub alloc_states: Vec<(String, String)>,
    /// Previous allocation in the replacement chain, if any.
    pub previous: Option<String>,
    /// Next allocation in the replacement chain, if any.
    pub next: Option<String>,
    /// Follow-up evaluation that will revisit the allocation, if any.
    pub followup_eval: Option<String>,
    /// Task states as `(task, state, restarts)`.
    pub tasks: Vec<(String, String, u64)>,
    /// The deployment's verdict on the alloc: `healthy`, `unhealthy`, or
    /// `None` while unset (or outside a deployment).
    pub deployment_health: Option<String>,
    /// Whether the alloc is a canary of its deployment.
    pub canary: bool,
}

/// One client node in the cluster view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct NodeView {
    /// Node ID.
    pub id: String,
    /// Node name shown to the user.
    pub name: String,
    /// Node status as the servers see it (`ready`, `down`, `disconnected`, `initializing`).
    pub status: String,
    /// Whether the client's link to the servers is up (the user's fault, not the servers' verdict).
    pub link_up: bool,
    /// Whether the node is eligible for scheduling.
    pub eligible: bool,
    /// Whether the node is draining.
    pub draining: bool,
    /// Allocations on the node, in ID order. Shared: an alloc the step did
    /// not change keeps the same `Rc` from one view to the next, so
    /// comparing views stops at the pointer.
    pub allocs: Vec<Rc<AllocView>>,
}

/// An evaluation in the broker's queue or history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EvalView {
    /// Evaluation ID.
    pub id: String,
    /// The first 8 characters of the ID.
    pub short_id: String,
    /// Job the evaluation is for.
    pub job_id: String,
    /// Node that triggered it, for node-update evals.
    pub node_id: Option<String>,
    /// Trigger (`node-update`, `reconnect`, `max-disconnect-timeout`, ...).
    pub triggered_by: String,
    /// Status (`pending`, `blocked`, `complete`, `failed`, `canceled`).
    pub status: String,
    /// Priority.
    pub priority: u32,
    /// Delayed evaluations: when they become ready, as a time label.
    pub wait_until: Option<String>,
    /// Per task group counters of the reconciler's decisions, as `(group, [(counter, value)])`.
    pub desired_tg_updates: Vec<(String, Vec<(String, u64)>)>,
    /// Why each allocation went where it did, when the evaluation has been processed.
    /// Shared: a step that changes no decision hands the UI the same `Rc`.
    pub decisions: Rc<Vec<DecisionView>>,
}

/// One allocation's line in the eval inspector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DecisionView {
    /// Allocation ID.
    pub alloc_id: String,
    /// Allocation name.
    pub alloc_name: String,
    /// Node the allocation is on.
    pub node_id: String,
    /// The set the reconciler put it in (`untainted`, `lost`, `disconnecting`, ...).
    pub set: String,
    /// Why: the classification rule, in a sentence.
    pub why: String,
    /// What was decided (`place`, `stop`, `mark unknown`, `reconnect`, `none`, ...).
    pub effect: String,
}

/// A client-to-server call, as a chip in the call dock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CallView {
    /// Stable ID (`hb#3`).
    pub id: String,
    /// The call number the script's call actions refer to.
    pub call: String,
    /// The client that sends it.
    pub node_id: String,
    /// Short code: `REG`, `HB`, `UPD`, `GET`.
    pub code: String,
    /// Full RPC name, e.g. `Node.UpdateStatus`.
    pub rpc: String,
    /// What the call carries, in a few words.
    pub detail: String,
    /// `scheduled`, `in-flight`, `held`, `delivered`, `dropped`.
    pub fate: String,
}

/// One line of the sequence diagram: an arrow between lanes or a note on one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SeqEventView {
    /// The step that produced it (clicking the arrow jumps there).
    pub step: usize,
    /// Time label of the event.
    pub time: String,
    /// Lane it starts on (a node ID, `leader` or `broker`).
    pub from: String,
    /// Lane it ends on (equal to `from` for a note).
    pub to: String,
    /// Label drawn on the arrow.
    pub label: String,
    /// `call`, `reply-ok`, `reply-err`, `status`, `eval`, `note`.
    pub kind: String,
}

/// A job and its groups, for the jobs panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct JobView {
    /// Job ID.
    pub id: String,
    /// Job type (`service`, `batch`, `system`, `sysbatch`).
    pub job_type: String,
    /// Current version.
    pub version: u64,
    /// Whether the job is stopped.
    pub stopped: bool,
    /// The newest earlier version that ran (not a stopped one): what "Revert"
    /// registers again (`Job.Revert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revert_to: Option<u64>,
    /// Groups as `(name, count)`.
    pub groups: Vec<(String, u64)>,
    /// The job's latest deployment, if it has one.
    pub deployment: Option<DeploymentView>,
}

/// A job's latest deployment (what `nomad job status` shows under "Latest
/// Deployment").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DeploymentView {
    /// Deployment ID.
    pub id: String,
    /// The first 8 characters of the ID.
    pub short_id: String,
    /// Job version it deploys.
    pub job_version: u64,
    /// Status (`running`, `paused`, `failed`, `successful`, `cancelled`, ...).
    pub status: String,
    /// Status description, as Nomad writes it.
    pub description: String,
    /// Whether the deployment is still active (running, paused, ...).
    pub active: bool,
    /// Whether some group has canaries that are not promoted yet.
    pub needs_promotion: bool,
    /// Per task group progress, in group name order.
    pub groups: Vec<DeploymentGroupView>,
}

/// One task group's line of a deployment (`DeploymentState`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DeploymentGroupView {
    /// Group name.
    pub name: String,
    /// `DesiredTotal`.
    pub desired: u32,
    /// `PlacedAllocs`.
    pub placed: u32,
    /// `HealthyAllocs`.
    pub healthy: u32,
    /// `UnhealthyAllocs`.
    pub unhealthy: u32,
    /// `DesiredCanaries`.
    pub desired_canaries: u32,
    /// How many canaries are placed.
    pub placed_canaries: u32,
    /// `Promoted`.
    pub promoted: bool,
    /// `AutoPromote`.
    pub auto_promote: bool,
    /// `AutoRevert`.
    pub auto_revert: bool,
    /// `ProgressDeadline`, as a Go duration (`10m0s`).
    pub progress_deadline: String,
    /// `RequireProgressBy` as a time label, when set.
    pub require_progress_by: Option<String>,
}

/// The whole cluster as the UI draws it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClusterView {
    /// Client nodes, in ID order.
    pub nodes: Vec<NodeView>,
}

/// A small example cluster: three ready nodes running one service job
/// `web` with three allocations.
pub fn demo_cluster() -> ClusterView {
    let nodes = ["client-a", "client-b", "client-c"]
        .iter()
        .enumerate()
        .map(|(index, name)| NodeView {
            id: format!("node-{index}"),
            name: (*name).to_string(),
            status: "ready".to_string(),
            link_up: true,
            eligible: true,
            draining: false,
            allocs: vec![Rc::new(AllocView {
                id: format!("alloc-{index}"),
                short_id: format!("alloc-{index}"),
                name: format!("web.web[{index}]"),
                name_index: index as u32,
                node_id: format!("node-{index}"),
                client_status: "running".to_string(),
                desired_status: "run".to_string(),
                ..AllocView::default()
            })],
        })
        .collect();
    ClusterView { nodes }
}

/// Everything the main screen shows at the current step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PlaygroundView {
    /// Scenario name.
    pub scenario: String,
    /// Profile (Nomad version) the run uses.
    pub profile: String,
    /// Profiles the user can switch to.
    pub profiles: Vec<String>,
    /// Current simulated time, as a label (`t=42.000s`).
    pub time: String,
    /// Index of the current step (0 = before the first action).
    pub step: usize,
    /// Number of steps in the script.
    pub steps_total: usize,
    /// Whether the simulation has work left.
    pub can_step: bool,
    /// Client nodes, in ID order. Shared: a node the step did not change
    /// (its heartbeat TTL aside, see `node_ttls`) keeps the same `Rc`, so
    /// the UI's comparisons stop at the pointer.
    pub nodes: Vec<Rc<NodeView>>,
    /// Milliseconds left before the servers' heartbeat timer of each node of
    /// `nodes` fires, if armed (same order). Kept apart from the node views:
    /// it changes at every step for every node.
    pub node_ttls: Vec<Option<u64>>,
    /// Jobs, in ID order.
    pub jobs: Vec<JobView>,
    /// Evaluations, oldest first. Shared: an eval the step did not change
    /// keeps the same `Rc`, so the UI's comparisons stop at the pointer.
    pub evals: Vec<Rc<EvalView>>,
    /// Calls per client, in send order.
    pub calls: Vec<CallView>,
    /// The newest events of the sequence diagram up to the current step (at
    /// least `playground::SEQUENCE_WINDOW`; the window's first event moves by
    /// whole windows). Shared: an event stays the same `Rc` while it is in
    /// the window.
    pub sequence: Vec<Rc<SeqEventView>>,
    /// How many older events are left out of `sequence` (the first one's
    /// position in the whole diagram).
    pub sequence_hidden: usize,
    /// The newest lines of the trace (one fixed-column line per event) up to the current step
    /// (at least `playground::TRACE_WINDOW`; the window's first line moves by whole windows).
    /// Shared: a line stays the same `Rc` while it is in the window.
    pub trace: Vec<Rc<str>>,
    /// How many older trace lines are left out of `trace`.
    pub trace_hidden: usize,
    /// Assertion and invariant failures so far.
    pub violations: Vec<String>,
    /// Narration: the scenario's description, then its notes up to the current step.
    pub notes: Vec<String>,
}
