//! Benchmark of the simulator at cluster size: 500 nodes, 5,000 allocs
//! (50 service jobs of 100, bin-packed 20 to a node), a 10-minute partition
//! of 20% of the nodes (every fifth: 1,000 allocs) and their return, with
//! lost_after shorter (the allocs are lost, the nodes go down) and longer
//! (the allocs reconnect) than the partition. The memory a session's
//! history holds is `benches/history_memory.rs`.
//!
//! One run for profiling: `SIM_ONCE=lost` (or `reconnect`) builds the
//! scenario, runs `Session::new` + `run_to_end` once in `once_run` and
//! exits, e.g. `SIM_ONCE=reconnect valgrind --tool=callgrind
//! --toggle-collect='*once_run*' target/release/deps/sim-<hash>`
//! (build it with `cargo bench -p nomad-playground --bench sim --no-run`;
//! `callgrind_annotate --inclusive=yes` then shows where the run goes).
//! It then prints the trace entries by kind (`SIM_TRACE=<file>` also
//! writes the trace text). `SIM_WALL=<runs>` times what criterion's
//! closure does, phase by phase, on a shared machine (see `wall_split`).

#[path = "support/allocator.rs"]
mod allocator;

use criterion::{Criterion, criterion_group};
use nomad_playground::scenario::duration::Dur;
use nomad_playground::sim::history::Session;
use std::collections::BTreeMap;

#[path = "support/cluster.rs"]
mod cluster;

use cluster::{LOST, RECONNECT, cluster, partition_script};

fn report_once() {
    for (label, lost_after) in [("lost", LOST), ("reconnect", RECONNECT)] {
        report_run(label, lost_after);
    }
}

fn report_run(label: &str, lost_after: Dur) {
    let scenario = cluster(partition_script(), 50, lost_after);
    // The bench measures wall time; the core never does.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
    let mut session = Session::new(scenario, None).expect("session");
    session.run_to_end();
    let elapsed = started.elapsed();
    let sim = session.sim();
    let allocs = sim.server.state.allocs.len();
    let evals = sim.server.state.evals.len();
    let mut by_trigger: BTreeMap<(String, String), usize> = BTreeMap::new();
    for record in sim.server.state.evals.values() {
        *by_trigger
            .entry((
                record.eval.triggered_by.clone(),
                record.eval.status.as_str().to_string(),
            ))
            .or_default() += 1;
    }
    eprintln!("  evals by trigger and status: {by_trigger:?}");
    eprintln!(
        "partition run ({label}, lost_after {lost_after}): {elapsed:?}, {} events, {allocs} allocs, {evals} evals, {} trace entries",
        sim.events_handled,
        session.trace().len()
    );
}

/// One whole run (session set-up and `run_to_end`), in its own function
/// so callgrind can count just it (`--toggle-collect='*once_run*'`).
#[inline(never)]
fn once_run(scenario: nomad_playground::scenario::format::Scenario) -> Session {
    let mut session = Session::new(scenario, None).expect("session");
    session.run_to_end();
    session
}

/// What a `SIM_ONCE` run did: trace entries by kind (and plan rejections
/// by reason), so a profile can be read against the work done; with
/// `SIM_TRACE=<file>` also the whole trace text.
fn summarise(session: &Session) {
    let trace = session.trace();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for entry in &trace {
        let (_, kind, detail) = entry.event.columns();
        let key = if kind == "plan-rejected" {
            format!("{kind}: {}", detail.split_once(": ").map_or("", |(_, r)| r))
        } else {
            kind.to_string()
        };
        *kinds.entry(key).or_default() += 1;
    }
    let sim = session.sim();
    eprintln!(
        "{} events, {} evals, {} trace entries",
        sim.events_handled,
        sim.server.state.evals.len(),
        trace.len()
    );
    for (kind, n) in kinds {
        eprintln!("  {n:>8} {kind}");
    }
    if let Some(path) = std::env::var_os("SIM_TRACE") {
        std::fs::write(path, nomad_playground::sim::trace::trace_text(&trace)).expect("trace file");
    }
}

fn bench(c: &mut Criterion) {
    report_once();
    let mut group = c.benchmark_group("sim");
    group.sample_size(10);
    group.bench_function("partition_500_nodes_5000_allocs_lost", |b| {
        b.iter(|| {
            let mut session =
                Session::new(cluster(partition_script(), 50, LOST), None).expect("session");
            session.run_to_end();
            session.sim().tick
        })
    });
    group.bench_function("partition_500_nodes_5000_allocs_reconnect", |b| {
        b.iter(|| {
            let mut session =
                Session::new(cluster(partition_script(), 50, RECONNECT), None).expect("session");
            session.run_to_end();
            session.sim().tick
        })
    });
    group.finish();
    bench_view(c);
}

/// The UI bench's cluster (`tests/e2e/bench/render.js`): 200 nodes, one job
/// of ten groups of 200 allocs, a 5s advance then 120 advances of 1s.
fn ui_scenario() -> String {
    let nodes: Vec<String> = (0..200)
        .map(|i| format!(r#"{{"id":"node-{i:03}"}}"#))
        .collect();
    let groups: Vec<String> = (0..10)
        .map(|g| format!(r#"{{"name":"g{g}","count":200}}"#))
        .collect();
    let mut script = vec![r#"{"action":"advance","by":"5s"}"#.to_string()];
    script.extend((0..120).map(|_| r#"{"action":"advance","by":"1s"}"#.to_string()));
    format!(
        r#"{{"version":1,"name":"bench-200-nodes","nodes":[{}],"jobs":[{{"id":"bench","groups":[{}]}}],"script":[{}]}}"#,
        nodes.join(","),
        groups.join(","),
        script.join(",")
    )
}

/// One UI step at 200 nodes and 2,000 allocs: the core's step plus the
/// view (what the browser bench measures before rendering), and the view
/// alone, built from scratch and with the alloc views of the step before.
fn bench_view(c: &mut Criterion) {
    use nomad_playground::playground::{
        Command, Playground, ViewCache, build_view, build_view_cached,
    };
    let json = ui_scenario();
    let mut playground = Playground::load(&json, None).expect("scenario");
    playground.apply(Command::Step);
    let mut group = c.benchmark_group("ui");
    group.sample_size(20);
    group.bench_function("step_and_view_200_nodes_2000_allocs", |b| {
        b.iter_batched(
            || playground.clone(),
            |mut playground| {
                playground.apply(Command::Step);
                playground
            },
            criterion::BatchSize::LargeInput,
        )
    });
    let session = playground.session().clone();
    group.bench_function("build_view_200_nodes_2000_allocs", |b| {
        b.iter(|| build_view(&session))
    });
    let mut cache = ViewCache::default();
    build_view_cached(&session, &mut cache);
    group.bench_function("build_view_cached_200_nodes_2000_allocs", |b| {
        b.iter(|| build_view_cached(&session, &mut cache))
    });
    group.finish();
}

criterion_group!(benches, bench);

/// The CPU time this thread has run, in nanoseconds (Linux's
/// `/proc/thread-self/schedstat`, which the kernel brings up to date at
/// its timer tick: good to a few ms; zero where it is missing). On a
/// shared machine a thread's CPU time is what its own work took: waiting
/// for a core is not counted (cache misses and page zeroing are).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `SIM_WALL=<runs>`: what criterion's timed closure does (`Session::new`,
/// `run_to_end`, dropping the session with its whole history), `runs`
/// times for each run, in one process as criterion runs it; prints the
/// best CPU time of the run and of the drop, and the best CPU and wall
/// time of the whole (the minimum stands for an idle machine: sharing one
/// only adds time). `SIM_CHECKPOINT_EVERY` overrides the checkpoint
/// interval (50), so that the checkpoints' share shows as a difference.
fn wall_split(runs: usize) {
    let every = std::env::var("SIM_CHECKPOINT_EVERY")
        .ok()
        .and_then(|every| every.parse().ok())
        .unwrap_or(50);
    let ms = |ns: u64| ns as f64 / 1e6;
    for (label, lost_after) in [("lost", LOST), ("reconnect", RECONNECT)] {
        let mut best = [u64::MAX; 4];
        for _ in 0..runs {
            let scenario = cluster(partition_script(), every, lost_after);
            // The bench measures wall time; the core never does.
            #[allow(clippy::disallowed_methods)]
            let started = std::time::Instant::now();
            let cpu_started = cpu_ns();
            let mut session = Session::new(scenario, None).expect("session");
            session.run_to_end();
            let cpu_ran = cpu_ns();
            drop(std::hint::black_box(session));
            let cpu_dropped = cpu_ns();
            let wall = started.elapsed().as_nanos() as u64;
            let times = [
                cpu_ran - cpu_started,
                cpu_dropped - cpu_ran,
                cpu_dropped - cpu_started,
                wall,
            ];
            for (best, time) in best.iter_mut().zip(times) {
                *best = (*best).min(time);
            }
        }
        let [run, dropped, cpu, wall] = best.map(ms);
        eprintln!(
            "{label} (best of {runs}, checkpoint_every {every}): CPU: new + run {run:.0} ms, \
             drop {dropped:.0} ms, whole {cpu:.0} ms; wall: whole {wall:.0} ms"
        );
    }
}

fn main() {
    allocator::configure();
    if let Some(runs) = std::env::var("SIM_WALL")
        .ok()
        .and_then(|runs| runs.parse().ok())
    {
        wall_split(runs);
        return;
    }
    if let Some(label) = std::env::var_os("SIM_ONCE") {
        let lost_after = match label.to_str() {
            Some("lost") => LOST,
            Some("reconnect") => RECONNECT,
            _ => {
                eprintln!("SIM_ONCE must be lost or reconnect");
                std::process::exit(2);
            }
        };
        let scenario = cluster(partition_script(), 50, lost_after);
        let session = std::hint::black_box(once_run(scenario));
        summarise(&session);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
