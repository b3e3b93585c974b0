//! Client nodes (Nomad's `structs.Node`), what the scheduler reads.

use super::enums::string_enum;
use super::time::{Duration, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

string_enum! {
    /// `Node.Status`.
    pub enum NodeStatus {
        /// Registered, not yet synced (≥ 1.5.0 also after a reconnect).
        Initializing = "initializing",
        /// Heartbeating.
        Ready = "ready",
        /// Missed its heartbeat TTL and no alloc may wait: terminal.
        Down = "down",
        /// Missed its heartbeat TTL while some alloc may wait for it.
        Disconnected = "disconnected",
    }
}

string_enum! {
    /// `Node.SchedulingEligibility`.
    pub enum SchedulingEligibility {
        /// May receive placements.
        Eligible = "eligible",
        /// May not receive placements (draining sets this).
        Ineligible = "ineligible",
    }
}

/// `structs.DrainStrategy`; present while the node drains.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct DrainStrategy {
    /// `Deadline`.
    pub deadline: Duration,
    /// `IgnoreSystemJobs`.
    pub ignore_system_jobs: bool,
    /// `ForceDeadline`.
    pub force_deadline: Time,
}

/// A client node (`structs.Node`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Node {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Name`.
    pub name: String,
    /// `Datacenter`.
    pub datacenter: String,
    /// `NodePool`.
    pub node_pool: String,
    /// `NodeClass`.
    pub node_class: String,
    /// `ComputedClass`.
    pub computed_class: String,
    /// `Status`.
    pub status: NodeStatus,
    /// `SchedulingEligibility`.
    pub scheduling_eligibility: SchedulingEligibility,
    /// `DrainStrategy`; `Some` while draining.
    pub drain_strategy: Option<DrainStrategy>,
    /// `Attributes` (e.g. `nomad.version`).
    #[serde(deserialize_with = "super::null_as_default")]
    pub attributes: BTreeMap<String, String>,
    /// `CreateIndex`.
    pub create_index: u64,
    /// `ModifyIndex`.
    pub modify_index: u64,
}

impl Node {
    /// Whether the node is draining.
    pub fn draining(&self) -> bool {
        self.drain_strategy.is_some()
    }
    /// Go's `Node.Ready()`: ready, not draining, eligible.
    pub fn ready(&self) -> bool {
        self.status == NodeStatus::Ready
            && !self.draining()
            && self.scheduling_eligibility != SchedulingEligibility::Ineligible
    }
    /// Go's `TerminalStatus()`: down.
    pub fn terminal_status(&self) -> bool {
        self.status == NodeStatus::Down
    }
    /// Go's `UnresponsiveStatus()` (≥ 1.5.0): down or disconnected.
    pub fn unresponsive_status(&self) -> bool {
        matches!(self.status, NodeStatus::Down | NodeStatus::Disconnected)
    }
}
