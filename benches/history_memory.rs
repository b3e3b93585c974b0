//! The memory a session's history holds: 1,000 steps over the bench
//! cluster (500 nodes, 5,000 allocs, a 10-minute partition of 20% of the
//! nodes and its healing), counted byte for byte by a counting global
//! allocator (heap bytes allocated and not yet freed), not by the resident
//! set. Fails if the session holds more than [`BUDGET`]. Also prints what
//! one copy of each part of the world would cost (the bytes a clone
//! allocates: parts shared through `Arc` cost only their pointers).
//!
//! Run with `cargo bench --bench history_memory`.

#[path = "support/cluster.rs"]
mod cluster;

use nomad_playground::sim::Sim;
use nomad_playground::sim::history::Session;
use nomad_playground::sim::trace::{TraceEntry, TraceEvent};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use std::alloc::System;
use std::collections::BTreeMap;
use std::sync::Arc;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The most a 1,000-step session at this size may hold.
const BUDGET: usize = 64 * 1024 * 1024;

/// Heap bytes allocated and not freed so far.
fn live_bytes() -> usize {
    let stats = GLOBAL.stats();
    stats
        .bytes_allocated
        .saturating_sub(stats.bytes_deallocated)
}

/// The heap bytes `make` allocates for what it returns.
fn made_bytes<T>(make: impl FnOnce() -> T) -> usize {
    let before = live_bytes();
    let made = make();
    let bytes = live_bytes().saturating_sub(before);
    drop(made);
    bytes
}

/// The heap bytes a clone of `value` allocates.
fn clone_bytes<T: Clone>(value: &T) -> usize {
    made_bytes(|| value.clone())
}

fn mb(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The trace records by entry kind: how many, and the bytes their slots
/// and their heap parts take.
fn print_trace_kinds(session: &Session) {
    let slot = std::mem::size_of::<TraceEntry>();
    let mut kinds: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    for record in session.records() {
        for entry in &record.entries {
            let heap = clone_bytes(entry);
            let kind = kinds.entry(entry.event.columns().1).or_default();
            kind.0 += 1;
            kind.1 += heap;
        }
    }
    println!("  trace entries by kind ({slot} bytes a slot):");
    for (kind, (count, heap)) in kinds {
        println!(
            "    {kind:<18} {count:>8} entries {:>10} in slots {:>10} on the heap",
            mb(count * slot),
            mb(heap)
        );
    }
}

/// The bytes each part of `sim` frees when dropped while it owns it
/// alone, one part after another (parts shared with a world still alive
/// free nothing): what the world holds that no other world shares.
fn print_owned_parts(title: &str, mut sim: Sim) {
    let mut parts: Vec<(&str, usize)> = Vec::new();
    let mut take = |name: &'static str, bytes: usize| parts.push((name, bytes));
    let state = &mut sim.server.state;
    take("allocs", made_bytes_dropped(&mut state.allocs));
    take(
        "allocs_by_node",
        made_bytes_dropped(&mut state.allocs_by_node),
    );
    take(
        "allocs_by_job",
        made_bytes_dropped(&mut state.allocs_by_job),
    );
    take(
        "allocs_by_name",
        made_bytes_dropped(&mut state.allocs_by_name),
    );
    take("evals", made_bytes_dropped(&mut state.evals));
    take("eval_order", made_bytes_dropped(&mut state.eval_order));
    take("nodes", made_bytes_dropped(&mut state.nodes));
    take("jobs", made_bytes_dropped(&mut state.jobs));
    take("broker", made_bytes_dropped(&mut state.broker));
    take(
        "heartbeat_timers",
        made_bytes_dropped(&mut state.heartbeat_timers),
    );
    take("node_usage", made_bytes_dropped(&mut state.node_usage));
    take("group_counts", made_bytes_dropped(&mut state.group_counts));
    take("clients", made_bytes_dropped(&mut sim.clients));
    take("queue", made_bytes_dropped(&mut sim.queue));
    take("net", made_bytes_dropped(&mut sim.net));
    let before = live_bytes();
    drop(sim);
    take("the rest", before.saturating_sub(live_bytes()));
    let total: usize = parts.iter().map(|(_, bytes)| bytes).sum();
    let listed: Vec<String> = parts
        .iter()
        .filter(|(_, bytes)| *bytes >= 50_000)
        .map(|(name, bytes)| format!("{name} {}", mb(*bytes)))
        .collect();
    println!("  {title}: {} ({})", mb(total), listed.join(", "));
}

/// The bytes freed by replacing `part` with its default.
fn made_bytes_dropped<T: Default>(part: &mut T) -> usize {
    let before = live_bytes();
    drop(std::mem::take(part));
    before.saturating_sub(live_bytes())
}

/// What the clients' runners hold of their allocs: how many runners, how
/// many hold a version the server no longer has, and what one copy of
/// those stale versions costs, whole and by part.
fn print_runner_allocs(sim: &Sim) {
    let state = &sim.server.state;
    let mut runners = 0;
    let mut stale = Vec::new();
    for client in sim.clients.values() {
        for (id, runner) in client.runners.iter() {
            runners += 1;
            let current = state.allocs.get(id.as_str());
            if !current.is_some_and(|alloc| Arc::ptr_eq(alloc, &runner.alloc)) {
                stale.push(&runner.alloc);
            }
        }
    }
    let whole = made_bytes(|| stale.iter().map(|a| (***a).clone()).collect::<Vec<_>>());
    let tasks = made_bytes(|| {
        stale
            .iter()
            .map(|a| a.task_states.clone())
            .collect::<Vec<_>>()
    });
    let states = made_bytes(|| {
        stale
            .iter()
            .map(|a| a.alloc_states.clone())
            .collect::<Vec<_>>()
    });
    println!(
        "  runners {runners}, {} holding a version the server replaced: {} ({} task states, {} alloc states; {} bytes an Allocation)",
        stale.len(),
        mb(whole),
        mb(tasks),
        mb(states),
        std::mem::size_of::<nomad_playground::model::Allocation>()
    );
}

/// What the processed evals' entries hold on the heap: their reasons and
/// their plan lines, with a sample of each.
fn print_processed(session: &Session) {
    let (mut evals, mut reasons, mut lines) = (0, 0, 0);
    let (mut reason_bytes, mut plan_bytes) = (0, 0);
    let mut sample = None;
    for record in session.records() {
        for entry in &record.entries {
            if let TraceEvent::EvalProcessed(processed) = &entry.event {
                evals += 1;
                reasons += processed.reasons.len();
                lines += processed.plan.len();
                reason_bytes += clone_bytes(&processed.reasons);
                plan_bytes += clone_bytes(&processed.plan);
                if sample.is_none() && processed.reasons.len() > 2 && processed.plan.len() > 1 {
                    sample = Some(processed.clone());
                }
            }
        }
    }
    println!(
        "  {evals} processed evals: {reasons} reasons {}, {lines} plan lines {}",
        mb(reason_bytes),
        mb(plan_bytes)
    );
    if let Some(processed) = sample {
        for reason in processed.reasons.iter().take(3) {
            println!("    reason: {reason:?}");
        }
        for line in processed.plan.iter().take(3) {
            println!("    plan: {line}");
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is parsed.
    let profiles = [("lost", cluster::LOST), ("reconnect", cluster::RECONNECT)];
    let mut over = Vec::new();
    for (label, lost_after) in profiles {
        let scenario = cluster::cluster(cluster::thousand_steps(), 50, lost_after);
        let before = live_bytes();
        let mut session = Session::new(scenario, None).expect("session");
        session.run_to_end();
        let held = live_bytes().saturating_sub(before);
        let sim = session.sim();
        let state = &sim.server.state;
        println!(
            "history of {} steps (allocs {label}): {} held by the session ({} bytes, {} checkpoints, {} allocs, {} evals)",
            session.cursor(),
            mb(held),
            held,
            session.checkpoint_count(),
            state.allocs.len(),
            state.evals.len(),
        );
        let parts = [
            ("world (one Sim clone)", clone_bytes(sim)),
            ("  server.state.allocs", clone_bytes(&state.allocs)),
            (
                "  server.state.allocs_by_node",
                clone_bytes(&state.allocs_by_node),
            ),
            (
                "  server.state.allocs_by_job",
                clone_bytes(&state.allocs_by_job),
            ),
            (
                "  server.state.allocs_by_name",
                clone_bytes(&state.allocs_by_name),
            ),
            (
                "    the allocs themselves",
                made_bytes(|| {
                    state
                        .allocs
                        .values()
                        .map(|alloc| (**alloc).clone())
                        .collect::<Vec<_>>()
                }),
            ),
            ("  server.state.evals", clone_bytes(&state.evals)),
            (
                "    the eval records themselves",
                made_bytes(|| {
                    state
                        .evals
                        .values()
                        .map(|record| (**record).clone())
                        .collect::<Vec<_>>()
                }),
            ),
            ("  server.state.eval_order", clone_bytes(&state.eval_order)),
            ("  server.state.nodes", clone_bytes(&state.nodes)),
            ("  server.state.jobs", clone_bytes(&state.jobs)),
            ("  server.state.broker", clone_bytes(&state.broker)),
            (
                "  server.state.heartbeat_timers",
                clone_bytes(&state.heartbeat_timers),
            ),
            ("  server.state.node_usage", clone_bytes(&state.node_usage)),
            (
                "  server.state.group_counts",
                clone_bytes(&state.group_counts),
            ),
            ("  clients", clone_bytes(&sim.clients)),
            ("  queue", clone_bytes(&sim.queue)),
            ("  net", clone_bytes(&sim.net)),
            ("trace records", made_bytes(|| session.records().to_vec())),
        ];
        for (name, bytes) in parts {
            println!("  {name:<34} {:>10}", mb(bytes));
        }
        print_trace_kinds(&session);
        print_runner_allocs(session.sim());
        print_processed(&session);
        if held > BUDGET {
            over.push(format!("{label}: {} > {}", mb(held), mb(BUDGET)));
        }
        // What each checkpoint holds that the later ones do not share, and
        // then what the live world holds alone (the history dropped first).
        let checkpoints: Vec<(usize, Arc<Sim>)> = session
            .checkpoints()
            .map(|(step, sim)| (step, Arc::clone(sim)))
            .collect();
        let live = session.sim().clone();
        drop(session);
        println!("  owned by each checkpoint (not shared with later ones or the live world):");
        for (step, checkpoint) in checkpoints {
            match Arc::try_unwrap(checkpoint) {
                Ok(sim) => print_owned_parts(&format!("  step {step:>4}"), sim),
                Err(_) => println!("    step {step}: still shared"),
            }
        }
        print_owned_parts("live world", live);
        // The same run with only the step-0 checkpoint: what the world and
        // the trace hold without the history's checkpoints.
        let scenario = cluster::cluster(cluster::thousand_steps(), 100_000, lost_after);
        let before = live_bytes();
        let mut session = Session::new(scenario, None).expect("session");
        session.run_to_end();
        let bare = live_bytes().saturating_sub(before);
        println!(
            "  without checkpoints after step 0: {} ({} of it the trace records)",
            mb(bare),
            mb(made_bytes(|| session.records().to_vec()))
        );
    }
    assert!(over.is_empty(), "history over budget: {over:?}");
}
