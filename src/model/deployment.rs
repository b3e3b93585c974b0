//! Deployments (Nomad's `structs.Deployment` and `DeploymentState`) and the
//! status updates the reconciler asks for.

use super::enums::string_enum;
use super::time::{Duration, Time, unix_nanos};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

string_enum! {
    /// `Deployment.Status`.
    pub enum DeploymentStatus {
        /// In progress.
        Running = "running",
        /// Paused by an operator.
        Paused = "paused",
        /// Failed (unhealthy allocs or the progress deadline).
        Failed = "failed",
        /// Every group is done.
        Successful = "successful",
        /// Replaced by a newer job or stopped.
        Cancelled = "cancelled",
        /// Multiregion: waiting for its turn.
        Pending = "pending",
        /// Multiregion: blocked.
        Blocked = "blocked",
        /// Multiregion: unblocking.
        Unblocking = "unblocking",
        /// Being created.
        Initializing = "initializing",
    }
}

impl DeploymentStatus {
    /// Go's `Deployment.Active()`: running, pending, blocked, unblocking, paused or initializing.
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            DeploymentStatus::Running
                | DeploymentStatus::Pending
                | DeploymentStatus::Blocked
                | DeploymentStatus::Unblocking
                | DeploymentStatus::Initializing
                | DeploymentStatus::Paused
        )
    }
}

/// Status descriptions the reconciler writes (Nomad's
/// `DeploymentStatusDescription*` constants).
pub mod description {
    /// A new deployment starts.
    pub const RUNNING: &str = "Deployment is running";
    /// A new deployment waits for manual canary promotion.
    pub const RUNNING_NEEDS_PROMOTION: &str = "Deployment is running but requires manual promotion";
    /// A new deployment waits for automatic canary promotion.
    pub const RUNNING_AUTO_PROMOTION: &str = "Deployment is running pending automatic promotion";
    /// Multiregion: complete here, waiting for a peer region.
    pub const BLOCKED: &str = "Deployment is complete but waiting for peer region";
    /// Multiregion: pending, waiting for a peer region.
    pub const PENDING_FOR_PEER: &str = "Deployment is pending, waiting for peer region";
    /// The job was stopped.
    pub const STOPPED_JOB: &str = "Cancelled because job is stopped";
    /// A newer job version replaces it.
    pub const NEWER_JOB: &str = "Cancelled due to newer version of job";
    /// Every group completed.
    pub const SUCCESSFUL: &str = "Deployment completed successfully";
}

/// One task group's progress in a deployment (`structs.DeploymentState`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct DeploymentState {
    /// `AutoRevert`.
    pub auto_revert: bool,
    /// `AutoPromote`.
    pub auto_promote: bool,
    /// `ProgressDeadline`.
    pub progress_deadline: Duration,
    /// `RequireProgressBy`.
    pub require_progress_by: Time,
    /// `Promoted`: the canaries were promoted.
    pub promoted: bool,
    /// `PlacedCanaries`: alloc IDs.
    #[serde(deserialize_with = "super::null_as_default")]
    pub placed_canaries: Vec<String>,
    /// `DesiredCanaries`.
    pub desired_canaries: u32,
    /// `DesiredTotal`.
    pub desired_total: u32,
    /// `PlacedAllocs`.
    pub placed_allocs: u32,
    /// `HealthyAllocs`.
    pub healthy_allocs: u32,
    /// `UnhealthyAllocs`.
    pub unhealthy_allocs: u32,
}

/// A deployment (`structs.Deployment`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Deployment {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Namespace`.
    pub namespace: String,
    /// `JobID`.
    #[serde(rename = "JobID")]
    pub job_id: String,
    /// `JobVersion`.
    pub job_version: u64,
    /// `JobModifyIndex`.
    pub job_modify_index: u64,
    /// `JobSpecModifyIndex`.
    pub job_spec_modify_index: u64,
    /// `JobCreateIndex`.
    pub job_create_index: u64,
    /// `IsMultiregion`.
    pub is_multiregion: bool,
    /// `TaskGroups`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub task_groups: BTreeMap<String, DeploymentState>,
    /// `Status`.
    pub status: DeploymentStatus,
    /// `StatusDescription`.
    pub status_description: String,
    /// `EvalPriority`.
    pub eval_priority: i64,
    /// `CreateIndex`.
    pub create_index: u64,
    /// `ModifyIndex`.
    pub modify_index: u64,
    /// `CreateTime` (Unix nanoseconds; absent reads as Go's int64 zero, the Unix epoch).
    #[serde(with = "unix_nanos", default = "Time::unix_epoch")]
    pub create_time: Time,
    /// `ModifyTime` (Unix nanoseconds; absent reads as Go's int64 zero, the Unix epoch).
    #[serde(with = "unix_nanos", default = "Time::unix_epoch")]
    pub modify_time: Time,
}

impl Deployment {
    /// Go's `Active()`.
    pub fn active(&self) -> bool {
        self.status.is_active()
    }
    /// Go's `HasPlacedCanaries()`.
    pub fn has_placed_canaries(&self) -> bool {
        self.task_groups
            .values()
            .any(|s| !s.placed_canaries.is_empty())
    }
    /// Go's `RequiresPromotion()`: running, and some group wants canaries
    /// and is not promoted.
    pub fn requires_promotion(&self) -> bool {
        self.status == DeploymentStatus::Running
            && self
                .task_groups
                .values()
                .any(|s| s.desired_canaries > 0 && !s.promoted)
    }
    /// Go's `HasAutoPromote()`: running, with groups, and every canary group
    /// auto-promotes.
    pub fn has_auto_promote(&self) -> bool {
        self.status == DeploymentStatus::Running
            && !self.task_groups.is_empty()
            && self
                .task_groups
                .values()
                .all(|s| s.desired_canaries == 0 || s.auto_promote)
    }
}

/// A status change the reconciler asks for (`structs.DeploymentStatusUpdate`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct DeploymentStatusUpdate {
    /// `DeploymentID`.
    #[serde(rename = "DeploymentID")]
    pub deployment_id: String,
    /// `Status`.
    pub status: DeploymentStatus,
    /// `StatusDescription`.
    pub status_description: String,
}
