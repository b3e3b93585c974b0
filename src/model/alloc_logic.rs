//! Derived predicates of an allocation, after Nomad's `nomad/structs/alloc.go`
//! (`TerminalStatus`, `NextRescheduleTime`, `NeedsToReconnect`, `Expired`,
//! ...) and the reschedule tracker's eligibility in `structs.go`.
//!
//! Nomad reads the wall clock in a few of these; here `now` is a parameter.
//! Where the rule changed between Nomad versions, the method takes the
//! switch (`honour_legacy`: Nomad ≤ 1.9 reads `max_client_disconnect` and
//! friends) or exists in two variants named after the version.

use super::alloc::{
    ALLOC_STATE_FIELD_CLIENT_STATUS, Allocation, ClientStatus, DesiredStatus,
    LAST_RESCHEDULE_SUCCESS, RescheduleTracker, TASK_CLIENT_RECONNECTED, TaskState,
};
use super::job::{DelayFunction, JobType, ReschedulePolicy};
use super::time::{Duration, Time};

/// Nomad's default task `KillTimeout` (5 s), the floor of `WaitClientStop`.
pub const DEFAULT_KILL_TIMEOUT: Duration = Duration::from_secs(5);

impl TaskState {
    /// `Successful()`: the task is dead and did not fail.
    pub fn successful(&self) -> bool {
        self.state == "dead" && !self.failed
    }
}

impl RescheduleTracker {
    /// `rescheduleInfo`: reschedules within the policy's interval before
    /// `fail_time`, and the allowed attempts.
    pub fn reschedule_info(&self, policy: &ReschedulePolicy, fail_time: Time) -> (i64, i64) {
        let mut attempted = 0;
        if policy.attempts > 0 {
            for event in self.events.iter().flatten().rev() {
                let diff = fail_time
                    .unix_nanos()
                    .saturating_sub(event.reschedule_time.unix_nanos());
                if diff < policy.interval.as_nanos() {
                    attempted += 1;
                }
            }
        }
        (attempted, policy.attempts)
    }
}

/// `RescheduleTracker.RescheduleEligible` for an optional tracker.
pub fn reschedule_eligible(
    tracker: Option<&RescheduleTracker>,
    policy: Option<&ReschedulePolicy>,
    fail_time: Time,
) -> bool {
    let Some(policy) = policy else { return false };
    if policy.attempts <= 0 && !policy.unlimited {
        return false;
    }
    if policy.unlimited {
        return true;
    }
    let events = tracker.and_then(|t| t.events.as_ref()).map_or(0, Vec::len);
    if events == 0 && policy.attempts > 0 {
        return true;
    }
    let attempted = tracker.map_or(0, |t| t.reschedule_info(policy, fail_time).0);
    attempted < policy.attempts
}

impl Allocation {
    /// `ServerTerminalStatus()`: desired stop or evict.
    pub fn server_terminal_status(&self) -> bool {
        self.desired_status.is_terminal()
    }
    /// `ClientTerminalStatus()`: complete, failed or lost.
    pub fn client_terminal_status(&self) -> bool {
        self.client_status.is_terminal()
    }
    /// `TerminalStatus()`: server- or client-terminal.
    pub fn terminal_status(&self) -> bool {
        self.server_terminal_status() || self.client_terminal_status()
    }
    /// Whether the embedded job is a batch job.
    pub fn is_batch_job(&self) -> bool {
        self.job
            .as_ref()
            .is_some_and(|j| j.job_type == JobType::Batch)
    }
    /// Whether the alloc is a canary of a deployment.
    pub fn is_canary(&self) -> bool {
        self.deployment_status.as_ref().is_some_and(|d| d.canary)
    }
    /// Whether the deployment marked the alloc healthy.
    pub fn is_healthy(&self) -> bool {
        self.deployment_status
            .as_ref()
            .is_some_and(|d| d.healthy == Some(true))
    }
    /// Whether the deployment marked the alloc unhealthy.
    pub fn is_unhealthy(&self) -> bool {
        self.deployment_status
            .as_ref()
            .is_some_and(|d| d.healthy == Some(false))
    }
    /// Whether the deployment has set a health at all.
    pub fn has_health(&self) -> bool {
        self.deployment_status
            .as_ref()
            .is_some_and(|d| d.healthy.is_some())
    }

    /// `LastEventTime()`: the latest task `FinishedAt`, else `ModifyTime`.
    pub fn last_event_time(&self) -> Time {
        let mut last = Time::ZERO;
        for s in self.task_states.values() {
            if last.is_zero() || s.finished_at.after(last) {
                last = s.finished_at;
            }
        }
        if last.is_zero() {
            self.modify_time
        } else {
            last
        }
    }

    /// The group's reschedule policy in the embedded job.
    pub fn reschedule_policy(&self) -> Option<&ReschedulePolicy> {
        self.job_task_group()?.reschedule_policy.as_ref()
    }

    /// `LastRescheduleFailed()`.
    pub fn last_reschedule_failed(&self) -> bool {
        self.reschedule_tracker.as_ref().is_some_and(|t| {
            !t.last_reschedule.is_empty() && t.last_reschedule != LAST_RESCHEDULE_SUCCESS
        })
    }

    /// `NextDelay()`: the delay before the next reschedule, from the delay
    /// function and the previous reschedule events.
    pub fn next_delay(&self) -> Duration {
        let Some(policy) = self.reschedule_policy() else {
            return Duration::ZERO;
        };
        let mut delay = policy.delay;
        let events = match self
            .reschedule_tracker
            .as_ref()
            .and_then(|t| t.events.as_ref())
        {
            Some(events) if !events.is_empty() => events,
            _ => return delay,
        };
        let last = &events[events.len() - 1];
        match policy.delay_function {
            DelayFunction::Exponential => delay = last.delay * 2,
            DelayFunction::Fibonacci => {
                if events.len() >= 2 {
                    let n1 = last.delay;
                    let n2 = events[events.len() - 2].delay;
                    delay = if n2 == policy.max_delay && n1 == policy.delay {
                        n1
                    } else {
                        n1 + n2
                    };
                }
            }
            _ => return delay,
        }
        if policy.max_delay > Duration::ZERO && delay > policy.max_delay {
            delay = policy.max_delay;
            let diff = self
                .last_event_time()
                .unix_nanos()
                .saturating_sub(last.reschedule_time.unix_nanos());
            if diff > delay.as_nanos() {
                delay = policy.delay;
            }
        }
        delay
    }

    /// `NextRescheduleTime()`: when the alloc may be rescheduled and whether
    /// the policy still allows it. Only failed or lost allocs (or a batch alloc
    /// marked for reschedule) qualify.
    pub fn next_reschedule_time(&self) -> (Time, bool) {
        let fail_time = self.last_event_time();
        let Some(policy) = self.reschedule_policy() else {
            return (Time::ZERO, false);
        };
        if policy.attempts == 0 && !policy.unlimited {
            return (Time::ZERO, false);
        }
        let rescheduled_batch = self.is_batch_job() && self.desired_transition.should_reschedule();
        if (self.desired_status == DesiredStatus::Stop && !self.last_reschedule_failed())
            || (!rescheduled_batch
                && self.client_status != ClientStatus::Failed
                && self.client_status != ClientStatus::Lost)
            || fail_time.is_zero()
        {
            return (Time::ZERO, false);
        }
        self.next_reschedule_time_from(fail_time, policy)
    }

    /// `NextRescheduleTimeByTime(t)`: the same delay and eligibility math from
    /// a given failure time, without the status checks.
    pub fn next_reschedule_time_by_time(&self, fail_time: Time) -> (Time, bool) {
        match self.reschedule_policy() {
            None => (Time::ZERO, false),
            Some(policy) => self.next_reschedule_time_from(fail_time, policy),
        }
    }

    fn next_reschedule_time_from(
        &self,
        fail_time: Time,
        policy: &ReschedulePolicy,
    ) -> (Time, bool) {
        let delay = self.next_delay();
        let next = fail_time.add(delay);
        let mut eligible =
            policy.unlimited || (policy.attempts > 0 && self.reschedule_tracker.is_none());
        if policy.attempts > 0
            && let Some(tracker) = &self.reschedule_tracker
            && tracker.events.is_some()
        {
            let (attempted, attempts) = tracker.reschedule_info(policy, fail_time);
            eligible = attempted < attempts && delay < policy.interval;
        }
        (next, eligible)
    }

    /// `ShouldClientStop()`: the group sets a non-zero stop_on_client_after.
    pub fn should_client_stop(&self, honour_legacy: bool) -> bool {
        self.job_task_group()
            .and_then(|tg| tg.stop_on_client_after(honour_legacy))
            .is_some_and(|d| !d.is_zero())
    }

    /// `WaitClientStop()`: the time of the first `lost` alloc state (else
    /// `now`) plus stop_on_client_after plus the largest kill timeout.
    pub fn wait_client_stop(&self, now: Time, honour_legacy: bool) -> Time {
        let Some(tg) = self.job_task_group() else {
            return now;
        };
        let base = self
            .alloc_states
            .iter()
            .find(|s| s.field == ALLOC_STATE_FIELD_CLIENT_STATUS && s.value == "lost")
            .map_or(now, |s| s.time);
        let base = if base.is_zero() { now } else { base };
        let kill = tg.max_kill_timeout().max(DEFAULT_KILL_TIMEOUT);
        base.add(tg.stop_on_client_after(honour_legacy).unwrap_or_default() + kill)
    }

    /// `DisconnectTimeout(now)`: now + lost_after, or `now` if it is 0.
    pub fn disconnect_timeout(&self, now: Time, honour_legacy: bool) -> Time {
        match self.job_task_group() {
            Some(tg) => now.add(tg.lost_after(honour_legacy)),
            None => now,
        }
    }

    /// `ReplaceOnDisconnect()`: the group's `replace`, true without a group.
    pub fn replace_on_disconnect(&self, honour_legacy: bool) -> bool {
        self.job_task_group()
            .is_none_or(|tg| tg.replace(honour_legacy))
    }

    /// `RanSuccessfully()`: every task finished successfully.
    pub fn ran_successfully(&self) -> bool {
        !self.task_states.is_empty() && self.task_states.values().all(TaskState::successful)
    }

    /// `ShouldMigrate()`: the ephemeral disk asks to migrate data.
    pub fn should_migrate_data(&self) -> bool {
        if self.previous_allocation.is_empty() || self.server_terminal_status() {
            return false;
        }
        self.job_task_group()
            .and_then(|tg| tg.ephemeral_disk.as_ref())
            .is_some_and(|d| d.migrate)
    }

    /// `LastUnknown()` at HEAD (#27053): the time of the earliest entry of
    /// the latest unbroken run of `unknown` client statuses.
    pub fn last_unknown(&self) -> Time {
        let mut last = Time::ZERO;
        let mut found = false;
        for s in self.alloc_states.iter().rev() {
            if s.field == ALLOC_STATE_FIELD_CLIENT_STATUS {
                if s.value == "unknown" {
                    last = s.time;
                    found = true;
                } else if found {
                    break;
                }
            }
        }
        last
    }

    /// `LastUnknown()` before #27053 (≤ 1.11.1): the latest `unknown` entry.
    pub fn last_unknown_latest(&self) -> Time {
        self.alloc_states
            .iter()
            .filter(|s| s.field == ALLOC_STATE_FIELD_CLIENT_STATUS && s.value == "unknown")
            .map(|s| s.time)
            .fold(Time::ZERO, |acc, t| {
                if acc.is_zero() || acc.before(t) {
                    t
                } else {
                    acc
                }
            })
    }

    /// `Expired(now)` at HEAD: unknown, with a last-unknown time, and
    /// lost_after has passed since then.
    pub fn expired(&self, now: Time, honour_legacy: bool) -> bool {
        self.expired_since(self.last_unknown(), now, honour_legacy)
    }

    /// `Expired` with a given last-unknown time (for the older `LastUnknown`).
    pub fn expired_since(&self, last_unknown: Time, now: Time, honour_legacy: bool) -> bool {
        self.expiry_since(last_unknown, honour_legacy)
            .is_some_and(|expiry| expiry <= now)
    }

    /// When [`Allocation::expired_since`] turns true (from that time on),
    /// or `None` when it never does.
    pub fn expiry_since(&self, last_unknown: Time, honour_legacy: bool) -> Option<Time> {
        if self.job.is_none()
            || self.client_status != ClientStatus::Unknown
            || last_unknown.is_zero()
        {
            return None;
        }
        let tg = self.job_task_group()?;
        Some(last_unknown.add(tg.lost_after(honour_legacy)))
    }

    /// `NeedsToReconnect()` at HEAD: the latest client-status alloc state
    /// (skipping empty values, #28445) is `unknown`.
    pub fn needs_to_reconnect(&self) -> bool {
        self.alloc_states
            .iter()
            .rev()
            .find(|s| s.field == ALLOC_STATE_FIELD_CLIENT_STATUS && !s.value.is_empty())
            .is_some_and(|s| s.value == "unknown")
    }

    /// `NeedsToReconnect()` before #28445: the latest client-status alloc
    /// state is `unknown`, an empty value included.
    pub fn needs_to_reconnect_with_empty(&self) -> bool {
        self.alloc_states
            .iter()
            .rev()
            .find(|s| s.field == ALLOC_STATE_FIELD_CLIENT_STATUS)
            .is_some_and(|s| s.value == "unknown")
    }

    /// The ≤ 1.4.2 reconnect marker `Reconnected()`: the time of the latest
    /// `TaskClientReconnected` task event, if any (the marker is sticky).
    pub fn last_reconnect_event(&self) -> Option<Time> {
        self.task_states
            .values()
            .flat_map(|s| s.events.iter())
            .filter(|e| e.event_type == TASK_CLIENT_RECONNECTED)
            .map(|e| e.time)
            .max()
    }

    /// `LastStartOfTask(name)`: `LastRestart` if restarted, else `StartedAt`.
    pub fn last_start_of_task(&self, task: &str) -> Time {
        match self.task_states.get(task) {
            None => Time::ZERO,
            Some(s) if s.restarts > 0 => s.last_restart,
            Some(s) => s.started_at,
        }
    }

    /// Appends a client-status alloc state at `now` (`AppendState`).
    pub fn append_client_status_state(&mut self, value: &str, now: Time) {
        self.alloc_states.push(super::alloc::AllocState {
            field: ALLOC_STATE_FIELD_CLIENT_STATUS.to_string(),
            value: value.to_string(),
            time: now,
        });
    }
}
