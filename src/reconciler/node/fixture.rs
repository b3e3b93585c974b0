//! The `kind: node` conformance fixtures (`shared/conformance/FORMAT.md`,
//! "Kind node"): their `input` object, the run, and the result in the shape
//! of their `expect` object.

use super::{
    AllocTuple, NodeReconcileResult, NodeReconciler, NodeRule, NodeRules, NodeSet,
    TerminalByNodeByName,
};
use crate::model::{
    Allocation, ClientStatus, Deployment, DeploymentStatusUpdate, Job, Node, Time, embed_jobs,
    null_as_default,
};
use crate::reconciler::reasons::AllocCategory;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The `input` object of a `kind: node` fixture. Unknown keys are ignored
/// and absent ones take Go's zero value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NodeFixtureInput {
    /// The reconciler's clock.
    pub now: Time,
    /// The system or sysbatch job; `null` reads as an empty job, which
    /// requires nothing.
    pub job: Option<Job>,
    /// `readyNodes`.
    #[serde(deserialize_with = "null_as_default")]
    pub ready_nodes: Vec<Node>,
    /// `notReadyNodes`.
    #[serde(deserialize_with = "null_as_default")]
    pub not_ready_nodes: Vec<String>,
    /// `taintedNodes`; `null` = the node was garbage-collected.
    #[serde(deserialize_with = "null_as_default")]
    pub tainted_nodes: BTreeMap<String, Option<Node>>,
    /// `live`: the job's non-terminal allocs.
    #[serde(deserialize_with = "null_as_default")]
    pub live_allocs: Vec<Allocation>,
    /// `terminal`: the latest terminal alloc per node and name.
    #[serde(deserialize_with = "null_as_default")]
    pub terminal_allocs: Vec<Allocation>,
    /// The current deployment.
    pub deployment: Option<Deployment>,
    /// Run only the per-node step for this node.
    pub only_node: Option<String>,
}

/// The result of a `kind: node` fixture run: every key of the `expect` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NodeFixtureResult {
    /// Placements.
    pub place: usize,
    /// Updates.
    pub update: usize,
    /// Migrations.
    pub migrate: usize,
    /// Stops.
    pub stop: usize,
    /// Ignored entries.
    pub ignore: usize,
    /// Lost allocs.
    pub lost: usize,
    /// Allocs to mark unknown.
    pub disconnecting: usize,
    /// Reconnected allocs.
    pub reconnecting: usize,
    /// The node of each placement.
    pub place_nodes: Vec<String>,
    /// IDs of the updated allocs.
    pub update_ids: Vec<String>,
    /// IDs of the migrated allocs.
    pub migrate_ids: Vec<String>,
    /// IDs of the stopped allocs.
    pub stop_ids: Vec<String>,
    /// IDs of the ignored allocs.
    pub ignore_ids: Vec<String>,
    /// IDs of the lost allocs.
    pub lost_ids: Vec<String>,
    /// IDs of the allocs to mark unknown.
    pub disconnecting_ids: Vec<String>,
    /// IDs of the reconnected allocs.
    pub reconnecting_ids: Vec<String>,
    /// The deployment the run created and left current, else `null`.
    pub create_deployment: Option<Deployment>,
    /// The deployment status updates, as the reconciler's list stands.
    pub deployment_updates: Vec<DeploymentStatusUpdate>,
}

/// Runs a `kind: node` fixture with today's rules ([`NodeRules::default`]).
/// Allocs get their embedded job from `input.job` (with their own
/// `JobVersion`, `JobCreateIndex` and `JobModifyIndex`); new deployments are
/// named `node-deployment-1`, `-2`, ... (fixtures never compare the ID).
pub fn compute_fixture(input: &NodeFixtureInput) -> NodeFixtureResult {
    let result = reconcile_fixture(input);
    let ids = |set: NodeSet| -> Vec<String> {
        result
            .set(set)
            .filter_map(|tuple| tuple.alloc_id().map(str::to_string))
            .collect()
    };
    NodeFixtureResult {
        place: result.count(NodeSet::Place),
        update: result.count(NodeSet::Update),
        migrate: result.count(NodeSet::Migrate),
        stop: result.count(NodeSet::Stop),
        ignore: result.count(NodeSet::Ignore),
        lost: result.count(NodeSet::Lost),
        disconnecting: result.count(NodeSet::Disconnecting),
        reconnecting: result.count(NodeSet::Reconnecting),
        place_nodes: result
            .set(NodeSet::Place)
            .map(|tuple| tuple.node_id.clone())
            .collect(),
        update_ids: ids(NodeSet::Update),
        migrate_ids: ids(NodeSet::Migrate),
        stop_ids: ids(NodeSet::Stop),
        ignore_ids: ids(NodeSet::Ignore),
        lost_ids: ids(NodeSet::Lost),
        disconnecting_ids: ids(NodeSet::Disconnecting),
        reconnecting_ids: ids(NodeSet::Reconnecting),
        create_deployment: result.created_deployment().cloned(),
        deployment_updates: result.deployment_updates.clone(),
    }
}

/// Runs a `kind: node` fixture and returns the reconciler's full result,
/// every entry tagged with its rule (what [`compute_fixture`] counts).
pub fn reconcile_fixture(input: &NodeFixtureInput) -> NodeReconcileResult {
    let job = input.job.clone().unwrap_or_default();
    let mut live = input.live_allocs.clone();
    embed_jobs(&mut live, input.job.as_ref());
    let mut terminal_allocs = input.terminal_allocs.clone();
    embed_jobs(&mut terminal_allocs, input.job.as_ref());
    let terminal = TerminalByNodeByName::from_allocs(&terminal_allocs);
    let not_ready: BTreeSet<String> = input.not_ready_nodes.iter().cloned().collect();

    let reconciler = NodeReconciler {
        job: &job,
        ready_nodes: &input.ready_nodes,
        not_ready_nodes: &not_ready,
        tainted_nodes: &input.tainted_nodes,
        live_allocs: &live,
        terminal_allocs: &terminal,
        deployment: input.deployment.as_ref(),
        now: input.now,
        rules: NodeRules::default(),
    };
    let mut next = 0u64;
    let mut new_id = || {
        next += 1;
        format!("node-deployment-{next}")
    };
    match &input.only_node {
        Some(node_id) => reconciler.compute_for_node(node_id, &mut new_id),
        None => reconciler.compute(&mut new_id),
    }
}

/// One row of `reconcile --explain` for a `kind: node` fixture: an entry of
/// the node diff, with the alloc as the input had it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeDecision {
    /// The alloc the entry is about; `None` for a placement.
    pub alloc_id: Option<String>,
    /// The alloc name.
    pub name: String,
    /// The node.
    pub node_id: String,
    /// The alloc's client status in the input; `None` for a placement.
    pub client_status: Option<ClientStatus>,
    /// The set of Nomad's alloc classification the entry corresponds to
    /// (`None` for a placement of a missing name).
    pub set: Option<AllocCategory>,
    /// The rule that decided.
    pub rule: NodeRule,
    /// What was decided, e.g. `stop`, `mark unknown`, `place (replacing a1)`.
    pub decision: String,
}

/// The reasons of a `kind: node` fixture run: one row per entry of the node
/// diff, by node ID, then alloc name, then set.
pub fn explain_fixture(input: &NodeFixtureInput) -> Vec<NodeDecision> {
    let result = reconcile_fixture(input);
    let status_of = |id: &str| {
        input
            .live_allocs
            .iter()
            .chain(&input.terminal_allocs)
            .find(|a| a.id == id)
            .map(|a| a.client_status.clone())
    };
    let mut rows = Vec::new();
    for diff in result.nodes.values() {
        let mut tuples: Vec<&AllocTuple> = diff.iter().collect();
        tuples.sort_by(|a, b| a.name.cmp(&b.name).then(a.set().cmp(&b.set())));
        for t in tuples {
            let placed = t.set() == NodeSet::Place;
            let alloc_id = t.alloc_id().filter(|_| !placed).map(str::to_string);
            rows.push(NodeDecision {
                client_status: alloc_id.as_deref().and_then(status_of),
                alloc_id,
                name: t.name.clone(),
                node_id: t.node_id.clone(),
                set: t.rule.category(),
                rule: t.rule,
                decision: t.decision(),
            });
        }
    }
    rows
}
