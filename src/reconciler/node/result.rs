//! What the node reconciler returns: per node, the eight diff sets of
//! Nomad's `NodeReconcileResult` (`scheduler/reconciler/reconcile_node.go`),
//! each entry tagged with the rule that put it there, plus the deployment
//! decisions.

use crate::model::{Allocation, Deployment, DeploymentStatusUpdate};
use crate::reconciler::reasons::AllocCategory;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The eight sets an entry of the node diff can fall in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeSet {
    /// A required alloc is missing on an eligible node: place it.
    Place,
    /// The job changed: update the alloc (in place or destructively).
    Update,
    /// The alloc is marked to migrate (drain): stop it and place elsewhere.
    Migrate,
    /// The alloc is not wanted: stop it.
    Stop,
    /// Nothing to do.
    Ignore,
    /// The node is gone, down, or the alloc stayed unknown past lost_after:
    /// stop it with client status `lost`.
    Lost,
    /// The node just disconnected: mark the running alloc `unknown`.
    Disconnecting,
    /// The node came back: record that the alloc reconnected.
    Reconnecting,
}

impl NodeSet {
    /// All sets, in the order of Nomad's `NodeReconcileResult` fields.
    pub const ALL: [NodeSet; 8] = [
        NodeSet::Place,
        NodeSet::Update,
        NodeSet::Migrate,
        NodeSet::Stop,
        NodeSet::Ignore,
        NodeSet::Lost,
        NodeSet::Disconnecting,
        NodeSet::Reconnecting,
    ];

    /// Nomad's name for the set.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeSet::Place => "place",
            NodeSet::Update => "update",
            NodeSet::Migrate => "migrate",
            NodeSet::Stop => "stop",
            NodeSet::Ignore => "ignore",
            NodeSet::Lost => "lost",
            NodeSet::Disconnecting => "disconnecting",
            NodeSet::Reconnecting => "reconnecting",
        }
    }
}

/// The rule that put an entry in its set, in the order the node reconciler
/// tries them (first match wins). The first fifteen are for live allocs on
/// the node, the last three for required names without a live alloc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeRule {
    /// Stop: the name is not required (job stopped, group removed, count lowered).
    NotRequired,
    /// Migrate: the alloc carries the `Migrate` desired transition.
    MigrateTransition,
    /// Lost: the alloc is `unknown` and lost_after has passed.
    Expired,
    /// Ignore: the alloc is `unknown` and wanted; it waits for its client.
    UnknownAwaitingReconnect,
    /// Reconnecting: the alloc still needs to reconnect and its node is no
    /// longer tainted.
    Reconnected,
    /// Ignore: a sysbatch alloc that finished successfully on a tainted node.
    SysbatchFinishedOnTaintedNode,
    /// Disconnecting: a running alloc on a disconnected node.
    NodeDisconnected,
    /// Lost: the node was garbage-collected.
    NodeGone,
    /// Lost: the node is down.
    NodeDown,
    /// Ignore: the node is tainted but not down (draining, or disconnected
    /// with an alloc that is not running).
    TaintedNodeNotDown,
    /// Stop: the node is not ready (draining, ineligible) and the job changed.
    NotReadyNodeJobChanged,
    /// Ignore: the node is not ready and the job did not change.
    NotReadyNode,
    /// Stop: the node is no longer among the job's ready nodes.
    NodeNotTargeted,
    /// Update: the job changed (`JobModifyIndex` differs).
    JobChanged,
    /// Ignore: everything is up to date.
    UpToDate,
    /// Update: a sysbatch alloc finished under an older job version, so it
    /// runs again.
    TerminalSysbatchJobChanged,
    /// Ignore: a sysbatch alloc finished under the current job version.
    TerminalSysbatchDone,
    /// Place: no alloc of this name on an eligible, untainted node.
    Missing,
}

impl NodeRule {
    /// The set this rule puts an entry in.
    pub fn set(self) -> NodeSet {
        match self {
            NodeRule::NotRequired
            | NodeRule::NotReadyNodeJobChanged
            | NodeRule::NodeNotTargeted => NodeSet::Stop,
            NodeRule::MigrateTransition => NodeSet::Migrate,
            NodeRule::Expired | NodeRule::NodeGone | NodeRule::NodeDown => NodeSet::Lost,
            NodeRule::UnknownAwaitingReconnect
            | NodeRule::SysbatchFinishedOnTaintedNode
            | NodeRule::TaintedNodeNotDown
            | NodeRule::NotReadyNode
            | NodeRule::UpToDate
            | NodeRule::TerminalSysbatchDone => NodeSet::Ignore,
            NodeRule::Reconnected => NodeSet::Reconnecting,
            NodeRule::NodeDisconnected => NodeSet::Disconnecting,
            NodeRule::JobChanged | NodeRule::TerminalSysbatchJobChanged => NodeSet::Update,
            NodeRule::Missing => NodeSet::Place,
        }
    }

    /// The set of Nomad's alloc classification (`filterByTainted` in the
    /// cluster reconciler) this rule corresponds to; `None` for a placement
    /// of a missing name, which has no alloc. Rules checked before the node
    /// is looked at (not required) count as filtered; terminal sysbatch
    /// allocs and allocs on working nodes as untainted.
    pub fn category(self) -> Option<AllocCategory> {
        Some(match self {
            NodeRule::NotRequired => AllocCategory::Filtered,
            NodeRule::MigrateTransition => AllocCategory::Migrate,
            NodeRule::Expired => AllocCategory::Expiring,
            NodeRule::UnknownAwaitingReconnect
            | NodeRule::SysbatchFinishedOnTaintedNode
            | NodeRule::TaintedNodeNotDown => AllocCategory::Ignore,
            NodeRule::Reconnected => AllocCategory::Reconnecting,
            NodeRule::NodeDisconnected => AllocCategory::Disconnecting,
            NodeRule::NodeGone | NodeRule::NodeDown => AllocCategory::Lost,
            NodeRule::NotReadyNodeJobChanged
            | NodeRule::NotReadyNode
            | NodeRule::NodeNotTargeted
            | NodeRule::JobChanged
            | NodeRule::UpToDate
            | NodeRule::TerminalSysbatchJobChanged
            | NodeRule::TerminalSysbatchDone => AllocCategory::Untainted,
            NodeRule::Missing => return None,
        })
    }

    /// A short human description, for "why was this allocation stopped?".
    pub fn describe(self) -> &'static str {
        match self {
            NodeRule::NotRequired => "not required (job stopped, group removed or count lowered)",
            NodeRule::MigrateTransition => "marked to migrate",
            NodeRule::Expired => "unknown for longer than lost_after",
            NodeRule::UnknownAwaitingReconnect => "unknown, waiting for its client",
            NodeRule::Reconnected => "node back, alloc reconnecting",
            NodeRule::SysbatchFinishedOnTaintedNode => "sysbatch finished on a tainted node",
            NodeRule::NodeDisconnected => "node disconnected, mark unknown",
            NodeRule::NodeGone => "node garbage-collected",
            NodeRule::NodeDown => "node down",
            NodeRule::TaintedNodeNotDown => "node tainted but not down",
            NodeRule::NotReadyNodeJobChanged => "node not ready and job changed",
            NodeRule::NotReadyNode => "node not ready",
            NodeRule::NodeNotTargeted => "node no longer targeted",
            NodeRule::JobChanged => "job changed",
            NodeRule::UpToDate => "up to date",
            NodeRule::TerminalSysbatchJobChanged => "sysbatch finished under an older job",
            NodeRule::TerminalSysbatchDone => "sysbatch already finished",
            NodeRule::Missing => "missing on an eligible node",
        }
    }
}

/// One entry of the node diff (Nomad's `AllocTuple`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocTuple {
    /// The alloc name, `<job Name>.<group>[<index>]`.
    pub name: String,
    /// The required group of this name; `None` when the name is not required.
    pub task_group: Option<String>,
    /// The node the entry is about.
    pub node_id: String,
    /// The alloc. For `disconnecting` and (with
    /// [`NodeRules::persist_reconnect_state`]) `reconnecting` it is the
    /// updated copy the scheduler should write. For `place` it is the
    /// terminal alloc of the same name on this node, if any (the new alloc's
    /// previous one), else `None`.
    pub alloc: Option<Allocation>,
    /// A canary update (the group has canaries and the deployment is not promoted).
    pub canary: bool,
    /// The rule that put the entry in its set.
    pub rule: NodeRule,
}

impl AllocTuple {
    /// The set this entry is in.
    pub fn set(&self) -> NodeSet {
        self.rule.set()
    }
    /// The alloc's ID, if the entry has an alloc.
    pub fn alloc_id(&self) -> Option<&str> {
        self.alloc.as_ref().map(|a| a.id.as_str())
    }

    /// What was decided for the entry, e.g. `stop`, `stop as lost`,
    /// `mark unknown`, `update (canary)`, `place (replacing a1)`.
    pub fn decision(&self) -> String {
        let text = match self.set() {
            NodeSet::Place => "place",
            NodeSet::Update => "update",
            NodeSet::Migrate => "migrate",
            NodeSet::Stop => "stop",
            NodeSet::Ignore => "ignore",
            NodeSet::Lost => "stop as lost",
            NodeSet::Disconnecting => "mark unknown",
            NodeSet::Reconnecting => "reconnect",
        };
        match (self.set(), self.alloc_id()) {
            (NodeSet::Place, Some(previous)) => format!("{text} (replacing {previous})"),
            _ if self.canary => format!("{text} (canary)"),
            _ => text.to_string(),
        }
    }

    /// One line for logs and the UI, e.g.
    /// `stop my-job.web[0] (a1) on n1: node no longer targeted`.
    pub fn describe(&self) -> String {
        let alloc = match (self.set(), self.alloc_id()) {
            (NodeSet::Place, Some(previous)) => format!(" (replacing {previous})"),
            (NodeSet::Place, None) => String::new(),
            (_, Some(id)) => format!(" ({id})"),
            (_, None) => String::new(),
        };
        let canary = if self.canary { ", canary" } else { "" };
        format!(
            "{} {}{alloc} on {}: {}{canary}",
            self.set().as_str(),
            self.name,
            self.node_id,
            self.rule.describe()
        )
    }
}

/// The diff of one node (or, from [`NodeReconcileResult::flatten`], of all
/// nodes): Nomad's `NodeReconcileResult` sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeDiff {
    /// Allocs to place.
    pub place: Vec<AllocTuple>,
    /// Allocs to update.
    pub update: Vec<AllocTuple>,
    /// Allocs to migrate.
    pub migrate: Vec<AllocTuple>,
    /// Allocs to stop.
    pub stop: Vec<AllocTuple>,
    /// Allocs left alone.
    pub ignore: Vec<AllocTuple>,
    /// Allocs to stop as lost.
    pub lost: Vec<AllocTuple>,
    /// Allocs to mark unknown.
    pub disconnecting: Vec<AllocTuple>,
    /// Allocs that reconnected.
    pub reconnecting: Vec<AllocTuple>,
}

impl NodeDiff {
    /// Adds an entry to the set its rule names.
    pub fn push(&mut self, tuple: AllocTuple) {
        self.set_mut(tuple.set()).push(tuple);
    }

    /// The entries of one set.
    pub fn set(&self, set: NodeSet) -> &[AllocTuple] {
        match set {
            NodeSet::Place => &self.place,
            NodeSet::Update => &self.update,
            NodeSet::Migrate => &self.migrate,
            NodeSet::Stop => &self.stop,
            NodeSet::Ignore => &self.ignore,
            NodeSet::Lost => &self.lost,
            NodeSet::Disconnecting => &self.disconnecting,
            NodeSet::Reconnecting => &self.reconnecting,
        }
    }

    fn set_mut(&mut self, set: NodeSet) -> &mut Vec<AllocTuple> {
        match set {
            NodeSet::Place => &mut self.place,
            NodeSet::Update => &mut self.update,
            NodeSet::Migrate => &mut self.migrate,
            NodeSet::Stop => &mut self.stop,
            NodeSet::Ignore => &mut self.ignore,
            NodeSet::Lost => &mut self.lost,
            NodeSet::Disconnecting => &mut self.disconnecting,
            NodeSet::Reconnecting => &mut self.reconnecting,
        }
    }

    /// Appends every set of `other` (Nomad's `Append`).
    pub fn append(&mut self, other: &NodeDiff) {
        for set in NodeSet::ALL {
            self.set_mut(set).extend_from_slice(other.set(set));
        }
    }

    /// Whether every set is empty.
    pub fn is_empty(&self) -> bool {
        NodeSet::ALL.iter().all(|&set| self.set(set).is_empty())
    }

    /// Every entry, set by set.
    pub fn iter(&self) -> impl Iterator<Item = &AllocTuple> {
        NodeSet::ALL
            .into_iter()
            .flat_map(move |set| self.set(set).iter())
    }
}

/// Why a deployment was created, kept, changed or dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DeploymentNote {
    /// The job is stopped: the active deployment is cancelled (once per node visited).
    CancelledJobStopped {
        /// The deployment.
        deployment_id: String,
    },
    /// The deployment is for another job version or create index: cancelled
    /// and no longer current.
    CancelledNewerJob {
        /// The deployment.
        deployment_id: String,
    },
    /// The deployment already succeeded: it is no longer current.
    RetiredSuccessful {
        /// The deployment.
        deployment_id: String,
    },
    /// No deployment for this version: the cancelled one was for it.
    SkippedOldDeploymentSameVersion {
        /// The node being visited.
        node_id: String,
        /// The group.
        task_group: String,
    },
    /// No deployment: this version already ran on the node and the spec did
    /// not change (a reschedule, not a rollout).
    SkippedAlreadyRunning {
        /// The node being visited.
        node_id: String,
        /// The group.
        task_group: String,
    },
    /// A new deployment was created.
    Created {
        /// The new deployment.
        deployment_id: String,
        /// The node being visited.
        node_id: String,
        /// The group that asked for it.
        task_group: String,
    },
    /// A group's state was added to the current deployment.
    GroupAdded {
        /// The deployment.
        deployment_id: String,
        /// The node being visited.
        node_id: String,
        /// The group.
        task_group: String,
    },
    /// The new deployment was dropped: allocs of this version already exist
    /// (a legacy rolling update was in flight during the upgrade).
    DroppedSameVersionAllocs {
        /// The dropped deployment.
        deployment_id: String,
    },
    /// The new deployment was dropped: a ready node runs a Nomad older than
    /// 1.11.0 and would never report health.
    DroppedOldNode {
        /// The dropped deployment.
        deployment_id: String,
        /// The old node.
        node_id: String,
        /// Its `nomad.version`.
        version: String,
    },
}

/// The result of a node reconciler run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeReconcileResult {
    /// The diff of each node visited, by node ID.
    pub nodes: BTreeMap<String, NodeDiff>,
    /// The deployment current after the run (Nomad's `DeploymentCurrent`):
    /// the one passed in (possibly with groups added), a new one, or none.
    pub deployment_current: Option<Deployment>,
    /// Whether `deployment_current` was created by this run.
    pub deployment_created: bool,
    /// A deployment the run retired (cancelled for a newer job, or successful).
    pub deployment_old: Option<Deployment>,
    /// Deployment status updates, as Nomad's list stands (an entry may repeat,
    /// once per node visited, and an update may name a dropped deployment).
    pub deployment_updates: Vec<DeploymentStatusUpdate>,
    /// Why the deployment ended up as it did, in order.
    pub deployment_notes: Vec<DeploymentNote>,
}

impl NodeReconcileResult {
    /// All nodes' diffs appended in node-ID order.
    pub fn flatten(&self) -> NodeDiff {
        let mut all = NodeDiff::default();
        for diff in self.nodes.values() {
            all.append(diff);
        }
        all
    }

    /// The entries of one set over all nodes, in node-ID order.
    pub fn set(&self, set: NodeSet) -> impl Iterator<Item = &AllocTuple> {
        self.nodes
            .values()
            .flat_map(move |diff| diff.set(set).iter())
    }

    /// How many entries one set has over all nodes.
    pub fn count(&self, set: NodeSet) -> usize {
        self.nodes.values().map(|diff| diff.set(set).len()).sum()
    }

    /// Every entry about an existing alloc (live, or a terminal sysbatch
    /// alloc); placements, which only name their previous alloc, are left out.
    pub fn explain(&self, alloc_id: &str) -> Vec<&AllocTuple> {
        self.nodes
            .values()
            .flat_map(NodeDiff::iter)
            .filter(|tuple| tuple.set() != NodeSet::Place && tuple.alloc_id() == Some(alloc_id))
            .collect()
    }

    /// The deployment this run created, if it is still current.
    pub fn created_deployment(&self) -> Option<&Deployment> {
        self.deployment_current
            .as_ref()
            .filter(|_| self.deployment_created)
    }
}
