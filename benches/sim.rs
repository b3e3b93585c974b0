//! Benchmark of the simulator at cluster size: 500 nodes, 5,000 allocs
//! (50 service jobs of 100, bin-packed 20 to a node), a 10-minute partition
//! of 20% of the nodes (every fifth: 1,000 allocs) and their return, with
//! lost_after shorter (the allocs are lost, the nodes go down) and longer
//! (the allocs reconnect) than the partition. Also prints the memory held by a session's history of
//! 1,000 steps at that size (growth of the resident set, Linux only).

use criterion::{Criterion, criterion_group, criterion_main};
use nomad_playground::scenario::duration::Dur;
use nomad_playground::scenario::format::{
    Action, DisconnectSpec, GroupSpec, JobSpec, NodeSpec, Scenario, Settings,
};
use nomad_playground::sim::history::Session;

/// Resident memory of this process in bytes (Linux), 0 elsewhere.
fn rss_bytes() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<i64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

const NODES: usize = 500;
const JOBS: usize = 50;
const COUNT: u32 = 100;
/// Every fifth node is partitioned (20%, half of them running allocs).
const PARTITIONED: usize = NODES / 5;

fn partitioned(k: usize) -> String {
    node_id(k * 5)
}

fn node_id(i: usize) -> String {
    format!("node-{i:03}")
}

fn cluster(script: Vec<Action>, checkpoint_every: usize, lost_after: Dur) -> Scenario {
    Scenario {
        version: 1,
        name: "bench".to_string(),
        description: None,
        source: None,
        profile: Some("latest".to_string()),
        profiles: None,
        seed: Some(42),
        settings: Some(Settings {
            checkpoint_every: Some(checkpoint_every),
            ..Settings::default()
        }),
        server: None,
        nodes: (0..NODES)
            .map(|i| NodeSpec {
                id: node_id(i),
                name: None,
                datacenter: None,
                node_pool: None,
                class: None,
                // Room for 20 allocs: bin packing fills 250 nodes, the rest
                // take the replacements.
                cpu: Some(2000),
                memory_mb: Some(4096),
                registered: None,
                agent: None,
            })
            .collect(),
        jobs: (0..JOBS)
            .map(|j| JobSpec {
                id: format!("job-{j:02}"),
                job_type: None,
                priority: None,
                datacenters: None,
                node_pool: None,
                groups: vec![GroupSpec {
                    name: "app".to_string(),
                    count: Some(COUNT),
                    cpu: Some(100),
                    memory_mb: Some(128),
                    nodes: None,
                    max_client_disconnect: None,
                    stop_after_client_disconnect: None,
                    prevent_reschedule_on_lost: None,
                    disconnect: Some(DisconnectSpec {
                        lost_after: Some(lost_after),
                        ..DisconnectSpec::default()
                    }),
                    reschedule: None,
                    update: None,
                    ephemeral_disk: None,
                    tasks: None,
                }],
            })
            .collect(),
        script,
    }
}

/// Start, cut 20% of the links for ten minutes, heal, settle.
fn partition_script() -> Vec<Action> {
    let mut script = vec![Action::Advance { by: Dur::secs(30) }];
    script.extend((0..PARTITIONED).map(|i| Action::LinkDown {
        node: partitioned(i),
    }));
    script.push(Action::Advance { by: Dur::mins(10) });
    script.extend((0..PARTITIONED).map(|i| Action::LinkUp {
        node: partitioned(i),
    }));
    script.push(Action::Advance { by: Dur::mins(3) });
    script
}

/// The same story spread over 1,000 steps.
fn thousand_steps() -> Vec<Action> {
    let mut script = vec![Action::Advance { by: Dur::secs(30) }];
    script.extend((0..PARTITIONED).map(|i| Action::LinkDown {
        node: partitioned(i),
    }));
    let filler = 1000 - script.len() - PARTITIONED - 100;
    script.extend((0..filler).map(|_| Action::Advance {
        by: Dur::ms(600_000 / filler as u64),
    }));
    script.extend((0..PARTITIONED).map(|i| Action::LinkUp {
        node: partitioned(i),
    }));
    script.extend((0..100).map(|_| Action::Advance { by: Dur::secs(2) }));
    script
}

/// lost_after longer than the partition: the allocs reconnect.
const RECONNECT: Dur = Dur::mins(15);
/// lost_after shorter than the partition: the allocs are lost, the nodes go down.
const LOST: Dur = Dur::mins(5);

fn report_once() {
    for (label, lost_after) in [("lost", LOST), ("reconnect", RECONNECT)] {
        report_run(label, lost_after);
    }
    let before = rss_bytes();
    let mut session = Session::new(cluster(thousand_steps(), 50, LOST), None).expect("session");
    session.run_to_end();
    let after = rss_bytes();
    eprintln!(
        "history of {} steps (lost_after 5m): {:.1} MB resident growth ({} checkpoints)",
        session.cursor(),
        (after - before) as f64 / 1e6,
        session.checkpoint_count()
    );
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
    eprintln!(
        "partition run ({label}, lost_after {lost_after}): {elapsed:?}, {} events, {allocs} allocs, {evals} evals, {} trace entries",
        sim.events_handled,
        session.trace().len()
    );
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
