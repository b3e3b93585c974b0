//! Version switches of the node reconciler: the rules of
//! `scheduler/reconciler/reconcile_node.go` (and of its ancestors
//! `scheduler/util.go: diffSystemAllocsForNode` ≤ 1.5 and
//! `scheduler/system_util.go` 1.6–1.10) that changed between Nomad releases.
//!
//! `NodeRules::default()` is Nomad at HEAD (aa026cc99c), which the `node--*`
//! conformance fixtures test. Each field names the change that brought
//! today's behaviour; the constants give whole releases.

use serde::{Deserialize, Serialize};

/// How the node reconciler tells that an alloc came back from a disconnect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeReconnectMarker {
    /// ≤ 1.4.2: any `Reconnected` task event (client-made and sticky); the
    /// expiry check then runs on every alloc, not only reconnecting ones.
    TaskEvent,
    /// ≥ 1.4.3 (PR #15068): the latest `ClientStatus` alloc state is
    /// `unknown` (`NeedsToReconnect`), and only such allocs can be expired.
    AllocState,
}

/// The node reconciler's rules that changed between Nomad versions.
/// `Default` = HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeRules {
    /// Before 1.11.2 / 2.0.0 (PR #27265) the disconnect rules (expired → lost,
    /// unknown → ignore, reconnecting, disconnecting) applied only to allocs
    /// whose group sets lost_after (or, ≤ 1.9, `max_client_disconnect`):
    /// `SupportsDisconnectedClients`. Without it a running alloc on a
    /// disconnected node was simply ignored. HEAD: false (no gate).
    pub require_group_lost_after: bool,
    /// Read the legacy group fields `max_client_disconnect` and friends
    /// (≤ 1.9); ignored from 1.10.0 (PR #25284). HEAD: false.
    pub honour_legacy_disconnect_fields: bool,
    /// The reconnect marker: task event (≤ 1.4.2) or alloc state (≥ 1.4.3).
    pub reconnect_marker: NodeReconnectMarker,
    /// Reconnecting allocs come back as copies with an alloc state recording
    /// their current client status, which the system scheduler persists
    /// through its in-place update path (≥ 1.4.3, PR #15068). Off: the alloc
    /// is returned unchanged and nothing records the reconnect.
    pub persist_reconnect_state: bool,
    /// `LastUnknown` is the start of the latest unbroken run of `unknown`
    /// alloc states (PR #27053, 1.11.2 / 2.0.0); off: the latest `unknown`.
    pub last_unknown_from_run_start: bool,
    /// `NeedsToReconnect` skips alloc states with an empty value (PR #28445,
    /// after 2.0.5).
    pub needs_to_reconnect_skips_empty: bool,
    /// An alloc on a node that is not ready (draining, ineligible) is stopped
    /// when the job changed, instead of always ignored (1.11.0, "system
    /// scheduler: stop ineligible allocs if job modified").
    pub stop_outdated_on_not_ready_node: bool,
    /// System and sysbatch jobs get deployments: the reconciler cancels
    /// unneeded ones, creates new ones and marks canary updates (1.11.0,
    /// PR #26318 and follow-ups). Off: no deployment is read or written.
    pub system_deployments: bool,
    /// A new deployment is dropped when a ready node runs a Nomad older than
    /// 1.11.0 (its `nomad.version` attribute), since such clients never
    /// report deployment health (1.11.3 / 2.0.0, PR #27605).
    pub old_nodes_block_new_deployment: bool,
}

impl Default for NodeRules {
    fn default() -> Self {
        NodeRules::HEAD
    }
}

impl NodeRules {
    /// Nomad at HEAD (aa026cc99c).
    pub const HEAD: NodeRules = NodeRules {
        require_group_lost_after: false,
        honour_legacy_disconnect_fields: false,
        reconnect_marker: NodeReconnectMarker::AllocState,
        persist_reconnect_state: true,
        last_unknown_from_run_start: true,
        needs_to_reconnect_skips_empty: true,
        stop_outdated_on_not_ready_node: true,
        system_deployments: true,
        old_nodes_block_new_deployment: true,
    };

    /// Nomad 1.11.3 and 2.0.0 – 2.0.5: HEAD without PR #28445.
    pub const V2_0_0: NodeRules = NodeRules {
        needs_to_reconnect_skips_empty: false,
        ..NodeRules::HEAD
    };

    /// Nomad 1.11.2: the lost_after gate and the older `LastUnknown` are gone
    /// (backports of PRs #27265 and #27053), old nodes do not yet block a
    /// new deployment (PR #27605 shipped in 1.11.3).
    pub const V1_11_2: NodeRules = NodeRules {
        old_nodes_block_new_deployment: false,
        ..NodeRules::V2_0_0
    };

    /// Nomad 1.11.0 – 1.11.1: system deployments, the lost_after gate still
    /// in place, the older `LastUnknown`.
    pub const V1_11_0: NodeRules = NodeRules {
        require_group_lost_after: true,
        last_unknown_from_run_start: false,
        ..NodeRules::V1_11_2
    };

    /// Nomad 1.10.x: no system deployments, allocs on not-ready nodes always
    /// ignored, legacy disconnect fields ignored.
    pub const V1_10_0: NodeRules = NodeRules {
        stop_outdated_on_not_ready_node: false,
        system_deployments: false,
        ..NodeRules::V1_11_0
    };

    /// Nomad 1.4.3 – 1.9: as 1.10 but the legacy `max_client_disconnect`
    /// still counts as lost_after.
    pub const V1_4_3: NodeRules = NodeRules {
        honour_legacy_disconnect_fields: true,
        ..NodeRules::V1_10_0
    };

    /// Nomad 1.3.0 – 1.4.2: the task-event reconnect marker, nothing persisted.
    pub const V1_4_2: NodeRules = NodeRules {
        reconnect_marker: NodeReconnectMarker::TaskEvent,
        persist_reconnect_state: false,
        ..NodeRules::V1_4_3
    };
}
