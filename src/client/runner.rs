//! Alloc runners: the client's copy of one allocation and its tasks
//! (Nomad's `client/allocrunner/`), reduced to statuses and task states:
//! pending, running, complete, failed; reconnect; previous-alloc watches;
//! and the deployment health watch (`client/allocrunner/health_hook.go`
//! with `client/allochealth/tracker.go`, `health_check = "task_states"`).

use crate::model::{
    AllocDeploymentStatus, Allocation, ClientStatus, DesiredStatus, Job, TASK_CLIENT_RECONNECTED,
    TaskEvent, TaskGroup, TaskState, TaskStates, Time,
};
use crate::server::rpc::AllocUpdate;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::rc::Rc;

/// Task events kept per task (`defaultMaxEvents`).
pub const MAX_TASK_EVENTS: usize = 10;

/// A previous-allocation watch's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchState {
    /// The watched alloc runs on this client: wait until it is terminal.
    Local,
    /// Poll `Alloc.GetAlloc` until the alloc is terminal, unknown or gone.
    Remote,
    /// Finished waiting.
    Done,
}

/// One watch of the `await_previous_allocations` hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrevWatch {
    /// The alloc this watch was created for.
    pub watched: String,
    /// The ID the remote watcher asks the server about (differs from
    /// `watched` in the #10200 bug).
    pub query_id: String,
    /// State.
    pub state: WatchState,
}

/// What a runner keeps of the newest server version of its alloc it
/// pulled: the fields the client reads, no more (the history keeps a
/// runner's version for as long as the server's alloc has moved on, so a
/// whole `Allocation` would be held twice). The fields keep the names and
/// serde names they have in [`Allocation`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RunnerAlloc {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Name`.
    pub name: String,
    /// `Job`: the job as of the alloc's placement (shared with the
    /// server's versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<Rc<Job>>,
    /// `TaskGroup`.
    pub task_group: String,
    /// `DesiredStatus`.
    pub desired_status: DesiredStatus,
    /// `DeploymentID`.
    #[serde(rename = "DeploymentID")]
    pub deployment_id: String,
    /// `DeploymentStatus.Canary`.
    pub canary: bool,
    /// `AllocModifyIndex`.
    pub alloc_modify_index: u64,
}

impl RunnerAlloc {
    /// What a runner keeps of `alloc`.
    pub fn of(alloc: &Allocation) -> Rc<RunnerAlloc> {
        Rc::new(RunnerAlloc {
            id: alloc.id.clone(),
            name: alloc.name.clone(),
            job: alloc.job.clone(),
            task_group: alloc.task_group.clone(),
            desired_status: alloc.desired_status.clone(),
            deployment_id: alloc.deployment_id.clone(),
            canary: alloc.is_canary(),
            alloc_modify_index: alloc.alloc_modify_index,
        })
    }

    /// The task group of the embedded job (`Allocation::job_task_group`).
    pub fn job_task_group(&self) -> Option<&TaskGroup> {
        self.job.as_ref()?.lookup_task_group(&self.task_group)
    }

    /// `ServerTerminalStatus()`: stop or evict.
    pub fn server_terminal_status(&self) -> bool {
        self.desired_status.is_terminal()
    }

    /// `DeploymentStatus.Canary` (`Allocation::is_canary`).
    pub fn is_canary(&self) -> bool {
        self.canary
    }
}

/// One alloc runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocRunner {
    /// What the runner keeps of the newest server version the client
    /// pulled.
    pub alloc: Rc<RunnerAlloc>,
    /// Local client status.
    pub client_status: ClientStatus,
    /// Local client description (one of the runner's fixed texts).
    pub client_description: Cow<'static, str>,
    /// Task states.
    pub task_states: TaskStates,
    /// Previous-allocation watches.
    pub watches: Vec<PrevWatch>,
    /// The tasks' start is scheduled.
    pub start_scheduled: bool,
    /// The deployment health watch, while one runs (boxed: most runners
    /// have none, and the history keeps every runner's copies).
    #[serde(default)]
    pub health_watch: Option<Box<HealthWatch>>,
    /// The health the client set (`DeploymentStatus.Healthy`, `Timestamp`),
    /// reported with every update once set (boxed, as `health_watch`).
    #[serde(default)]
    pub deployment_health: Option<Box<AllocDeploymentStatus>>,
}

/// The health hook's watch of one alloc of a deployment: it ends healthy
/// when every task has run for `min_healthy_time`, unhealthy when a task
/// fails first or `healthy_deadline` passes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthWatch {
    /// The deployment watched for (a new deployment restarts the watch).
    pub deployment_id: String,
    /// `healthy_deadline` from the watch's start.
    pub deadline: Time,
    /// When the tasks will have run for `min_healthy_time` (set once all
    /// tasks run).
    pub healthy_at: Option<Time>,
}

impl AllocRunner {
    /// A pending runner.
    pub fn new(alloc: &Allocation, watches: Vec<PrevWatch>) -> AllocRunner {
        let pending = |task: &crate::model::job::Task| {
            (
                task.name.clone(),
                TaskState {
                    state: "pending".to_string(),
                    ..TaskState::default()
                },
            )
        };
        let task_states = match alloc.job_task_group() {
            Some(tg) => tg.tasks.iter().map(pending).collect(),
            None => TaskStates::new(),
        };
        AllocRunner {
            alloc: RunnerAlloc::of(alloc),
            client_status: ClientStatus::Pending,
            client_description: "No tasks have started".into(),
            task_states,
            watches,
            start_scheduled: false,
            health_watch: None,
            deployment_health: None,
        }
    }

    /// The update `allocSync` sends for this runner.
    pub fn update(&self) -> AllocUpdate {
        AllocUpdate {
            id: self.alloc.id.clone(),
            client_status: self.client_status.as_str().to_string(),
            client_description: self.client_description.to_string(),
            task_states: self.task_states.clone(),
            deployment_status: self.deployment_health.as_deref().cloned(),
        }
    }

    fn push_event(
        state: &mut TaskState,
        event_type: &'static str,
        now: Time,
        message: &'static str,
    ) {
        state.events.push(TaskEvent {
            event_type: event_type.into(),
            time: now,
            display_message: message.into(),
        });
        if state.events.len() > MAX_TASK_EVENTS {
            let excess = state.events.len() - MAX_TASK_EVENTS;
            state.events.drain(..excess);
        }
    }

    /// Every task runs.
    pub fn start(&mut self, now: Time) {
        for state in self.task_states.values_mut() {
            state.state = "running".to_string();
            state.started_at = now;
            Self::push_event(state, "Started", now, "Task started by client");
        }
        self.client_status = ClientStatus::Running;
        self.client_description = "Tasks are running".into();
    }

    /// Every task stops with `status` (complete or failed).
    pub fn finish(
        &mut self,
        now: Time,
        status: ClientStatus,
        task: Option<&str>,
        why: &'static str,
    ) {
        for (name, state) in &mut self.task_states {
            if task.is_some_and(|only| only != name) || state.state == "dead" {
                continue;
            }
            state.state = "dead".to_string();
            state.failed = status == ClientStatus::Failed;
            state.finished_at = now;
            Self::push_event(state, "Terminated", now, why);
        }
        self.recompute(now, status);
    }

    /// A task finished (failed or not); the alloc is terminal once every
    /// task is dead, failed if any failed.
    pub fn task_done(&mut self, now: Time, task: Option<&str>, failed: bool) {
        let status = if failed {
            ClientStatus::Failed
        } else {
            ClientStatus::Complete
        };
        self.finish(
            now,
            status,
            task,
            if failed {
                "Task failed"
            } else {
                "Task completed"
            },
        );
    }

    fn recompute(&mut self, _now: Time, hint: ClientStatus) {
        let all_dead = self.task_states.values().all(|s| s.state == "dead");
        if !all_dead && !self.task_states.is_empty() {
            return;
        }
        let any_failed = self.task_states.values().any(|s| s.failed);
        self.client_status =
            if any_failed || (self.task_states.is_empty() && hint == ClientStatus::Failed) {
                ClientStatus::Failed
            } else {
                ClientStatus::Complete
            };
        self.client_description = if self.client_status == ClientStatus::Failed {
            "Failed tasks".into()
        } else {
            "All tasks have completed".into()
        };
    }

    /// A task restarts locally; the alloc stays running.
    pub fn restart(&mut self, now: Time, task: Option<&str>) {
        for (name, state) in &mut self.task_states {
            if task.is_some_and(|only| only != name) {
                continue;
            }
            state.restarts += 1;
            state.last_restart = now;
            state.state = "running".to_string();
            Self::push_event(state, "Restarting", now, "Task restarting");
        }
    }

    /// `allocRunner.Reconnect`: append the reconnected task event and adopt
    /// the server's indexes; the local status is what gets reported.
    pub fn reconnect(&mut self, now: Time, alloc: Rc<Allocation>) {
        for state in self.task_states.values_mut() {
            Self::push_event(state, TASK_CLIENT_RECONNECTED, now, "Client reconnected");
        }
        self.alloc = RunnerAlloc::of(&alloc);
    }

    /// Forces a status (the script's `update_alloc` with statuses).
    pub fn set_status(&mut self, now: Time, status: ClientStatus) {
        match status {
            ClientStatus::Running => {
                if self.client_status != ClientStatus::Running {
                    self.start(now);
                }
            }
            ClientStatus::Complete | ClientStatus::Failed => {
                self.finish(now, status.clone(), None, "status set by the user")
            }
            _ => {
                self.client_status = status;
            }
        }
    }
}

/// Whether the health hook watches this alloc for its deployment: a
/// service alloc of a deployment whose group has an update block that is
/// not `health_check = "manual"` (`newAllocHealthWatcherHook`, `init`).
fn watches_deployment_health(
    alloc: &RunnerAlloc,
) -> Option<(crate::model::Duration, crate::model::Duration)> {
    if alloc.deployment_id.is_empty() {
        return None;
    }
    let job = alloc.job.as_ref()?;
    if job.job_type != crate::model::JobType::Service {
        return None;
    }
    let update = job
        .lookup_task_group(&alloc.task_group)?
        .update_strategy()?;
    if update.health_check == "manual" {
        return None;
    }
    Some((update.min_healthy_time, update.healthy_deadline))
}

impl AllocRunner {
    /// The health hook's `Prerun` (after the previous-alloc watches) or
    /// `Update` (a new deployment): starts a watch unless the health is
    /// already set. Returns the deadline, for a timer.
    pub fn arm_health(&mut self, now: Time) -> Option<Time> {
        let deployment = self.alloc.deployment_id.clone();
        if self
            .deployment_health
            .as_ref()
            .is_some_and(|d| d.healthy.is_some())
        {
            return None;
        }
        let (min_healthy_time, healthy_deadline) = watches_deployment_health(&self.alloc)?;
        let deadline = now.add(healthy_deadline);
        // Tasks already running (an in-place update into a new deployment)
        // start the min_healthy_time wait now.
        let healthy_at = (self.client_status == ClientStatus::Running
            && self.task_states.values().all(|s| s.state == "running"))
        .then(|| now.add(min_healthy_time));
        self.health_watch = Some(Box::new(HealthWatch {
            deployment_id: deployment,
            deadline,
            healthy_at,
        }));
        Some(deadline)
    }

    /// The tasks (re)started: the min_healthy_time wait starts again.
    /// Returns when it ends, for a timer.
    pub fn health_tasks_started(&mut self, now: Time) -> Option<Time> {
        let (min_healthy_time, _) = watches_deployment_health(&self.alloc)?;
        let watch = self.health_watch.as_mut()?;
        let at = now.add(min_healthy_time);
        watch.healthy_at = Some(at);
        Some(at)
    }

    /// The server moved the alloc to another deployment (an in-place
    /// update): the health is cleared and the watch restarts
    /// (`allocHealthWatcherHook.Update`). Returns the new watch's times.
    pub fn health_deployment_changed(&mut self, now: Time, previous: &str) -> Vec<Time> {
        if self.alloc.deployment_id == previous {
            return Vec::new();
        }
        self.deployment_health = None;
        self.health_watch = None;
        let mut times = Vec::new();
        if let Some(deadline) = self.arm_health(now) {
            times.push(deadline);
            if let Some(at) = self.health_watch.as_ref().and_then(|w| w.healthy_at) {
                times.push(at);
            }
        }
        times
    }

    /// The tracker's check: sets the health once it is known. Returns
    /// `Some(healthy)` when this call set it.
    pub fn check_health(&mut self, now: Time) -> Option<bool> {
        let watch = self.health_watch.as_ref()?;
        if watch.deployment_id != self.alloc.deployment_id {
            self.health_watch = None;
            return None;
        }
        if self.alloc.server_terminal_status() {
            // The alloc is being stopped: the tracker exits without a health.
            self.health_watch = None;
            return None;
        }
        let failed = self.client_status == ClientStatus::Failed
            || self
                .task_states
                .values()
                .any(|s| s.failed || !s.finished_at.is_zero());
        let all_running = self.client_status == ClientStatus::Running
            && self.task_states.values().all(|s| s.state == "running");
        let healthy = if failed {
            false
        } else if all_running && watch.healthy_at.is_some_and(|at| !at.after(now)) {
            true
        } else if !watch.deadline.after(now) {
            false
        } else {
            return None;
        };
        self.health_watch = None;
        self.deployment_health = Some(Box::new(AllocDeploymentStatus {
            healthy: Some(healthy),
            timestamp: now,
            canary: self.alloc.is_canary(),
            modify_index: 0,
        }));
        Some(healthy)
    }
}
