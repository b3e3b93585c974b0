//! Invariant checkers, run after every step (TigerBeetle's state checker
//! in miniature). A violation is reported in the trace; tests assert there
//! are none.

use super::Sim;
use crate::model::{ALLOC_STATE_FIELD_CLIENT_STATUS, ClientStatus, DesiredStatus, JobType};
use std::collections::BTreeMap;

/// Whether nothing is left to schedule right now: no ready or in-flight
/// eval, no call in flight, no client update queued.
pub fn settled(sim: &Sim) -> bool {
    let broker = &sim.server.state.broker;
    broker.ready.is_empty()
        && broker.job_active.is_empty()
        && sim.net.pending.is_empty()
        && sim
            .clients
            .values()
            .all(|c| c.pending_updates.is_empty() && !c.update_in_flight)
}

/// The invariants that hold in every state.
pub fn check(sim: &Sim) -> Vec<String> {
    let mut violations = Vec::new();
    let state = &sim.server.state;
    // An alloc reconnects only if its last AllocState was unknown: every
    // non-unknown ClientStatus entry follows an unknown one.
    for alloc in state.allocs.values() {
        let mut previous: Option<&str> = None;
        for entry in alloc
            .alloc_states
            .iter()
            .filter(|s| s.field == ALLOC_STATE_FIELD_CLIENT_STATUS)
        {
            if entry.value != "unknown" && entry.value != "lost" && previous != Some("unknown") {
                violations.push(format!(
                    "alloc {} got AllocState {} without a preceding unknown",
                    alloc.name, entry.value
                ));
            }
            previous = Some(entry.value.as_str());
        }
    }
    if settled(sim) {
        // No two running allocs of a service job share a name once the
        // reconciler has settled.
        // Keyed by (job, group, name index): cheaper than the full name.
        let mut running: BTreeMap<(&str, &str, u32), u32> = BTreeMap::new();
        for alloc in state.allocs.values() {
            let service = alloc
                .job
                .as_ref()
                .is_some_and(|j| j.job_type == JobType::Service);
            if service
                && alloc.desired_status == DesiredStatus::Run
                && alloc.client_status == ClientStatus::Running
            {
                *running
                    .entry((
                        alloc.job_id.as_str(),
                        alloc.task_group.as_str(),
                        alloc.name_index(),
                    ))
                    .or_default() += 1;
            }
        }
        for ((job, group, index), n) in running {
            if n > 1 {
                violations.push(format!(
                    "{n} running allocs share the name {job}.{group}[{index}]"
                ));
            }
        }
    }
    violations
}

/// Once the cluster is idle with every link up: each running service job
/// has exactly `count` allocs that should run and are not terminal.
pub fn check_counts(sim: &Sim) -> Vec<String> {
    let mut violations = Vec::new();
    let state = &sim.server.state;
    for (id, record) in &state.jobs {
        let job = &record.job;
        if job.stop || job.job_type != JobType::Service {
            continue;
        }
        for group in &job.task_groups {
            let live = sim
                .server
                .job_allocs(id)
                .iter()
                .filter(|a| a.task_group == group.name)
                .filter(|a| a.desired_status == DesiredStatus::Run && !a.client_terminal_status())
                .count() as u32;
            if live != group.count {
                violations.push(format!(
                    "job {id} group {} has {live} live allocs, count is {}",
                    group.name, group.count
                ));
            }
        }
    }
    violations
}
