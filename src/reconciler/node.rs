//! The node reconciler for system and sysbatch jobs.
//!
//! Follows Nomad's `scheduler/reconciler/reconcile_node.go` at HEAD
//! (aa026cc99c): `NodeReconciler.Compute` visits every node that is ready for
//! the job or holds one of its live allocs, and the per-node step
//! (`computeForNode`) diffs the names the job requires
//! (`<job Name>.<group>[<index>]`, `count` per group on every node) against
//! the allocs on that node.
//!
//! ```text
//!   live allocs on the node ──► first matching rule ──► stop / migrate / lost /
//!                                (NodeRule order)        ignore / reconnecting /
//!                                                        disconnecting / update
//!   required names missing ──► terminal sysbatch? ──► update / ignore
//!                          └─► eligible, untainted ──► place (+ maybe a deployment)
//! ```
//!
//! Unlike Nomad, the run is deterministic: nodes are visited in node-ID
//! order and required names in name order (Go ranges over maps), the clock
//! is the caller's `now` and new deployment IDs come from the caller. Every
//! entry of the result carries the [`NodeRule`] that put it in its set, and
//! the rules that changed between releases are switches ([`NodeRules`]).
//!
//! The fixture entry point for the `kind: node` conformance cases is in
//! [`fixture`]; [`inputs`] builds the input from cluster state the way the
//! system scheduler does.
//!
//! # Example
//!
//! ```
//! use nomad_playground::model::{Job, JobType, Node, NodeStatus, TaskGroup, Time};
//! use nomad_playground::reconciler::node::{
//!     NodeReconciler, NodeRule, NodeRules, NodeSet, TerminalByNodeByName,
//! };
//! use std::collections::{BTreeMap, BTreeSet};
//!
//! let job = Job {
//!     id: "agent".into(),
//!     name: "agent".into(),
//!     job_type: JobType::System,
//!     task_groups: vec![TaskGroup { name: "a".into(), count: 1, ..TaskGroup::default() }],
//!     ..Job::default()
//! };
//! let nodes = vec![Node { id: "n1".into(), status: NodeStatus::Ready, ..Node::default() }];
//! let (not_ready, tainted) = (BTreeSet::new(), BTreeMap::new());
//! let terminal = TerminalByNodeByName::new();
//! let reconciler = NodeReconciler {
//!     job: &job,
//!     ready_nodes: &nodes,
//!     not_ready_nodes: &not_ready,
//!     tainted_nodes: &tainted,
//!     live_allocs: &[],
//!     terminal_allocs: &terminal,
//!     deployment: None,
//!     now: Time::UNIX_EPOCH,
//!     rules: NodeRules::default(),
//! };
//! let result = reconciler.compute(&mut || "deployment-1".to_string());
//! let placements: Vec<_> = result.set(NodeSet::Place).collect();
//! assert_eq!(placements.len(), 1);
//! assert_eq!(placements[0].name, "agent.a[0]");
//! assert_eq!((placements[0].node_id.as_str(), placements[0].rule), ("n1", NodeRule::Missing));
//! ```

pub mod fixture;
pub mod inputs;
pub mod result;
pub mod rules;
pub mod version;

pub use fixture::{
    NodeDecision, NodeFixtureInput, NodeFixtureResult, compute_fixture, explain_fixture,
    reconcile_fixture,
};
pub use inputs::NodeSchedulerView;
pub use result::{AllocTuple, DeploymentNote, NodeDiff, NodeReconcileResult, NodeRule, NodeSet};
pub use rules::{NodeReconnectMarker, NodeRules};

use crate::model::{
    Allocation, ClientStatus, Deployment, DeploymentState, DeploymentStatus,
    DeploymentStatusUpdate, DesiredStatus, Job, JobType, Node, NodeStatus, TaskGroup, Time,
    deployment::description,
};
use std::collections::{BTreeMap, BTreeSet};
use version::AgentVersion;

/// The latest terminal alloc per node and name (Nomad's
/// `structs.TerminalByNodeByName`): node ID → alloc name → alloc.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TerminalByNodeByName {
    by_node: BTreeMap<String, BTreeMap<String, Allocation>>,
}

impl TerminalByNodeByName {
    /// An empty index.
    pub fn new() -> Self {
        TerminalByNodeByName::default()
    }

    /// Indexes terminal allocs, keeping per node and name the one with the
    /// highest `CreateIndex` (the first one on a tie), as Nomad's `Set` does.
    pub fn from_allocs<'a>(allocs: impl IntoIterator<Item = &'a Allocation>) -> Self {
        let mut index = TerminalByNodeByName::new();
        for alloc in allocs {
            index.set(alloc.clone());
        }
        index
    }

    /// Adds an alloc unless a newer one of the same node and name is there.
    pub fn set(&mut self, alloc: Allocation) {
        let by_name = self.by_node.entry(alloc.node_id.clone()).or_default();
        match by_name.get(&alloc.name) {
            Some(previous) if previous.create_index >= alloc.create_index => {}
            _ => {
                by_name.insert(alloc.name.clone(), alloc);
            }
        }
    }

    /// The terminal alloc of `name` on `node_id`.
    pub fn get(&self, node_id: &str, name: &str) -> Option<&Allocation> {
        self.by_node.get(node_id)?.get(name)
    }

    /// The terminal allocs on `node_id`, by name.
    pub fn on_node(&self, node_id: &str) -> impl Iterator<Item = &Allocation> {
        self.by_node
            .get(node_id)
            .into_iter()
            .flat_map(|m| m.values())
    }
}

/// Splits allocs into live ones and the terminal index (Nomad's
/// `structs.SplitTerminalAllocs`): an alloc is terminal when it is server- or
/// client-terminal.
pub fn split_terminal_allocs(allocs: &[Allocation]) -> (Vec<Allocation>, TerminalByNodeByName) {
    let mut live = Vec::new();
    let mut terminal = TerminalByNodeByName::new();
    for alloc in allocs {
        if alloc.terminal_status() {
            terminal.set(alloc.clone());
        } else {
            live.push(alloc.clone());
        }
    }
    (live, terminal)
}

/// The alloc names a system or sysbatch job requires on every node, with
/// their group (Nomad's `materializeSystemTaskGroups`): none when the job is
/// stopped.
pub fn required_names(job: &Job) -> BTreeMap<String, &TaskGroup> {
    let mut required = BTreeMap::new();
    if job.stopped() {
        return required;
    }
    for group in &job.task_groups {
        for index in 0..group.count {
            required.insert(format!("{}.{}[{}]", job.name, group.name, index), group);
        }
    }
    required
}

/// The Nomad version from which clients report deployment health for system
/// jobs (`minVersionSystemDeployments`).
pub const MIN_VERSION_SYSTEM_DEPLOYMENTS: &str = "1.11.0";

/// Whether a node's `nomad.version` attribute is older than 1.11.0 (an
/// absent or unreadable version counts as recent).
pub fn node_too_old_for_deployment(node: &Node) -> bool {
    let Some(text) = node.attributes.get("nomad.version") else {
        return false;
    };
    let (Some(version), Some(min)) = (
        AgentVersion::parse(text),
        AgentVersion::parse(MIN_VERSION_SYSTEM_DEPLOYMENTS),
    ) else {
        return false;
    };
    version.less_than(&min)
}

/// The input of one node reconciler run (the arguments of Nomad's
/// `NewNodeReconciler` and `Compute`), borrowed from the caller.
#[derive(Debug, Clone, Copy)]
pub struct NodeReconciler<'a> {
    /// The job (system or sysbatch). Its allocs carry their own embedded job.
    pub job: &'a Job,
    /// The ready nodes in the job's datacenters and pool (`readyNodes`).
    pub ready_nodes: &'a [Node],
    /// Nodes that are not ready, e.g. draining or ineligible (`notReadyNodes`).
    pub not_ready_nodes: &'a BTreeSet<String>,
    /// Tainted nodes holding the job's allocs: down, draining or
    /// disconnected; `None` = the node was garbage-collected.
    pub tainted_nodes: &'a BTreeMap<String, Option<Node>>,
    /// The job's non-terminal allocs (`live`).
    pub live_allocs: &'a [Allocation],
    /// The latest terminal alloc per node and name (`terminal`).
    pub terminal_allocs: &'a TerminalByNodeByName,
    /// The job's current deployment.
    pub deployment: Option<&'a Deployment>,
    /// The clock: every wall-clock read Nomad makes here (the expiry check,
    /// alloc-state timestamps, a new deployment's `CreateTime`).
    pub now: Time,
    /// The version switches.
    pub rules: NodeRules,
}

impl<'a> NodeReconciler<'a> {
    /// Runs the whole reconciler (`Compute`): every node that is ready or
    /// holds a live alloc, in node-ID order. `new_id` gives the ID of a
    /// deployment the run creates.
    pub fn compute(&self, new_id: &mut dyn FnMut() -> String) -> NodeReconcileResult {
        let mut allocs_by_node: BTreeMap<&str, Vec<&Allocation>> = BTreeMap::new();
        for alloc in self.live_allocs {
            allocs_by_node
                .entry(&alloc.node_id)
                .or_default()
                .push(alloc);
        }
        let eligible = self.eligible_nodes();
        for node_id in eligible.keys() {
            allocs_by_node.entry(node_id).or_default();
        }

        let required = required_names(self.job);
        let mut run = Run::new(self, new_id);
        let had_existing_deployment = run.current.is_some();
        for (node_id, allocs) in &allocs_by_node {
            let diff = run.compute_for_node(node_id, &eligible, &required, allocs);
            run.result.nodes.insert((*node_id).to_string(), diff);
        }

        if self.rules.system_deployments && !had_existing_deployment {
            // Allocs of this very version exist although no deployment did:
            // a rolling update from before system deployments was in flight,
            // and a new deployment could never complete.
            if run.has_same_version_allocs
                && let Some(dropped) = run.current.take()
            {
                run.result
                    .deployment_notes
                    .push(DeploymentNote::DroppedSameVersionAllocs {
                        deployment_id: dropped.id,
                    });
            }
            if self.rules.old_nodes_block_new_deployment {
                for node in eligible.values() {
                    if node_too_old_for_deployment(node)
                        && let Some(dropped) = run.current.take()
                    {
                        run.result
                            .deployment_notes
                            .push(DeploymentNote::DroppedOldNode {
                                deployment_id: dropped.id,
                                node_id: node.id.clone(),
                                version: node
                                    .attributes
                                    .get("nomad.version")
                                    .cloned()
                                    .unwrap_or_default(),
                            });
                    }
                }
            }
        }
        run.finish()
    }

    /// Runs only the per-node step (`computeForNode`) for `node_id`, over the
    /// live allocs whose `NodeID` is that node, as Nomad's unit tests do. The
    /// node need not be in any node list.
    pub fn compute_for_node(
        &self,
        node_id: &str,
        new_id: &mut dyn FnMut() -> String,
    ) -> NodeReconcileResult {
        let allocs: Vec<&Allocation> = self
            .live_allocs
            .iter()
            .filter(|alloc| alloc.node_id == node_id)
            .collect();
        let eligible = self.eligible_nodes();
        let required = required_names(self.job);
        let mut run = Run::new(self, new_id);
        let diff = run.compute_for_node(node_id, &eligible, &required, &allocs);
        run.result.nodes.insert(node_id.to_string(), diff);
        run.finish()
    }

    /// The ready nodes by ID (a repeated ID keeps the last entry, as Go's map does).
    fn eligible_nodes(&self) -> BTreeMap<&'a str, &'a Node> {
        self.ready_nodes
            .iter()
            .map(|node| (node.id.as_str(), node))
            .collect()
    }

    /// Whether the disconnect rules apply to `alloc` (before 2.0.0 only when
    /// its group sets lost_after).
    fn disconnect_rules_apply(&self, alloc: &Allocation) -> bool {
        !self.rules.require_group_lost_after
            || alloc.job_task_group().is_some_and(|group| {
                group.has_lost_after(self.rules.honour_legacy_disconnect_fields)
            })
    }

    /// Whether `alloc` still has to go through a reconnect, and whether it
    /// stayed unknown past lost_after.
    fn reconnect_and_expired(&self, alloc: &Allocation) -> (bool, bool) {
        if !self.disconnect_rules_apply(alloc) {
            return (false, false);
        }
        let honour_legacy = self.rules.honour_legacy_disconnect_fields;
        let last_unknown = if self.rules.last_unknown_from_run_start {
            alloc.last_unknown()
        } else {
            alloc.last_unknown_latest()
        };
        let expired = || alloc.expired_since(last_unknown, self.now, honour_legacy);
        let may_reconnect = matches!(
            alloc.client_status,
            ClientStatus::Unknown | ClientStatus::Running
        );
        match self.rules.reconnect_marker {
            NodeReconnectMarker::AllocState => {
                let reconnect = may_reconnect
                    && if self.rules.needs_to_reconnect_skips_empty {
                        alloc.needs_to_reconnect()
                    } else {
                        alloc.needs_to_reconnect_with_empty()
                    };
                (reconnect, reconnect && expired())
            }
            NodeReconnectMarker::TaskEvent => {
                let reconnect = may_reconnect && alloc.last_reconnect_event().is_some();
                (reconnect, expired())
            }
        }
    }
}

/// The mutable state of one run: Nomad's `NodeReconciler` fields.
struct Run<'r, 'a> {
    input: &'r NodeReconciler<'a>,
    new_id: &'r mut dyn FnMut() -> String,
    current: Option<Deployment>,
    created: bool,
    old: Option<Deployment>,
    /// COMPAT(1.11.0) in Nomad: some alloc of the version being deployed
    /// already exists (`compatHasSameVersionAllocs`).
    has_same_version_allocs: bool,
    result: NodeReconcileResult,
}

impl<'r, 'a> Run<'r, 'a> {
    fn new(input: &'r NodeReconciler<'a>, new_id: &'r mut dyn FnMut() -> String) -> Self {
        let current = if input.rules.system_deployments {
            input.deployment.cloned()
        } else {
            None
        };
        Run {
            input,
            new_id,
            current,
            created: false,
            old: None,
            has_same_version_allocs: false,
            result: NodeReconcileResult::default(),
        }
    }

    fn finish(mut self) -> NodeReconcileResult {
        self.result.deployment_created = self.created && self.current.is_some();
        self.result.deployment_current = self.current;
        self.result.deployment_old = self.old;
        self.result
    }

    /// The per-node step (`computeForNode`).
    fn compute_for_node(
        &mut self,
        node_id: &str,
        eligible: &BTreeMap<&str, &Node>,
        required: &BTreeMap<String, &TaskGroup>,
        live_allocs: &[&Allocation],
    ) -> NodeDiff {
        let input = self.input;
        let rules = input.rules;
        let mut diff = NodeDiff::default();

        if rules.system_deployments {
            self.cancel_unneeded_deployments();
        }
        let (deployment_paused, deployment_failed) = match &self.current {
            Some(d) => (
                matches!(
                    d.status,
                    DeploymentStatus::Paused
                        | DeploymentStatus::Pending
                        | DeploymentStatus::Initializing
                ),
                d.status == DeploymentStatus::Failed,
            ),
            None => (false, false),
        };

        let mut existing: BTreeSet<&str> = BTreeSet::new();
        for &alloc in live_allocs {
            existing.insert(&alloc.name);
            let tuple = |rule: NodeRule, group: Option<&TaskGroup>, alloc: Allocation| AllocTuple {
                name: alloc.name.clone(),
                task_group: group.map(|g| g.name.clone()),
                node_id: node_id.to_string(),
                alloc: Some(alloc),
                canary: false,
                rule,
            };

            let Some(&group) = required.get(alloc.name.as_str()) else {
                diff.push(tuple(NodeRule::NotRequired, None, alloc.clone()));
                continue;
            };
            let rule = self.classify_live(node_id, eligible, alloc);
            let entry = match rule {
                NodeRule::Reconnected if rules.persist_reconnect_state => {
                    // Record the status the client reported so later evals
                    // know the alloc already reconnected.
                    let mut copy = alloc.clone();
                    let status = copy.client_status.as_str().to_string();
                    copy.append_client_status_state(&status, input.now);
                    tuple(rule, Some(group), copy)
                }
                NodeRule::NodeDisconnected => {
                    let mut copy = alloc.clone();
                    copy.client_status = ClientStatus::Unknown;
                    copy.append_client_status_state(ClientStatus::Unknown.as_str(), input.now);
                    copy.client_description = STATUS_ALLOC_UNKNOWN.to_string();
                    tuple(rule, Some(group), copy)
                }
                NodeRule::JobChanged => {
                    let mut entry = tuple(rule, Some(group), alloc.clone());
                    entry.canary = rules.system_deployments && self.is_canary_update(group);
                    entry
                }
                _ => tuple(rule, Some(group), alloc.clone()),
            };
            diff.push(entry);
        }

        for (name, &group) in required {
            let existing_state = self
                .current
                .as_ref()
                .and_then(|d| d.task_groups.get(&group.name))
                .cloned();
            let has_existing_state = existing_state.is_some();

            if !existing.contains(name.as_str()) {
                self.diff_missing(node_id, eligible, name, group, &mut diff);
            }

            let place_ready = !deployment_paused && !deployment_failed;
            let Some(update) = group.update_strategy() else {
                continue;
            };
            if !rules.system_deployments || has_existing_state || !place_ready {
                continue;
            }
            let state = DeploymentState {
                auto_revert: update.auto_revert,
                auto_promote: update.auto_promote,
                progress_deadline: update.progress_deadline,
                ..DeploymentState::default()
            };
            // An update block with max_parallel 0 is empty, so a non-empty
            // one always allows a deployment here.
            self.create_deployment(node_id, group, state, diff.update.len(), live_allocs);
        }
        diff
    }

    /// The first rule that matches a live alloc whose name is required.
    fn classify_live(
        &mut self,
        node_id: &str,
        eligible: &BTreeMap<&str, &Node>,
        alloc: &Allocation,
    ) -> NodeRule {
        let input = self.input;
        let job = input.job;
        let (reconnect, expired) = input.reconnect_and_expired(alloc);
        let disconnect_rules = input.disconnect_rules_apply(alloc);

        if alloc.desired_transition.should_migrate() {
            return NodeRule::MigrateTransition;
        }
        if expired {
            return NodeRule::Expired;
        }
        if disconnect_rules
            && alloc.client_status == ClientStatus::Unknown
            && alloc.desired_status == DesiredStatus::Run
        {
            return NodeRule::UnknownAwaitingReconnect;
        }
        let tainted = input.tainted_nodes.get(&alloc.node_id);
        if tainted.is_none() && reconnect {
            return NodeRule::Reconnected;
        }
        let ignore = |run: &mut Self, rule: NodeRule| {
            // Nomad notes every ignore through this path (not the unknown
            // one above, nor terminal sysbatch allocs).
            run.has_same_version_allocs = true;
            rule
        };
        if let Some(node) = tainted {
            let sysbatch = alloc
                .job
                .as_ref()
                .is_some_and(|j| j.job_type == JobType::SysBatch);
            if sysbatch && alloc.ran_successfully() {
                return ignore(self, NodeRule::SysbatchFinishedOnTaintedNode);
            }
            return match node {
                Some(node)
                    if disconnect_rules
                        && node.status == NodeStatus::Disconnected
                        && alloc.client_status == ClientStatus::Running =>
                {
                    NodeRule::NodeDisconnected
                }
                None => NodeRule::NodeGone,
                Some(node) if node.terminal_status() => NodeRule::NodeDown,
                Some(_) => ignore(self, NodeRule::TaintedNodeNotDown),
            };
        }
        let job_changed = job.job_modify_index != alloc.job_modify_index();
        if input.not_ready_nodes.contains(node_id) {
            if input.rules.stop_outdated_on_not_ready_node && job_changed {
                return NodeRule::NotReadyNodeJobChanged;
            }
            return ignore(self, NodeRule::NotReadyNode);
        }
        if !eligible.contains_key(node_id) {
            return NodeRule::NodeNotTargeted;
        }
        if job_changed {
            return NodeRule::JobChanged;
        }
        ignore(self, NodeRule::UpToDate)
    }

    /// Whether an update of `group` is a canary: the group wants canaries
    /// and the current deployment (or a fresh one) has not promoted them.
    fn is_canary_update(&self, group: &TaskGroup) -> bool {
        let wants_canaries = group.update_strategy().is_some_and(|u| u.canary > 0);
        let promoted = match &self.current {
            // No deployment: a fresh state, not promoted.
            None => false,
            // A deployment without this group has no state to consult, and
            // Nomad then does not mark the update a canary.
            Some(d) => d.task_groups.get(&group.name).is_none_or(|s| s.promoted),
        };
        wants_canaries && !promoted
    }

    /// A required name without a live alloc on the node.
    fn diff_missing(
        &mut self,
        node_id: &str,
        eligible: &BTreeMap<&str, &Node>,
        name: &str,
        group: &TaskGroup,
        diff: &mut NodeDiff,
    ) {
        let input = self.input;
        let job = input.job;
        let entry = |rule: NodeRule, alloc: Option<Allocation>| AllocTuple {
            name: name.to_string(),
            task_group: Some(group.name.clone()),
            node_id: node_id.to_string(),
            alloc,
            canary: false,
            rule,
        };
        let terminal = input.terminal_allocs.get(node_id, name);
        if job.job_type == JobType::SysBatch
            && let Some(done) = terminal
        {
            // A sysbatch alloc that finished runs again only for a new job version.
            let rule = if job.job_modify_index != done.job_modify_index() {
                NodeRule::TerminalSysbatchJobChanged
            } else {
                NodeRule::TerminalSysbatchDone
            };
            diff.push(entry(rule, Some(done.clone())));
            return;
        }
        // Tainted and not eligible nodes get no placement, and it is not
        // counted as ignored either.
        if input.tainted_nodes.contains_key(node_id) || !eligible.contains_key(node_id) {
            return;
        }
        let previous = terminal.filter(|a| a.node_id == node_id).cloned();
        diff.push(entry(NodeRule::Missing, previous));
    }

    /// Cancels or retires a deployment that is no longer needed
    /// (`cancelUnnededSystemDeployments`); runs once per node visited.
    fn cancel_unneeded_deployments(&mut self) {
        let job = self.input.job;
        if job.stopped() {
            if let Some(current) = self.current.as_ref().filter(|d| d.active()) {
                let deployment_id = current.id.clone();
                self.result.deployment_updates.push(DeploymentStatusUpdate {
                    deployment_id: deployment_id.clone(),
                    status: DeploymentStatus::Cancelled,
                    status_description: description::STOPPED_JOB.to_string(),
                });
                self.result
                    .deployment_notes
                    .push(DeploymentNote::CancelledJobStopped { deployment_id });
            }
            return;
        }
        let Some(current) = &self.current else {
            return;
        };
        let other_job =
            current.job_create_index != job.create_index || current.job_version != job.version;
        if other_job && current.active() {
            let deployment_id = current.id.clone();
            self.result.deployment_updates.push(DeploymentStatusUpdate {
                deployment_id: deployment_id.clone(),
                status: DeploymentStatus::Cancelled,
                status_description: description::NEWER_JOB.to_string(),
            });
            self.result
                .deployment_notes
                .push(DeploymentNote::CancelledNewerJob { deployment_id });
            self.old = self.current.take();
            return;
        }
        if current.status == DeploymentStatus::Successful {
            let deployment_id = current.id.clone();
            self.result
                .deployment_notes
                .push(DeploymentNote::RetiredSuccessful { deployment_id });
            self.old = self.current.take();
        }
    }

    /// Creates the deployment for a group, or adds the group to the one a
    /// previous group made (`createDeployment`).
    fn create_deployment(
        &mut self,
        node_id: &str,
        group: &TaskGroup,
        state: DeploymentState,
        updates: usize,
        live_allocs: &[&Allocation],
    ) {
        let input = self.input;
        let job = input.job;
        let note_node = node_id.to_string();
        if self
            .old
            .as_ref()
            .is_some_and(|old| old.job_version == job.version)
        {
            self.result
                .deployment_notes
                .push(DeploymentNote::SkippedOldDeploymentSameVersion {
                    node_id: note_node,
                    task_group: group.name.clone(),
                });
            return;
        }
        let this_version = |alloc: &Allocation| {
            alloc.job.as_ref().is_some_and(|j| {
                j.id == job.id && j.version == job.version && j.create_index == job.create_index
            })
        };
        let mut had_running = false;
        if live_allocs.iter().any(|a| this_version(a)) {
            self.has_same_version_allocs = true;
            had_running = true;
        }
        // A terminal alloc of this version means a reschedule, not a rollout.
        if input.terminal_allocs.on_node(node_id).any(this_version) {
            had_running = true;
        }
        if had_running && updates == 0 {
            self.result
                .deployment_notes
                .push(DeploymentNote::SkippedAlreadyRunning {
                    node_id: note_node,
                    task_group: group.name.clone(),
                });
            return;
        }

        let current = match self.current.take() {
            Some(current) => {
                self.result
                    .deployment_notes
                    .push(DeploymentNote::GroupAdded {
                        deployment_id: current.id.clone(),
                        node_id: note_node,
                        task_group: group.name.clone(),
                    });
                current
            }
            None => {
                let deployment = new_deployment(job, (self.new_id)(), input.now);
                self.created = true;
                self.result.deployment_updates.push(DeploymentStatusUpdate {
                    deployment_id: deployment.id.clone(),
                    status: DeploymentStatus::Running,
                    status_description: description::RUNNING.to_string(),
                });
                self.result.deployment_notes.push(DeploymentNote::Created {
                    deployment_id: deployment.id.clone(),
                    node_id: note_node,
                    task_group: group.name.clone(),
                });
                deployment
            }
        };
        let mut current = current;
        current.task_groups.insert(group.name.clone(), state);
        self.current = Some(current);
    }
}

/// The client description of an alloc marked unknown
/// (`sstructs.StatusAllocUnknown`).
pub const STATUS_ALLOC_UNKNOWN: &str = "alloc is unknown since its node is disconnected";

/// A new running deployment for `job` (Nomad's `structs.NewDeployment`, with
/// the job's priority as the eval priority, as the node reconciler passes).
pub fn new_deployment(job: &Job, id: String, now: Time) -> Deployment {
    Deployment {
        id,
        namespace: job.namespace.clone(),
        job_id: job.id.clone(),
        job_version: job.version,
        job_modify_index: job.modify_index,
        job_spec_modify_index: job.job_modify_index,
        job_create_index: job.create_index,
        is_multiregion: false,
        task_groups: BTreeMap::new(),
        status: DeploymentStatus::Running,
        status_description: description::RUNNING.to_string(),
        eval_priority: job.priority,
        create_time: now,
        // Go's int64 zero, not the zero time.
        modify_time: Time::UNIX_EPOCH,
        ..Deployment::default()
    }
}
