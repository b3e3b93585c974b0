//! Which alloc to keep when a disconnected alloc reconnects and has a
//! replacement: the group's `disconnect.reconcile` strategy. Follows Nomad's
//! `scheduler/reconciler/reconnecting_picker.go`; `now` comes from the caller
//! where Nomad reads the clock.

use crate::model::{Allocation, ClientStatus, ReconcileStrategy, TaskGroup, Time};
use serde::{Deserialize, Serialize};

/// Who the picker keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// The reconnecting original.
    Original,
    /// The replacement.
    Replacement,
}

/// The picker: the real one, or a fixed answer (as Nomad's tests mock it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Picker {
    /// Nomad's `reconnectingPicker`.
    #[default]
    Strategy,
    /// Always this answer.
    Fixed(Pick),
}

impl Picker {
    /// Picks between `original` and `replacement` under `strategy`
    /// (`pickReconnectingAlloc`).
    pub fn pick(
        &self,
        strategy: &ReconcileStrategy,
        original: &Allocation,
        replacement: &Allocation,
        now: Time,
    ) -> Pick {
        match self {
            Picker::Fixed(p) => *p,
            Picker::Strategy => pick_reconnecting_alloc(strategy, original, replacement, now),
        }
    }
}

/// Nomad's `pickReconnectingAlloc`.
pub fn pick_reconnecting_alloc(
    strategy: &ReconcileStrategy,
    original: &Allocation,
    replacement: &Allocation,
    now: Time,
) -> Pick {
    if replacement.job_version() > original.job_version()
        || replacement.job_create_index() > original.job_create_index()
    {
        return Pick::Replacement;
    }
    match strategy {
        ReconcileStrategy::KeepOriginal => Pick::Original,
        ReconcileStrategy::KeepReplacement => Pick::Replacement,
        ReconcileStrategy::LongestRunning => pick_longest_running(original, replacement, now),
        _ => pick_best_score(original, replacement),
    }
}

/// `best_score`: the replacement wins only with a strictly better node score
/// (or a score where the original has none), and only if it runs or the
/// original does not.
pub fn pick_best_score(original: &Allocation, replacement: &Allocation) -> Pick {
    let better = match (original.node_score, replacement.node_score) {
        (None, Some(_)) => true,
        (Some(o), Some(r)) => r > o,
        _ => false,
    };
    let replacement_running = replacement.client_status == ClientStatus::Running;
    let original_not_running = original.client_status != ClientStatus::Running;
    if better && (replacement_running || original_not_running) {
        Pick::Replacement
    } else {
        Pick::Original
    }
}

/// `longest_running`: the alloc whose leader (else oldest) task started
/// first; ties go to the replacement; neither started: `best_score`.
pub fn pick_longest_running(original: &Allocation, replacement: &Allocation, now: Time) -> Pick {
    let tg = original.job_task_group();
    let o = start_of_leader_or_oldest_task(original, tg, now);
    let r = start_of_leader_or_oldest_task(replacement, tg, now);
    match (o.is_zero(), r.is_zero()) {
        (true, false) => Pick::Replacement,
        (false, true) => Pick::Original,
        (true, true) => pick_best_score(original, replacement),
        (false, false) if o.before(r) => Pick::Original,
        _ => Pick::Replacement,
    }
}

/// The leader task's last start, else the earliest last start among the
/// tasks (`startOfLeaderOrOldestTaskInMain`); zero when none started.
fn start_of_leader_or_oldest_task(alloc: &Allocation, tg: Option<&TaskGroup>, now: Time) -> Time {
    let Some(tg) = tg.filter(|tg| !tg.tasks.is_empty()) else {
        return Time::ZERO;
    };
    let mut oldest = now;
    for task in &tg.tasks {
        let start = alloc.last_start_of_task(&task.name);
        if task.leader {
            return start;
        }
        if !start.is_zero() && start.before(oldest) {
            oldest = start;
        }
    }
    if oldest == now { Time::ZERO } else { oldest }
}
