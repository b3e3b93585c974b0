//! Jobs and task groups (Nomad's `structs.Job`, `structs.TaskGroup` and the
//! group's update, reschedule and disconnect blocks).

use super::enums::string_enum;
use super::time::Duration;
use serde::{Deserialize, Serialize};

string_enum! {
    /// `Job.Type`.
    pub enum JobType {
        /// A long-running service.
        Service = "service",
        /// A run-to-completion batch job.
        Batch = "batch",
        /// One alloc per eligible node.
        System = "system",
        /// A batch job with one alloc per eligible node.
        SysBatch = "sysbatch",
    }
}

/// A job (`structs.Job`), the fields the scheduler reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Job {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Name` (the node reconciler names allocs after it).
    pub name: String,
    /// `Namespace`.
    pub namespace: String,
    /// `Type`.
    #[serde(rename = "Type")]
    pub job_type: JobType,
    /// `Priority`.
    pub priority: i64,
    /// `Datacenters`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub datacenters: Vec<String>,
    /// `NodePool`.
    pub node_pool: String,
    /// `Version`.
    pub version: u64,
    /// `Stop`: the job was stopped.
    pub stop: bool,
    /// `Status` (`pending`, `running`, `dead`).
    pub status: String,
    /// `CreateIndex`: changes when a job is purged and registered again.
    pub create_index: u64,
    /// `ModifyIndex`.
    pub modify_index: u64,
    /// `JobModifyIndex`: changes on every change of the job's spec.
    pub job_modify_index: u64,
    /// `TaskGroups`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub task_groups: Vec<TaskGroup>,
}

impl Job {
    /// The task group of that name (Go's `LookupTaskGroup`).
    #[inline]
    pub fn lookup_task_group(&self, name: &str) -> Option<&TaskGroup> {
        self.task_groups.iter().find(|tg| tg.name == name)
    }
    /// Go's `Job.Stopped()` for a present job.
    pub fn stopped(&self) -> bool {
        self.stop
    }
    /// Whether the job is a batch or sysbatch job.
    pub fn is_batch(&self) -> bool {
        matches!(self.job_type, JobType::Batch | JobType::SysBatch)
    }
}

/// A task group (`structs.TaskGroup`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct TaskGroup {
    /// `Name`.
    pub name: String,
    /// `Count`.
    pub count: u32,
    /// `Update`; `None` or `MaxParallel` 0 means no deployments.
    pub update: Option<UpdateStrategy>,
    /// `ReschedulePolicy`; `None` means no rescheduling.
    pub reschedule_policy: Option<ReschedulePolicy>,
    /// `Disconnect` (≥ 1.8.0).
    pub disconnect: Option<DisconnectStrategy>,
    /// Legacy `MaxClientDisconnect` (≡ `disconnect.lost_after`; ignored ≥ 1.10).
    pub max_client_disconnect: Option<Duration>,
    /// Legacy `StopAfterClientDisconnect` (≡ `disconnect.stop_on_client_after`).
    pub stop_after_client_disconnect: Option<Duration>,
    /// Legacy `PreventRescheduleOnLost` (≡ `disconnect.replace = false`, 1.8–1.9).
    pub prevent_reschedule_on_lost: bool,
    /// `EphemeralDisk`.
    pub ephemeral_disk: Option<EphemeralDisk>,
    /// `Tasks`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub tasks: Vec<Task>,
}

impl TaskGroup {
    /// The update strategy if it asks for deployments (Go's `!IsEmpty()`).
    pub fn update_strategy(&self) -> Option<&UpdateStrategy> {
        self.update.as_ref().filter(|u| u.max_parallel != 0)
    }

    /// How long an alloc may stay `unknown` before it is lost
    /// (`GetDisconnectLostTimeout`). With `honour_legacy` (Nomad ≤ 1.9) a
    /// set `max_client_disconnect` wins over the block; from 1.10 it is ignored.
    pub fn lost_after(&self, honour_legacy: bool) -> Duration {
        if honour_legacy && let Some(d) = self.max_client_disconnect {
            return d;
        }
        self.disconnect
            .as_ref()
            .map_or(Duration::ZERO, |d| d.lost_after)
    }

    /// Whether the group opted into disconnect handling at all:
    /// a lost_after (or, with `honour_legacy`, max_client_disconnect) is set.
    pub fn has_lost_after(&self, honour_legacy: bool) -> bool {
        (honour_legacy && self.max_client_disconnect.is_some())
            || self
                .disconnect
                .as_ref()
                .is_some_and(|d| !d.lost_after.is_zero())
    }

    /// After how long without heartbeats the client stops its allocs
    /// (`GetDisconnectStopTimeout`); `None` = never.
    pub fn stop_on_client_after(&self, honour_legacy: bool) -> Option<Duration> {
        if honour_legacy && self.stop_after_client_disconnect.is_some() {
            return self.stop_after_client_disconnect;
        }
        self.disconnect
            .as_ref()
            .and_then(|d| d.stop_on_client_after)
    }

    /// May a replacement start while an alloc is `unknown` (`tg.Replace()`):
    /// true unless the block says `replace = false` (or, with
    /// `honour_legacy`, `prevent_reschedule_on_lost` is set).
    pub fn replace(&self, honour_legacy: bool) -> bool {
        if honour_legacy && self.prevent_reschedule_on_lost {
            return false;
        }
        self.disconnect
            .as_ref()
            .and_then(|d| d.replace)
            .unwrap_or(true)
    }

    /// The reconnect strategy (`disconnect.reconcile`), `best_score` when unset.
    pub fn reconcile_strategy(&self) -> ReconcileStrategy {
        match self.disconnect.as_ref().map(|d| &d.reconcile) {
            None => ReconcileStrategy::BestScore,
            Some(ReconcileStrategy::Other(s)) if s.is_empty() => ReconcileStrategy::BestScore,
            Some(s) => s.clone(),
        }
    }

    /// The largest `KillTimeout` among the tasks.
    pub fn max_kill_timeout(&self) -> Duration {
        self.tasks
            .iter()
            .map(|t| t.kill_timeout)
            .max()
            .unwrap_or_default()
    }
}

/// A task (`structs.Task`), only what the scheduler reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Task {
    /// `Name`.
    pub name: String,
    /// `Leader`.
    pub leader: bool,
    /// `KillTimeout`.
    pub kill_timeout: Duration,
}

/// `structs.UpdateStrategy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct UpdateStrategy {
    /// `Stagger`.
    pub stagger: Duration,
    /// `MaxParallel`; 0 means the block asks for no deployments.
    pub max_parallel: u32,
    /// `HealthCheck`.
    pub health_check: String,
    /// `MinHealthyTime`.
    pub min_healthy_time: Duration,
    /// `HealthyDeadline`.
    pub healthy_deadline: Duration,
    /// `ProgressDeadline`.
    pub progress_deadline: Duration,
    /// `AutoRevert`.
    pub auto_revert: bool,
    /// `AutoPromote`.
    pub auto_promote: bool,
    /// `Canary`.
    pub canary: u32,
}

/// `structs.ReschedulePolicy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct ReschedulePolicy {
    /// `Attempts` within `Interval`.
    pub attempts: i64,
    /// `Interval`.
    pub interval: Duration,
    /// `Delay`: the base delay.
    pub delay: Duration,
    /// `DelayFunction`.
    pub delay_function: DelayFunction,
    /// `MaxDelay`.
    pub max_delay: Duration,
    /// `Unlimited`.
    pub unlimited: bool,
}

string_enum! {
    /// `ReschedulePolicy.DelayFunction`.
    pub enum DelayFunction {
        /// Always `Delay`.
        Constant = "constant",
        /// Doubles each time, up to `MaxDelay`.
        Exponential = "exponential",
        /// The sum of the two previous delays, up to `MaxDelay`.
        Fibonacci = "fibonacci",
    }
}

/// `structs.DisconnectStrategy` (the group's `disconnect` block, ≥ 1.8.0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct DisconnectStrategy {
    /// `LostAfter`; 0 = not set.
    pub lost_after: Duration,
    /// `Replace`; `None` = true.
    pub replace: Option<bool>,
    /// `Reconcile`.
    pub reconcile: ReconcileStrategy,
    /// `StopOnClientAfter`.
    pub stop_on_client_after: Option<Duration>,
}

string_enum! {
    /// `DisconnectStrategy.Reconcile`: which alloc wins when a disconnected
    /// alloc comes back and has a replacement.
    pub enum ReconcileStrategy {
        /// Keep the alloc whose node scored best (the default).
        BestScore = "best_score",
        /// Always keep the original.
        KeepOriginal = "keep_original",
        /// Always keep the replacement.
        KeepReplacement = "keep_replacement",
        /// Keep the alloc that has run longest.
        LongestRunning = "longest_running",
    }
}

/// `structs.EphemeralDisk`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct EphemeralDisk {
    /// `Sticky`.
    pub sticky: bool,
    /// `Migrate`.
    pub migrate: bool,
    /// `SizeMB`.
    #[serde(rename = "SizeMB")]
    pub size_mb: i64,
}
