//! Allocations (Nomad's `structs.Allocation`) and their parts: client and
//! desired status, alloc states, desired transitions, the reschedule
//! tracker, deployment status and task states.
//!
//! The derived predicates Nomad defines on `Allocation` (in
//! `nomad/structs/alloc.go`) live in `alloc_logic.rs` of this module.

use super::enums::string_enum;
use super::job::{Job, TaskGroup};
use super::time::{Duration, Time, unix_nanos};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;

string_enum! {
    /// `Allocation.ClientStatus`: what the client reports (the scheduler may
    /// also write `lost` and `unknown`).
    pub enum ClientStatus {
        /// Not yet running.
        Pending = "pending",
        /// Running.
        Running = "running",
        /// Finished successfully.
        Complete = "complete",
        /// Failed.
        Failed = "failed",
        /// Its node is gone; written by the scheduler.
        Lost = "lost",
        /// Its node is disconnected; written by the scheduler.
        Unknown = "unknown",
    }
}

impl ClientStatus {
    /// Client-terminal: complete, failed or lost.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            ClientStatus::Complete | ClientStatus::Failed | ClientStatus::Lost
        )
    }
}

string_enum! {
    /// `Allocation.DesiredStatus`: what the servers want.
    pub enum DesiredStatus {
        /// Keep running.
        Run = "run",
        /// Stop.
        Stop = "stop",
        /// Preempted.
        Evict = "evict",
    }
}

impl DesiredStatus {
    /// Server-terminal: stop or evict.
    pub fn is_terminal(&self) -> bool {
        matches!(self, DesiredStatus::Stop | DesiredStatus::Evict)
    }
}

/// One entry of `Allocation.AllocStates`: a field the scheduler set and when.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct AllocState {
    /// `Field`, e.g. `ClientStatus`.
    pub field: String,
    /// `Value`, e.g. `unknown`.
    pub value: String,
    /// `Time`.
    pub time: Time,
}

/// The `Field` of an [`AllocState`] that records a client status.
pub const ALLOC_STATE_FIELD_CLIENT_STATUS: &str = "ClientStatus";

/// `structs.DesiredTransition`: operator and drainer requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct DesiredTransition {
    /// `Migrate`: the drainer wants it moved.
    pub migrate: Option<bool>,
    /// `MigrateDisablePlacement`: moved without a replacement (batch drain).
    pub migrate_disable_placement: Option<bool>,
    /// `Reschedule`: reschedule even within an active deployment.
    pub reschedule: Option<bool>,
    /// `ForceReschedule`: reschedule now, whatever the policy says.
    pub force_reschedule: Option<bool>,
    /// `NoShutdownDelay`.
    pub no_shutdown_delay: Option<bool>,
}

impl DesiredTransition {
    /// `ShouldMigrate()`.
    pub fn should_migrate(&self) -> bool {
        self.migrate == Some(true)
    }
    /// `ShouldDisableMigrationPlacement()`.
    pub fn should_disable_migration_placement(&self) -> bool {
        self.migrate_disable_placement == Some(true)
    }
    /// `ShouldReschedule()`.
    pub fn should_reschedule(&self) -> bool {
        self.reschedule == Some(true)
    }
    /// `ShouldForceReschedule()`.
    pub fn should_force_reschedule(&self) -> bool {
        self.force_reschedule == Some(true)
    }
}

/// One entry of a [`RescheduleTracker`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct RescheduleEvent {
    /// `RescheduleTime` (Unix nanoseconds).
    #[serde(with = "unix_nanos")]
    pub reschedule_time: Time,
    /// `PrevAllocID`.
    #[serde(rename = "PrevAllocID")]
    pub prev_alloc_id: String,
    /// `PrevNodeID`.
    #[serde(rename = "PrevNodeID")]
    pub prev_node_id: String,
    /// `Delay`.
    pub delay: Duration,
}

/// `structs.RescheduleTracker`. `events: None` (JSON `null`) differs from
/// `Some(vec![])`, as in Nomad.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct RescheduleTracker {
    /// `Events`.
    pub events: Option<Vec<RescheduleEvent>>,
    /// `LastReschedule`: `ok`, `no placement`, or empty.
    pub last_reschedule: String,
}

/// `LastReschedule` value when the last reschedule succeeded.
pub const LAST_RESCHEDULE_SUCCESS: &str = "ok";

/// `LastReschedule` value when the last reschedule found no placement.
pub const LAST_RESCHEDULE_FAILED_TO_PLACE: &str = "no placement";

/// `structs.AllocDeploymentStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct AllocDeploymentStatus {
    /// `Healthy`; `None` = not yet known.
    pub healthy: Option<bool>,
    /// `Timestamp`.
    pub timestamp: Time,
    /// `Canary`.
    pub canary: bool,
    /// `ModifyIndex`.
    pub modify_index: u64,
}

/// One task event (`structs.TaskEvent`), for the ≤ 1.4.2 reconnect marker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct TaskEvent {
    /// `Type`, e.g. `Reconnected` (the client's are fixed texts, not
    /// copied into every event the history keeps).
    #[serde(rename = "Type")]
    pub event_type: Cow<'static, str>,
    /// `Time` (Unix nanoseconds).
    #[serde(with = "unix_nanos")]
    pub time: Time,
    /// `DisplayMessage` (as `event_type`).
    pub display_message: Cow<'static, str>,
}

/// The task event type the client appends on reconnect
/// (`structs.TaskClientReconnected`).
pub const TASK_CLIENT_RECONNECTED: &str = "Reconnected";

/// `structs.TaskState`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct TaskState {
    /// `State`: `pending`, `running`, `dead`.
    pub state: String,
    /// `Failed`.
    pub failed: bool,
    /// `Restarts`.
    pub restarts: u64,
    /// `LastRestart`.
    pub last_restart: Time,
    /// `StartedAt`.
    pub started_at: Time,
    /// `FinishedAt`.
    pub finished_at: Time,
    /// `Events`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub events: Vec<TaskEvent>,
}

/// `Allocation.TaskStates`: task name → state, sorted by name. An alloc
/// has one task or a few, so a sorted list holds them in about a tenth of
/// what a `BTreeMap` node takes (the history keeps every alloc version).
/// Clones share the list until one of them changes it: the client's
/// states, the update it sends and the alloc versions the server writes
/// from it hold one copy. It serializes, prints, compares and iterates as
/// the `BTreeMap<String, TaskState>` it stands for.
#[derive(Clone, Default)]
pub struct TaskStates {
    /// (task, state), sorted by task, tasks unique; `None` when empty.
    #[allow(clippy::rc_buffer)]
    tasks: Option<Rc<Vec<(String, TaskState)>>>,
}

/// One task's entry as a pair of references.
fn task_pair(entry: &(String, TaskState)) -> (&String, &TaskState) {
    (&entry.0, &entry.1)
}

/// One task's entry as a key reference and a mutable state.
fn task_pair_mut(entry: &mut (String, TaskState)) -> (&String, &mut TaskState) {
    (&entry.0, &mut entry.1)
}

/// The iterator of [`TaskStates`].
pub type TaskStatesIter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, TaskState)>,
    fn(&'a (String, TaskState)) -> (&'a String, &'a TaskState),
>;

/// The mutable iterator of [`TaskStates`].
pub type TaskStatesIterMut<'a> = std::iter::Map<
    std::slice::IterMut<'a, (String, TaskState)>,
    fn(&'a mut (String, TaskState)) -> (&'a String, &'a mut TaskState),
>;

impl TaskStates {
    /// No tasks.
    pub fn new() -> Self {
        Self::default()
    }

    /// A list (sorted, tasks unique) as task states.
    fn from_sorted(tasks: Vec<(String, TaskState)>) -> Self {
        TaskStates {
            tasks: (!tasks.is_empty()).then(|| Rc::new(tasks)),
        }
    }

    /// The (task, state) list.
    fn tasks(&self) -> &[(String, TaskState)] {
        self.tasks.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The (task, state) list, to change (copied first if shared).
    fn tasks_mut(&mut self) -> &mut Vec<(String, TaskState)> {
        Rc::make_mut(self.tasks.get_or_insert_with(Default::default))
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.tasks().len()
    }

    /// Whether there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.tasks().is_empty()
    }

    fn position(&self, task: &str) -> Result<usize, usize> {
        self.tasks()
            .binary_search_by(|(name, _)| name.as_str().cmp(task))
    }

    /// The state of `task`.
    pub fn get(&self, task: &str) -> Option<&TaskState> {
        self.position(task).ok().map(|index| &self.tasks()[index].1)
    }

    /// The state of `task`, to change.
    pub fn get_mut(&mut self, task: &str) -> Option<&mut TaskState> {
        let index = self.position(task).ok()?;
        Some(&mut self.tasks_mut()[index].1)
    }

    /// Whether `task` has a state.
    pub fn contains_key(&self, task: &str) -> bool {
        self.position(task).is_ok()
    }

    /// Sets the state of `task`; returns the old one.
    pub fn insert(&mut self, task: String, state: TaskState) -> Option<TaskState> {
        match self.position(&task) {
            Ok(index) => Some(std::mem::replace(&mut self.tasks_mut()[index].1, state)),
            Err(index) => {
                self.tasks_mut().insert(index, (task, state));
                None
            }
        }
    }

    /// (task, state) in task order.
    pub fn iter(&self) -> TaskStatesIter<'_> {
        self.tasks().iter().map(task_pair)
    }

    /// (task, state) in task order, the states to change.
    pub fn iter_mut(&mut self) -> TaskStatesIterMut<'_> {
        self.tasks_mut().iter_mut().map(task_pair_mut)
    }

    /// Task names in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> {
        self.tasks().iter().map(|(name, _)| name)
    }

    /// States in task order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &TaskState> {
        self.tasks().iter().map(|(_, state)| state)
    }

    /// States in task order, to change.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut TaskState> {
        self.tasks_mut().iter_mut().map(|(_, state)| state)
    }

    /// The same states as a `BTreeMap`.
    pub fn to_map(&self) -> BTreeMap<String, TaskState> {
        crate::cold_sort::map_from(self.tasks().iter().cloned())
    }
}

impl PartialEq for TaskStates {
    fn eq(&self, other: &Self) -> bool {
        self.tasks() == other.tasks()
    }
}

impl Eq for TaskStates {}

impl<'a> IntoIterator for &'a TaskStates {
    type Item = (&'a String, &'a TaskState);
    type IntoIter = TaskStatesIter<'a>;

    fn into_iter(self) -> TaskStatesIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut TaskStates {
    type Item = (&'a String, &'a mut TaskState);
    type IntoIter = TaskStatesIterMut<'a>;

    fn into_iter(self) -> TaskStatesIterMut<'a> {
        self.iter_mut()
    }
}

impl FromIterator<(String, TaskState)> for TaskStates {
    fn from_iter<I: IntoIterator<Item = (String, TaskState)>>(tasks: I) -> Self {
        // Sorted, the last state of a repeated task winning, as a BTreeMap
        // would keep them, by insertion into one list (a group has a few
        // tasks: no map built and taken apart, and no sort compiled).
        let tasks = tasks.into_iter();
        let mut list: Vec<(String, TaskState)> = Vec::with_capacity(tasks.size_hint().0);
        for (task, state) in tasks {
            match list.binary_search_by(|(name, _)| name.as_str().cmp(&task)) {
                Ok(index) => list[index].1 = state,
                Err(index) => list.insert(index, (task, state)),
            }
        }
        list.shrink_to_fit();
        TaskStates::from_sorted(list)
    }
}

impl From<BTreeMap<String, TaskState>> for TaskStates {
    fn from(map: BTreeMap<String, TaskState>) -> Self {
        let mut tasks: Vec<(String, TaskState)> = map.into_iter().collect();
        tasks.shrink_to_fit();
        TaskStates::from_sorted(tasks)
    }
}

impl From<&BTreeMap<String, TaskState>> for TaskStates {
    fn from(map: &BTreeMap<String, TaskState>) -> Self {
        TaskStates::from_sorted(
            map.iter()
                .map(|(task, state)| (task.clone(), state.clone()))
                .collect(),
        )
    }
}

impl From<&TaskStates> for TaskStates {
    fn from(states: &TaskStates) -> Self {
        states.clone()
    }
}

impl std::ops::Index<&str> for TaskStates {
    type Output = TaskState;

    fn index(&self, task: &str) -> &TaskState {
        self.get(task).expect("no such task")
    }
}

impl std::fmt::Debug for TaskStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for TaskStates {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for TaskStates {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(BTreeMap::<String, TaskState>::deserialize(deserializer)?.into())
    }
}

/// An allocation (`structs.Allocation`).
///
/// Besides the API's fields it has four "stub" fields the fixtures use
/// (`JobVersion`, `JobCreateIndex`, `JobModifyIndex`, `NodeScore`); see
/// [`embed_jobs`] for how they become the embedded job.
///
/// Laid out in declaration order (`repr(C)`; the same 656 bytes as the
/// compiler's own order): the fields the reconciler reads of every alloc
/// (ID, name, node, task group, statuses, transition, alloc states) then
/// share the first few cache lines instead of being spread over the whole
/// struct. Serde reads and writes fields by name, so JSON is unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
#[repr(C)]
pub struct Allocation {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Namespace`.
    pub namespace: String,
    /// `EvalID`.
    #[serde(rename = "EvalID")]
    pub eval_id: String,
    /// `Name`: `<job>.<group>[<index>]`.
    pub name: String,
    /// `NodeID`.
    #[serde(rename = "NodeID")]
    pub node_id: String,
    /// `NodeName`.
    pub node_name: String,
    /// `JobID`.
    #[serde(rename = "JobID")]
    pub job_id: String,
    /// `Job`: the job as of this alloc's placement (shared, never mutated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<Rc<Job>>,
    /// `TaskGroup`.
    pub task_group: String,
    /// `DesiredStatus`.
    pub desired_status: DesiredStatus,
    /// `DesiredDescription`.
    pub desired_description: String,
    /// `DesiredTransition`.
    pub desired_transition: DesiredTransition,
    /// `ClientStatus`.
    pub client_status: ClientStatus,
    /// `ClientDescription`.
    pub client_description: String,
    /// `TaskStates`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub task_states: TaskStates,
    /// `AllocStates`: what the scheduler set, append-only.
    #[serde(deserialize_with = "super::null_as_default")]
    pub alloc_states: Vec<AllocState>,
    /// `PreviousAllocation`: the alloc this one replaces.
    pub previous_allocation: String,
    /// `NextAllocation`: the alloc that replaced this one.
    pub next_allocation: String,
    /// `DeploymentID`.
    #[serde(rename = "DeploymentID")]
    pub deployment_id: String,
    /// `DeploymentStatus`.
    pub deployment_status: Option<AllocDeploymentStatus>,
    /// `RescheduleTracker`.
    pub reschedule_tracker: Option<RescheduleTracker>,
    /// `FollowupEvalID`: the delayed eval that will revisit this alloc.
    #[serde(rename = "FollowupEvalID")]
    pub followup_eval_id: String,
    /// `PreemptedAllocations`.
    #[serde(deserialize_with = "super::null_as_default")]
    pub preempted_allocations: Vec<String>,
    /// `PreemptedByAllocation`.
    pub preempted_by_allocation: String,
    /// `CreateIndex`.
    pub create_index: u64,
    /// `ModifyIndex`.
    pub modify_index: u64,
    /// `AllocModifyIndex`.
    pub alloc_modify_index: u64,
    /// `CreateTime` (Unix nanoseconds).
    #[serde(with = "unix_nanos", default = "Time::unix_epoch")]
    pub create_time: Time,
    /// `ModifyTime` (Unix nanoseconds).
    #[serde(with = "unix_nanos", default = "Time::unix_epoch")]
    pub modify_time: Time,
    /// Stub field `JobVersion` (the API's list stubs carry it): the version
    /// of the embedded job when no `Job` is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_version: Option<u64>,
    /// Fixture field `JobCreateIndex`: the embedded job's `CreateIndex`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_create_index: Option<u64>,
    /// Fixture field `JobModifyIndex`: the embedded job's `JobModifyIndex`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_modify_index: Option<u64>,
    /// Fixture field `NodeScore`: the normalised score of the alloc's node
    /// (`Metrics.ScoreMetaData[0].NormScore` in the API); `None` = no score
    /// metadata, which is not the same as 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_score: Option<f64>,
}

/// The cache key of [`embed_jobs`]: version, create index, job modify index.
type JobKey = (u64, u64, u64);

impl Allocation {
    /// The task group of the embedded job.
    #[inline]
    pub fn job_task_group(&self) -> Option<&TaskGroup> {
        self.job.as_ref()?.lookup_task_group(&self.task_group)
    }
    /// The embedded job's version (else the stub `JobVersion`, else 0).
    pub fn job_version(&self) -> u64 {
        self.job
            .as_ref()
            .map_or(self.job_version.unwrap_or(0), |j| j.version)
    }
    /// The embedded job's `CreateIndex` (else the stub field, else 0).
    pub fn job_create_index(&self) -> u64 {
        self.job
            .as_ref()
            .map_or(self.job_create_index.unwrap_or(0), |j| j.create_index)
    }
    /// The embedded job's `JobModifyIndex` (else the stub field, else 0).
    pub fn job_modify_index(&self) -> u64 {
        self.job
            .as_ref()
            .map_or(self.job_modify_index.unwrap_or(0), |j| j.job_modify_index)
    }
    /// The index in brackets at the end of `Name` (`web.web[3]` → 3); 0 when
    /// the name has none, as Go's `AllocName.Index` parse does.
    pub fn name_index(&self) -> u32 {
        alloc_name_index(&self.name)
    }
}

/// The index of an alloc name `<job>.<group>[<index>]`; 0 when unparsable.
pub fn alloc_name_index(name: &str) -> u32 {
    // Byte scans: `[` and `]` are ASCII, so the slices stay on char bounds.
    let bytes = name.as_bytes();
    // The usual name ends in `[digits]`: read back from the end over at
    // most 9 digits to its `[`, which is then the last `[` and the `]` the
    // first after it (the general scan below finds the same).
    if let Some((b']', head)) = bytes.split_last() {
        let mut index = 0;
        let mut scale = 1;
        for (count, byte) in head.iter().rev().take(10).enumerate() {
            match byte {
                b'0'..=b'9' if count < 9 => {
                    index += u32::from(byte - b'0') * scale;
                    scale = scale.wrapping_mul(10);
                }
                b'[' if count > 0 => return index,
                _ => break,
            }
        }
    }
    let Some(open) = bytes.iter().rposition(|b| *b == b'[') else {
        return 0;
    };
    let rest = &name[open + 1..];
    let Some(close) = rest.bytes().position(|b| b == b']') else {
        return 0;
    };
    let digits = &rest.as_bytes()[..close];
    if (1..=9).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        // Up to 9 digits cannot overflow a u32.
        return digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    }
    rest[..close].parse().unwrap_or(0)
}

/// The alloc name for `job_id`, `group` and `index`.
pub fn alloc_name(job_id: &str, group: &str, index: u32) -> String {
    format!("{job_id}.{group}[{index}]")
}

/// Gives each alloc its embedded job, as the fixtures define it: `job` with
/// the alloc's own stub `JobVersion`, `JobCreateIndex` and `JobModifyIndex`
/// when set. Allocs that already embed a job keep it. With `job` = `None`
/// nothing changes. Allocs with the same three numbers share one `Rc`.
pub fn embed_jobs(allocs: &mut [Allocation], job: Option<&Job>) {
    let Some(job) = job else { return };
    let mut cache: BTreeMap<JobKey, Rc<Job>> = BTreeMap::new();
    for alloc in allocs.iter_mut().filter(|a| a.job.is_none()) {
        let key = (
            alloc.job_version.unwrap_or(job.version),
            alloc.job_create_index.unwrap_or(job.create_index),
            alloc.job_modify_index.unwrap_or(job.job_modify_index),
        );
        let shared = cache.entry(key).or_insert_with(|| {
            let mut j = job.clone();
            (j.version, j.create_index, j.job_modify_index) = key;
            Rc::new(j)
        });
        alloc.job = Some(Rc::clone(shared));
    }
}

#[cfg(test)]
mod tests {
    use super::{TaskEvent, TaskState, TaskStates};
    use crate::model::time::{Time, unix_nanos};
    use serde::Serialize;
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    /// A task event's texts, fixed (borrowed) or read (owned), write the
    /// JSON the `String` fields wrote, which reads back equal.
    #[test]
    fn task_event_texts_write_the_same_json() {
        #[derive(Serialize)]
        #[serde(rename_all = "PascalCase")]
        struct Plain {
            #[serde(rename = "Type")]
            event_type: String,
            #[serde(with = "unix_nanos")]
            time: Time,
            display_message: String,
        }
        let time = Time::from_unix_nanos(1_767_261_600_000_000_000);
        let fixed = TaskEvent {
            event_type: "Started".into(),
            time,
            display_message: "Task started by client".into(),
        };
        let read = TaskEvent {
            event_type: Cow::Owned("Started".to_string()),
            time,
            display_message: Cow::Owned("Task started by client".to_string()),
        };
        let plain = Plain {
            event_type: "Started".to_string(),
            time,
            display_message: "Task started by client".to_string(),
        };
        let json = serde_json::to_string(&plain).expect("serialize");
        assert_eq!(serde_json::to_string(&fixed).expect("serialize"), json);
        assert_eq!(serde_json::to_string(&read).expect("serialize"), json);
        let back: TaskEvent = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, fixed);
        assert_eq!(back, read);
    }

    /// The read back from the end gives what the general scan gives.
    #[test]
    fn alloc_name_index_reads_as_the_scan() {
        fn scan(name: &str) -> u32 {
            let Some(open) = name.rfind('[') else {
                return 0;
            };
            let rest = &name[open + 1..];
            let Some(close) = rest.find(']') else {
                return 0;
            };
            rest[..close].parse().unwrap_or(0)
        }
        for name in [
            "web.web[3]",
            "job-00.app[37]",
            "a[0]",
            "a[]",
            "[5]",
            "]",
            "",
            "a[12]b",
            "a[1]]",
            "a[x1]",
            "a[1][2]",
            "a[2][x]",
            "a[123456789]",
            "a[1234567890]",
            "a[4294967295]",
            "a[4294967296]",
            "a[+7]",
            "é[9]",
        ] {
            assert_eq!(super::alloc_name_index(name), scan(name), "{name}");
        }
    }

    fn state(name: &str, restarts: u64) -> (String, TaskState) {
        let state = TaskState {
            state: "running".into(),
            restarts,
            ..TaskState::default()
        };
        (name.to_string(), state)
    }

    /// The sorted list reads, writes, prints and looks up as the map it
    /// stands for, a repeated task keeping its last state.
    #[test]
    fn task_states_behave_as_the_map() {
        let pairs = [
            state("web", 1),
            state("db", 2),
            state("web", 3),
            state("cache", 0),
        ];
        let map: BTreeMap<String, TaskState> = pairs.iter().cloned().collect();
        let mut tasks: TaskStates = pairs.iter().cloned().collect();
        assert_eq!(tasks.len(), 3);
        assert_eq!(tasks, TaskStates::from(&map));
        assert_eq!(tasks.tasks.as_ref().map(|list| list.capacity()), Some(3));
        let none: TaskStates = std::iter::empty().collect();
        assert_eq!(none, TaskStates::new());
        assert!(none.tasks.is_none());
        assert!(tasks.iter().eq(map.iter()));
        assert_eq!(tasks["web"].restarts, 3);
        assert_eq!(tasks.get("nope"), None);
        assert_eq!(format!("{tasks:?}"), format!("{map:?}"));
        let json = serde_json::to_string(&tasks).expect("serialize");
        assert_eq!(json, serde_json::to_string(&map).expect("serialize"));
        let back: TaskStates = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, tasks);
        assert_eq!(back.to_map(), map);
        assert_eq!(tasks.insert("api".into(), TaskState::default()), None);
        assert!(
            tasks
                .keys()
                .map(String::as_str)
                .eq(["api", "cache", "db", "web"])
        );
        for state in tasks.values_mut() {
            state.failed = true;
        }
        assert!(tasks.values().all(|state| state.failed));
        assert!(tasks.contains_key("api") && !TaskStates::new().contains_key("api"));
    }
}
