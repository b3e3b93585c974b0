//! The data model: Nomad's jobs, nodes, allocations, evaluations and
//! deployments, read and written in the JSON of Nomad's HTTP API.
//!
//! # Encoding
//!
//! Every struct reads and writes the API's PascalCase field names. Absent
//! fields take Go's zero value (`#[serde(default)]` throughout; `null` for a
//! list or map reads as empty), and unknown fields (from newer Nomad
//! versions) are ignored. Durations are integers of nanoseconds
//! ([`Duration`]). Times are RFC 3339 strings ([`Time`]) except
//! `CreateTime`, `ModifyTime` and `RescheduleTime`, which are integers of
//! Unix nanoseconds ([`time::unix_nanos`]). Statuses are enums with an
//! `Other(String)` fallback, so a value from another version never fails.
//!
//! # Names (stable: other modules build on them)
//!
//! | Nomad (`structs.`) | here |
//! | --- | --- |
//! | `Job`, `TaskGroup`, `Task` | [`Job`], [`TaskGroup`], [`Task`] (`Job.job_type: JobType`) |
//! | `UpdateStrategy`, `ReschedulePolicy`, `DisconnectStrategy`, `EphemeralDisk` | same names; [`DelayFunction`], [`ReconcileStrategy`] enums |
//! | `TaskGroup.MaxClientDisconnect`, `StopAfterClientDisconnect`, `PreventRescheduleOnLost` | `max_client_disconnect`, `stop_after_client_disconnect`, `prevent_reschedule_on_lost`; read through [`TaskGroup::lost_after`], [`TaskGroup::stop_on_client_after`], [`TaskGroup::replace`] with a `honour_legacy` flag |
//! | `Node`, `DrainStrategy` | [`Node`] (`status: NodeStatus`, `scheduling_eligibility: SchedulingEligibility`), [`DrainStrategy`] |
//! | `Allocation` | [`Allocation`]: `client_status: ClientStatus`, `desired_status: DesiredStatus`, `alloc_states: Vec<AllocState>`, `desired_transition: DesiredTransition`, `previous_allocation`/`next_allocation: String`, `reschedule_tracker: Option<RescheduleTracker>`, `followup_eval_id`, `deployment_id`, `deployment_status: Option<AllocDeploymentStatus>`, `task_states: TaskStates` (a sorted list that serializes as the map), `job: Option<Rc<Job>>`, plus the fixture stubs `job_version`, `job_create_index`, `job_modify_index`, `node_score` |
//! | `Deployment`, `DeploymentState`, `DeploymentStatusUpdate` | same names; `status: DeploymentStatus` |
//! | `Evaluation`, `DesiredUpdates` | [`Evaluation`], [`DesiredUpdates`] |
//!
//! The derived predicates of `nomad/structs/alloc.go` (`TerminalStatus`,
//! `NeedsToReconnect`, `LastUnknown`, `Expired`, `NextRescheduleTime`, ...)
//! are methods of [`Allocation`] in [`alloc_logic`].

pub mod alloc;
pub mod alloc_logic;
pub mod deployment;
mod enums;
pub mod eval;
pub mod job;
pub mod node;
pub mod time;

pub use alloc::{
    ALLOC_STATE_FIELD_CLIENT_STATUS, AllocDeploymentStatus, AllocState, Allocation, ClientStatus,
    DesiredStatus, DesiredTransition, LAST_RESCHEDULE_FAILED_TO_PLACE, LAST_RESCHEDULE_SUCCESS,
    RescheduleEvent, RescheduleTracker, TASK_CLIENT_RECONNECTED, TaskEvent, TaskState, TaskStates,
    alloc_name, alloc_name_index, embed_jobs,
};
pub use deployment::{Deployment, DeploymentState, DeploymentStatus, DeploymentStatusUpdate};
pub use eval::{DesiredUpdates, EvalStatus, Evaluation};
pub use job::{
    DelayFunction, DisconnectStrategy, EphemeralDisk, Job, JobType, ReconcileStrategy,
    ReschedulePolicy, Task, TaskGroup, UpdateStrategy,
};
pub use node::{DrainStrategy, Node, NodeStatus, SchedulingEligibility};
pub use time::{Duration, Time, TimeError};

/// Reads `null` as the type's default (Go marshals a nil slice or map as
/// `null`).
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    use serde::Deserialize;
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}
