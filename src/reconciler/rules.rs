//! Version switches: the reconciler rules that changed between Nomad
//! versions, as data the caller passes in.
//!
//! `ReconcilerRules::default()` is Nomad at HEAD (aa026cc99c), which is what
//! the conformance fixtures test. The simulator's version profiles set the
//! fields for older releases (see `docs/nomad-semantics.md` §5). Each field
//! names the Nomad change that introduced today's behaviour.

use serde::{Deserialize, Serialize};

/// Where an `unknown` alloc that needs to reconnect goes when its node is not
/// tainted (or is tainted but `ready`): the client has not synced yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownOnUntaintedNode {
    /// ≤ 1.6: ignored (not counted toward the group's count). In those
    /// versions every `unknown` alloc that should run and has not expired
    /// is ignored, whatever its reconnect marker says and whatever its
    /// node's status (disconnected, down, gone or back), unless a tainted
    /// but `ready` node already marks it as reconnecting (#12680).
    Ignore,
    /// 1.7.0 – 1.11.1 (PR #18701): untainted (counted, no picker).
    Untainted,
    /// ≥ 1.11.2 / 2.0.0 (PR #27053, which dropped the "unknown and desired
    /// run → untainted" rule; kept by the rule-table refactor PR #27584):
    /// reconnecting, so the picker runs against the still-unknown original.
    Reconnecting,
}

/// How the reconciler tells that an alloc came back from a disconnect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReconnectMarker {
    /// ≤ 1.4.2: a `Reconnected` task event the client appends; it is sticky
    /// (it stays in the task's event list), and nothing is persisted.
    TaskEvent,
    /// ≥ 1.4.3 (PR #15068): the latest `ClientStatus` alloc state is
    /// `unknown` (`NeedsToReconnect`); the reconnect is persisted by
    /// appending an alloc state through `ReconnectUpdates`.
    AllocState,
}

/// Where the reconciler weighs a reconnecting alloc against its replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReconnectReconciliation {
    /// ≤ 1.5.3 (1.4.0–1.4.8, 1.3.x before 1.3.14): reconnecting allocs stay
    /// out of the untainted set; only when the group is over its count does
    /// the over-count stop compare each with the untainted allocs of the
    /// same name (newer job or strictly higher node score wins, both scores
    /// needed). Reconnecting allocs never reach the update path (#14925).
    InComputeStop,
    /// ≥ 1.5.4 (PR #16609): reconnecting allocs are reconciled first against
    /// their replacements and then join the untainted set.
    First,
}

/// When a running alloc on a disconnected node gets its replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisconnectingReplacement {
    /// ≤ 1.6: at once, whatever the reschedule policy says.
    Immediate,
    /// ≥ 1.7.0 (PR #18701; for `replace = true` blocks since PR #27053):
    /// following the group's reschedule policy (a delay makes a follow-up eval).
    ReschedulePolicy,
    /// 1.8.0 – 1.11.1 (PR #19886 until PR #27053, `RescheduleTimeOnDisconnect`):
    /// at once when the group has a `disconnect` block (whose `replace` the
    /// API always sets, true by default); by the reschedule policy without one.
    ImmediateWithBlock,
}

/// How the reconnecting picker finds the replacements of a reconnecting
/// alloc (only when reconnecting allocs are reconciled first, ≥ 1.5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplacementLookup {
    /// PR #16609 (1.5.4 – 1.6.2, 1.4.9 – 1.4.13, 1.3.14 and later): every
    /// other alloc of the group with the same name and a higher
    /// `CreateIndex`, whatever its lineage.
    SameNameNewer,
    /// PR #18701 (1.7.0 – 1.9.0; backported to 1.6.3, 1.5.10, 1.4.14): only
    /// the alloc the original's `NextAllocation` names.
    NextAllocation,
    /// PR #24165 (≥ 1.9.1): the whole `NextAllocation` chain, so a
    /// replacement that failed and was replaced again is followed.
    NextAllocationChain,
}

/// What happens to an `unknown` alloc whose lost_after has expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpiredAllocs {
    /// HEAD (PR #27053, 1.11.2 / 2.0.0): always lost, and replaced.
    AlwaysLost,
    /// ≤ 1.11.1: kept as untainted when the group says `replace = false`.
    KeptWhenNoReplace,
}

/// The rules that changed between Nomad versions. `Default` = HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReconcilerRules {
    /// Unknown alloc on a node that is not tainted: ignore (≤ 1.6),
    /// untainted (1.7–1.11.1, PR #18701), reconnecting (≥ 1.11.2, PR #27053).
    pub unknown_on_untainted_node: UnknownOnUntaintedNode,
    /// Reconnect marker: task event (≤ 1.4.2) or alloc state (≥ 1.4.3, PR #15068).
    pub reconnect_marker: ReconnectMarker,
    /// Whether reconnected allocs are persisted as `ReconnectUpdates`
    /// (≥ 1.4.3, PR #15068). Off: they join untainted silently.
    pub emit_reconnect_updates: bool,
    /// Replacement of disconnecting allocs: immediate (≤ 1.6), by the
    /// reschedule policy (1.7, PR #18701; ≥ 1.11.2, PR #27053), or at once
    /// when the group has a `disconnect` block (1.8.0 – 1.11.1).
    pub disconnecting_replacement: DisconnectingReplacement,
    /// Honour the legacy group fields `max_client_disconnect`,
    /// `stop_after_client_disconnect` and `prevent_reschedule_on_lost`
    /// (≤ 1.9); ignored from 1.10.0 (PR #25284).
    pub honour_legacy_disconnect_fields: bool,
    /// Expired unknown allocs: always lost (HEAD, PR #27053) or kept when
    /// `replace = false` (≤ 1.11.1).
    pub expired_allocs: ExpiredAllocs,
    /// `LastUnknown` is the start of the latest run of `unknown` states
    /// (PR #27053); off: the latest `unknown` state.
    pub last_unknown_from_run_start: bool,
    /// `NeedsToReconnect` skips alloc states with an empty value, and
    /// `ForceReschedule` applies only to client-terminal allocs (PR #28445).
    pub pr_28445: bool,
    /// Reconnecting allocs: inside the over-count stop (≤ 1.5.3) or first
    /// (≥ 1.5.4, PR #16609).
    pub reconnect_reconciliation: ReconnectReconciliation,
    /// How the reconnecting picker finds replacements: same name and newer
    /// (PR #16609), `NextAllocation` (PR #18701), the chain (PR #24165).
    pub replacement_lookup: ReplacementLookup,
}

impl Default for ReconcilerRules {
    fn default() -> Self {
        ReconcilerRules::HEAD
    }
}

impl ReconcilerRules {
    /// Nomad at HEAD (aa026cc99c).
    pub const HEAD: ReconcilerRules = ReconcilerRules {
        unknown_on_untainted_node: UnknownOnUntaintedNode::Reconnecting,
        reconnect_marker: ReconnectMarker::AllocState,
        emit_reconnect_updates: true,
        disconnecting_replacement: DisconnectingReplacement::ReschedulePolicy,
        honour_legacy_disconnect_fields: false,
        expired_allocs: ExpiredAllocs::AlwaysLost,
        last_unknown_from_run_start: true,
        pr_28445: true,
        reconnect_reconciliation: ReconnectReconciliation::First,
        replacement_lookup: ReplacementLookup::NextAllocationChain,
    };

    /// Nomad 1.4.2, the last release with the task-event reconnect marker.
    pub const V1_4_2: ReconcilerRules = ReconcilerRules {
        unknown_on_untainted_node: UnknownOnUntaintedNode::Ignore,
        reconnect_marker: ReconnectMarker::TaskEvent,
        emit_reconnect_updates: false,
        disconnecting_replacement: DisconnectingReplacement::Immediate,
        honour_legacy_disconnect_fields: true,
        expired_allocs: ExpiredAllocs::KeptWhenNoReplace,
        last_unknown_from_run_start: false,
        pr_28445: false,
        reconnect_reconciliation: ReconnectReconciliation::InComputeStop,
        replacement_lookup: ReplacementLookup::SameNameNewer,
    };

    /// Nomad 1.4.3 – 1.5.3: alloc-state marker, persisted reconnects.
    pub const V1_4_3: ReconcilerRules = ReconcilerRules {
        reconnect_marker: ReconnectMarker::AllocState,
        emit_reconnect_updates: true,
        ..ReconcilerRules::V1_4_2
    };

    /// Nomad 1.8.0 – 1.9.0: the disconnect block, legacy fields still
    /// honoured (1.9.1 follows the `NextAllocation` chain).
    pub const V1_8_0: ReconcilerRules = ReconcilerRules {
        unknown_on_untainted_node: UnknownOnUntaintedNode::Untainted,
        reconnect_reconciliation: ReconnectReconciliation::First,
        replacement_lookup: ReplacementLookup::NextAllocation,
        disconnecting_replacement: DisconnectingReplacement::ImmediateWithBlock,
        ..ReconcilerRules::V1_4_3
    };

    /// Nomad 1.10.0 – 1.11.1: legacy fields ignored.
    pub const V1_10_0: ReconcilerRules = ReconcilerRules {
        honour_legacy_disconnect_fields: false,
        replacement_lookup: ReplacementLookup::NextAllocationChain,
        ..ReconcilerRules::V1_8_0
    };
}
