//! Evaluations (Nomad's `structs.Evaluation`), and the per-group counters a
//! plan carries (`structs.DesiredUpdates`).

use super::enums::string_enum;
use super::time::{Time, unix_nanos};
use serde::{Deserialize, Serialize};

string_enum! {
    /// `Evaluation.Status`.
    pub enum EvalStatus {
        /// Waiting in the broker.
        Pending = "pending",
        /// Waiting for capacity.
        Blocked = "blocked",
        /// Done.
        Complete = "complete",
        /// Failed.
        Failed = "failed",
        /// Cancelled.
        Canceled = "canceled",
    }
}

/// `Evaluation.TriggeredBy` values the reconciler writes.
pub mod trigger {
    /// A follow-up for a failed alloc (also later reschedule batches).
    pub const ALLOC_FAILURE: &str = "alloc-failure";
    /// The first batch of delayed reschedules (≥ 1.11.0).
    pub const ALLOC_RESCHEDULE: &str = "alloc-reschedule";
    /// A disconnected alloc's lost_after timeout.
    pub const MAX_DISCONNECT_TIMEOUT: &str = "max-disconnect-timeout";
    /// A node changed.
    pub const NODE_UPDATE: &str = "node-update";
    /// A job was registered.
    pub const JOB_REGISTER: &str = "job-register";
    /// A job was deregistered.
    pub const JOB_DEREGISTER: &str = "job-deregister";
}

/// `StatusDescription` of follow-up evals the reconciler creates.
pub mod description {
    /// The first reschedule (or stop-after) batch.
    pub const RESCHEDULING_FOLLOWUP: &str = "created for delayed rescheduling";
    /// A lost_after timeout.
    pub const DISCONNECT_TIMEOUT_FOLLOWUP: &str = "created for delayed disconnect timeout";
}

/// An evaluation (`structs.Evaluation`), the fields the scheduler uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Evaluation {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Namespace`.
    pub namespace: String,
    /// `Priority`.
    pub priority: i64,
    /// `Type`: the job's type.
    #[serde(rename = "Type")]
    pub eval_type: String,
    /// `TriggeredBy`.
    pub triggered_by: String,
    /// `JobID`.
    #[serde(rename = "JobID")]
    pub job_id: String,
    /// `JobModifyIndex`.
    pub job_modify_index: u64,
    /// `NodeID` (node-update evals).
    #[serde(rename = "NodeID")]
    pub node_id: String,
    /// `DeploymentID`.
    #[serde(rename = "DeploymentID")]
    pub deployment_id: String,
    /// `Status`.
    pub status: EvalStatus,
    /// `StatusDescription`.
    pub status_description: String,
    /// `WaitUntil`: a delayed eval waits until then.
    pub wait_until: Time,
    /// `PreviousEval`.
    pub previous_eval: String,
    /// `NextEval`.
    pub next_eval: String,
    /// `BlockedEval`.
    pub blocked_eval: String,
    /// `CreateIndex`.
    pub create_index: u64,
    /// `ModifyIndex`.
    pub modify_index: u64,
    /// `CreateTime` (Unix nanoseconds).
    #[serde(with = "unix_nanos")]
    pub create_time: Time,
    /// `ModifyTime` (Unix nanoseconds).
    #[serde(with = "unix_nanos")]
    pub modify_time: Time,
}

/// Per-group counters of a plan's annotations (`structs.DesiredUpdates`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct DesiredUpdates {
    /// `Ignore`.
    pub ignore: u64,
    /// `Place`.
    pub place: u64,
    /// `Migrate`.
    pub migrate: u64,
    /// `Stop`.
    pub stop: u64,
    /// `InPlaceUpdate`.
    pub in_place_update: u64,
    /// `DestructiveUpdate`.
    pub destructive_update: u64,
    /// `Canary`.
    pub canary: u64,
    /// `Preemptions`.
    pub preemptions: u64,
    /// `Disconnect` (≥ 1.11.0).
    pub disconnect: u64,
    /// `Reconnect` (≥ 1.11.0).
    pub reconnect: u64,
    /// `RescheduleNow` (≥ 1.11.0).
    pub reschedule_now: u64,
    /// `RescheduleLater` (≥ 1.11.0).
    pub reschedule_later: u64,
}
