//! Invariant checkers, run after every step (TigerBeetle's state checker
//! in miniature). A violation is reported in the trace; tests assert there
//! are none.

use super::Sim;
use crate::model::{ALLOC_STATE_FIELD_CLIENT_STATUS, ClientStatus, DesiredStatus, JobType};

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

/// The last [`check`] of a sim: its result and the state it saw, as the
/// server's alloc write count and whether the cluster was settled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckMemo {
    key: Option<(u64, bool)>,
    violations: Vec<String>,
}

/// [`check`], skipped when neither the allocs (every write bumps the
/// server's write count) nor settledness changed since the last call. The
/// memo lives in the sim, so a sim restored from a checkpoint carries the
/// memo of its own past.
pub fn check_cached(sim: &mut Sim) -> Vec<String> {
    let key = (sim.server.state.alloc_writes, settled(sim));
    if sim.check_memo.key != Some(key) {
        sim.check_memo = CheckMemo {
            key: Some(key),
            violations: check(sim),
        };
    }
    sim.check_memo.violations.clone()
}

/// The invariants that hold in every state.
pub fn check(sim: &Sim) -> Vec<String> {
    let mut violations = Vec::new();
    let state = &sim.server.state;
    // An alloc reconnects only if its last AllocState was unknown: every
    // non-unknown ClientStatus entry follows an unknown one.
    for alloc in state.allocs.values() {
        if alloc.alloc_states.is_empty() {
            continue;
        }
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
        // reconciler has settled. One job at a time (in job ID order), its
        // running allocs' (group, name index) sorted: equal neighbours
        // share a name.
        let mut running: Vec<(&str, u32)> = Vec::new();
        // The name indexes seen of a job's one group, as bits.
        let mut seen: Vec<u64> = Vec::new();
        for (job, allocs) in &state.allocs_by_job {
            running.clear();
            for alloc in allocs.values() {
                let service = alloc
                    .job
                    .as_ref()
                    .is_some_and(|j| j.job_type == JobType::Service);
                // A canary takes the name of an alloc it will replace once
                // promoted: both run meanwhile, as in Nomad.
                if service
                    && alloc.desired_status == DesiredStatus::Run
                    && alloc.client_status == ClientStatus::Running
                    && !alloc.is_canary()
                {
                    running.push((alloc.task_group.as_str(), alloc.name_index()));
                }
            }
            // A job whose running allocs are of one group and have distinct
            // indexes (as a settled job's are) needs no sort: a bit per
            // index tells (names past a bound are left to the sort).
            if let Some(&(first, _)) = running.first()
                && running
                    .iter()
                    .all(|&(group, index)| group == first && index < 1 << 16)
            {
                let top = running.iter().map(|&(_, index)| index).max().unwrap_or(0);
                seen.clear();
                seen.resize(top as usize / 64 + 1, 0);
                let distinct = running.iter().all(|&(_, index)| {
                    let (word, bit) = (index as usize / 64, 1u64 << (index % 64));
                    let new = seen[word] & bit == 0;
                    seen[word] |= bit;
                    new
                });
                if distinct {
                    continue;
                }
            }
            running.sort_unstable();
            for same in running.chunk_by(|a, b| a == b) {
                if same.len() > 1 {
                    let (group, index) = same[0];
                    violations.push(format!(
                        "{} running allocs share the name {job}.{group}[{index}]",
                        same.len()
                    ));
                }
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
