//! The memory a session's history holds: 1,000 steps over the bench
//! cluster (500 nodes, 5,000 allocs, a 10-minute partition of 20% of the
//! nodes and its healing), counted byte for byte by a counting global
//! allocator (heap bytes allocated and not yet freed), not by the resident
//! set. Fails if the session holds more than [`BUDGET`]. Also prints what
//! one copy of each part of the world would cost (the bytes a clone
//! allocates: parts shared through `Rc` cost only their pointers).
//!
//! Run with `cargo bench --bench history_memory`.

#[path = "support/cluster.rs"]
mod cluster;

use nomad_playground::sim::Sim;
use nomad_playground::sim::history::Session;
use nomad_playground::sim::trace::{CallDetail, TraceEntry, TraceEvent};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use std::alloc::System;
use std::collections::BTreeMap;
use std::rc::Rc;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The most a 1,000-step session at this size may hold: the issue's
/// "64 MB", in decimal megabytes (64,000,000 bytes, not 64 MiB).
const BUDGET: usize = 64_000_000;

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
    take("trace_texts", made_bytes_dropped(&mut sim.server.texts));
    take("check_memo", made_bytes_dropped(&mut sim.check_memo));
    let before = live_bytes();
    drop(sim);
    take("the rest", before.saturating_sub(live_bytes()));
    let total: usize = parts.iter().map(|(_, bytes)| bytes).sum();
    let listed: Vec<String> = parts
        .iter()
        .filter(|(_, bytes)| *bytes >= 20_000)
        .map(|(name, bytes)| format!("{name} {:.2}", *bytes as f64 / 1e6))
        .collect();
    println!("  {title}: {} ({})", mb(total), listed.join(", "));
}

/// The bytes freed by replacing `part` with its default.
fn made_bytes_dropped<T: Default>(part: &mut T) -> usize {
    let before = live_bytes();
    drop(std::mem::take(part));
    before.saturating_sub(live_bytes())
}

/// What the clients' runners hold of their allocs: how many runners, and
/// what one copy of the parts of the alloc versions they keep costs.
fn print_runner_allocs(sim: &Sim) {
    let runners: Vec<_> = sim
        .clients
        .values()
        .flat_map(|client| client.runners.values())
        .collect();
    let views = made_bytes(|| {
        runners
            .iter()
            .map(|runner| (*runner.alloc).clone())
            .collect::<Vec<_>>()
    });
    println!(
        "  runners {}: the alloc versions they keep {} ({} bytes a runner's alloc, {} an Allocation)",
        runners.len(),
        mb(views),
        std::mem::size_of::<nomad_playground::client::runner::RunnerAlloc>(),
        std::mem::size_of::<nomad_playground::model::Allocation>()
    );
}

/// What the clients hold, by part: the runner maps (keys and runner
/// slots, sharing what runners share), the runners' own heap parts, the
/// task states (one copy each) and the updates waiting to be sent.
fn print_client_parts(sim: &Sim) {
    let maps = made_bytes(|| {
        sim.clients
            .values()
            .map(|client| (*client.runners).clone())
            .collect::<Vec<_>>()
    });
    let runner_heap = made_bytes(|| {
        sim.clients
            .values()
            .flat_map(|client| client.runners.values())
            .map(|runner| {
                (
                    runner.client_description.clone(),
                    runner.watches.clone(),
                    runner.health_watch.clone(),
                )
            })
            .collect::<Vec<_>>()
    });
    let tasks = made_bytes(|| {
        sim.clients
            .values()
            .flat_map(|client| client.runners.values())
            .map(|runner| {
                runner
                    .task_states
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    });
    let (mut task_count, mut events, mut shared) = (0, 0, 0);
    for runner in sim
        .clients
        .values()
        .flat_map(|client| client.runners.values())
    {
        task_count += runner.task_states.len();
        events += runner
            .task_states
            .values()
            .map(|state| state.events.len())
            .sum::<usize>();
        let current = sim.server.state.allocs.get(runner.alloc.id.as_str());
        shared += usize::from(current.is_some_and(|alloc| alloc.task_states == runner.task_states));
    }
    println!(
        "  clients' task states: {task_count} tasks, {events} events, {shared} runners' states equal to the server's"
    );
    let pending = made_bytes(|| {
        sim.clients
            .values()
            .map(|client| client.pending_updates.clone())
            .collect::<Vec<_>>()
    });
    println!(
        "  clients: runner maps {} ({} bytes a runner), runners' own heap {}, task states {}, pending updates {}",
        mb(maps),
        std::mem::size_of::<nomad_playground::client::runner::AllocRunner>(),
        mb(runner_heap),
        mb(tasks),
        mb(pending)
    );
}

/// What the eval records hold: the `Evaluation`s' slots and their
/// strings, and the outcomes.
fn print_eval_parts(sim: &Sim) {
    let evals = &sim.server.state.evals;
    let slots = evals.len() * std::mem::size_of::<nomad_playground::server::EvalRecord>();
    let outcomes = made_bytes(|| {
        evals
            .values()
            .map(|record| record.outcome.clone())
            .collect::<Vec<_>>()
    });
    let strings = made_bytes(|| {
        evals
            .values()
            .map(|record| {
                let e = &record.eval;
                [
                    e.id.clone(),
                    e.namespace.clone(),
                    e.eval_type.clone(),
                    e.triggered_by.clone(),
                    e.job_id.clone(),
                    e.node_id.clone(),
                    e.deployment_id.clone(),
                    e.status_description.clone(),
                    e.previous_eval.clone(),
                    e.next_eval.clone(),
                    e.blocked_eval.clone(),
                ]
            })
            .collect::<Vec<_>>()
    }) - evals.len() * 11 * std::mem::size_of::<String>();
    let mut set = [0usize; 8];
    for record in evals.values() {
        let e = &record.eval;
        for (count, present) in set.iter_mut().zip([
            !e.node_id.is_empty(),
            !e.deployment_id.is_empty(),
            !e.status_description.is_empty(),
            !e.wait_until.is_zero(),
            !e.previous_eval.is_empty(),
            !e.next_eval.is_empty(),
            !e.blocked_eval.is_empty(),
            record.outcome.is_some(),
        ]) {
            *count += usize::from(present);
        }
    }
    println!(
        "  evals with node {}, deployment {}, description {}, wait {}, previous {}, next {}, blocked {}, outcome {}",
        set[0], set[1], set[2], set[3], set[4], set[5], set[6], set[7]
    );
    println!(
        "  eval records: {} evals, slots {} ({} bytes a record, {} an Evaluation), strings {}, outcomes {}",
        evals.len(),
        mb(slots),
        std::mem::size_of::<nomad_playground::server::EvalRecord>(),
        std::mem::size_of::<nomad_playground::model::Evaluation>(),
        mb(strings),
        mb(outcomes)
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

/// How much of the trace's free texts repeat: per kind of text, the bytes
/// all copies take and the bytes one copy of each distinct text would.
fn print_text_repeats(session: &Session) {
    let mut kinds: BTreeMap<&'static str, (usize, usize, BTreeMap<String, ()>)> = BTreeMap::new();
    let mut add = |kind: &'static str, text: &str| {
        let entry = kinds.entry(kind).or_default();
        entry.0 += 1;
        entry.1 += text.len();
        entry.2.insert(text.to_string(), ());
    };
    for record in session.records() {
        for entry in &record.entries {
            match &entry.event {
                TraceEvent::EvalProcessed(processed) => {
                    for line in processed.plan.iter() {
                        add("plan line", line);
                    }
                    for reason in &processed.reasons {
                        add("reason set", reason.set);
                        add("reason why", reason.reason);
                    }
                    add("processed eval id", &processed.eval);
                }
                TraceEvent::EvalCreated(created) => add("created eval id", &created.eval),
                TraceEvent::EvalState { eval, .. } => add("eval-state eval id", eval),
                TraceEvent::HeartbeatMissed(missed) => {
                    add("heartbeat-missed reason", &missed.reason)
                }
                TraceEvent::CallSent { detail, .. } => add("call-sent detail", detail),
                // A heartbeat's words are numbers, not a text.
                TraceEvent::CallHandled {
                    detail: CallDetail::Text(detail),
                    ..
                } => add("call-handled detail", detail),
                TraceEvent::Reply {
                    detail: CallDetail::Text(detail),
                    ..
                } => add("reply detail", detail),
                TraceEvent::Client { detail, .. } => add("client detail", detail),
                TraceEvent::AllocChanged(change) => add("alloc detail", &change.detail),
                _ => {}
            }
        }
    }
    println!("  trace texts (copies, their bytes; distinct texts, their bytes):");
    for (kind, (count, bytes, distinct)) in kinds {
        let distinct_bytes: usize = distinct.keys().map(String::len).sum();
        println!(
            "    {kind:<24} {count:>8} {:>10}; {:>8} {:>10}",
            mb(bytes),
            distinct.len(),
            mb(distinct_bytes)
        );
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
        print_client_parts(session.sim());
        print_eval_parts(session.sim());
        print_processed(&session);
        print_text_repeats(&session);
        if held > BUDGET {
            over.push(format!("{label}: {} > {}", mb(held), mb(BUDGET)));
        }
        // What each checkpoint holds that the later ones do not share, and
        // then what the live world holds alone (the history dropped first).
        let checkpoints: Vec<(usize, Rc<Sim>)> = session
            .checkpoints()
            .map(|(step, sim)| (step, Rc::clone(sim)))
            .collect();
        let live = session.sim().clone();
        drop(session);
        println!("  owned by each checkpoint (not shared with later ones or the live world):");
        for (step, checkpoint) in checkpoints {
            match Rc::try_unwrap(checkpoint) {
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
