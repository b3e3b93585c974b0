//! Alloc runners: the client's copy of one allocation and its tasks
//! (Nomad's `client/allocrunner/`), reduced to statuses and task states:
//! pending, running, complete, failed; reconnect; previous-alloc watches.

use crate::model::{Allocation, ClientStatus, TASK_CLIENT_RECONNECTED, TaskEvent, TaskState, Time};
use crate::server::rpc::AllocUpdate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

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

/// One alloc runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocRunner {
    /// The newest server version the client pulled.
    pub alloc: Arc<Allocation>,
    /// Local client status.
    pub client_status: ClientStatus,
    /// Local client description.
    pub client_description: String,
    /// Task states.
    pub task_states: BTreeMap<String, TaskState>,
    /// Previous-allocation watches.
    pub watches: Vec<PrevWatch>,
    /// The tasks' start is scheduled.
    pub start_scheduled: bool,
}

impl AllocRunner {
    /// A pending runner.
    pub fn new(alloc: Arc<Allocation>, watches: Vec<PrevWatch>) -> AllocRunner {
        let task_names: Vec<String> = alloc
            .job_task_group()
            .map(|tg| tg.tasks.iter().map(|task| task.name.clone()).collect())
            .unwrap_or_default();
        let task_states = task_names
            .into_iter()
            .map(|name| {
                (
                    name,
                    TaskState {
                        state: "pending".to_string(),
                        ..TaskState::default()
                    },
                )
            })
            .collect();
        AllocRunner {
            alloc,
            client_status: ClientStatus::Pending,
            client_description: "No tasks have started".to_string(),
            task_states,
            watches,
            start_scheduled: false,
        }
    }

    /// The update `allocSync` sends for this runner.
    pub fn update(&self) -> AllocUpdate {
        AllocUpdate {
            id: self.alloc.id.clone(),
            client_status: self.client_status.as_str().to_string(),
            client_description: self.client_description.clone(),
            task_states: self.task_states.clone(),
        }
    }

    fn push_event(state: &mut TaskState, event_type: &str, now: Time, message: &str) {
        state.events.push(TaskEvent {
            event_type: event_type.to_string(),
            time: now,
            display_message: message.to_string(),
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
        self.client_description = "Tasks are running".to_string();
    }

    /// Every task stops with `status` (complete or failed).
    pub fn finish(&mut self, now: Time, status: ClientStatus, task: Option<&str>, why: &str) {
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
            "Failed tasks".to_string()
        } else {
            "All tasks have completed".to_string()
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
    pub fn reconnect(&mut self, now: Time, alloc: Arc<Allocation>) {
        for state in self.task_states.values_mut() {
            Self::push_event(state, TASK_CLIENT_RECONNECTED, now, "Client reconnected");
        }
        self.alloc = alloc;
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
