//! Benchmark of the cluster reconciler: one service job of 10,000 allocs on
//! 1,000 nodes, 10% of them on disconnected nodes and 5% reconnecting with
//! running replacements. The floor is one pass over the allocs (a tainted
//! node lookup in a table built once per run, as the reconciler does, a
//! task group lookup and a status count per alloc); the same pass with
//! string-keyed `BTreeMap` lookups, and one pass of the classification
//! rules, are further references.

#[path = "support/allocator.rs"]
mod allocator;

use criterion::{Criterion, criterion_group};
use nomad_playground::model::{
    AllocState, Allocation, ClientStatus, DesiredStatus, DisconnectStrategy, Duration, Job,
    JobType, Node, NodeStatus, ReschedulePolicy, SchedulingEligibility, TaskGroup, Time,
};
use nomad_playground::reconciler::cluster::{
    ClusterInput, ReconcileOptions, UpdateType, reconcile,
};
use nomad_playground::reconciler::filters::{
    EvalClock, FilterContext, TaintedIndex, classify_alloc,
};
use nomad_playground::reconciler::rules::ReconcilerRules;
use std::hint::black_box;
use std::rc::Rc;

const ALLOCS: u32 = 10_000;
const NODES: u32 = 1_000;

fn input() -> ClusterInput<'static> {
    let now = Time::parse_rfc3339("2026-01-01T12:00:00Z").unwrap();
    let job = Job {
        id: "web".into(),
        job_type: JobType::Service,
        version: 1,
        create_index: 10,
        job_modify_index: 10,
        task_groups: vec![TaskGroup {
            name: "web".into(),
            count: ALLOCS,
            reschedule_policy: Some(ReschedulePolicy {
                delay: Duration::from_secs(30),
                delay_function: nomad_playground::model::DelayFunction::Exponential,
                max_delay: Duration::from_hours(1),
                unlimited: true,
                ..Default::default()
            }),
            disconnect: Some(DisconnectStrategy {
                lost_after: Duration::from_mins(5),
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    };
    let job_arc = Rc::new(job.clone());
    let mut input = ClusterInput::new(Some(job), now);
    input.eval_id = "eval-bench".into();
    // Nodes 0..100 (10%) are disconnected; nodes 100..150 (5%) came back.
    for n in 0..NODES / 10 {
        let id = format!("node-{n:04}");
        Rc::make_mut(&mut input.tainted_nodes).insert(
            id.clone(),
            Some(Node {
                id,
                status: NodeStatus::Disconnected,
                scheduling_eligibility: SchedulingEligibility::Eligible,
                ..Default::default()
            }),
        );
    }
    let mut allocs = Vec::new();
    for i in 0..ALLOCS {
        let node = i % NODES;
        let mut a = Allocation {
            id: format!("alloc-{i:05}"),
            name: format!("web.web[{i}]"),
            node_id: format!("node-{node:04}"),
            job_id: "web".into(),
            job: Some(Rc::clone(&job_arc)),
            task_group: "web".into(),
            client_status: ClientStatus::Running,
            desired_status: DesiredStatus::Run,
            node_score: Some(1.0),
            ..Default::default()
        };
        if (NODES / 10..NODES / 10 + NODES / 20).contains(&node) {
            // Reconnecting: unknown since 10:00, replaced by a running alloc.
            a.client_status = ClientStatus::Unknown;
            a.alloc_states.push(AllocState {
                field: "ClientStatus".into(),
                value: "unknown".into(),
                time: Time::parse_rfc3339("2026-01-01T11:58:00Z").unwrap(),
            });
            let r = Allocation {
                id: format!("repl-{i:05}"),
                node_id: format!("node-{:04}", (node + 500) % NODES),
                previous_allocation: a.id.clone(),
                node_score: Some(2.0),
                create_index: 5,
                ..a.clone()
            };
            let r = Allocation {
                client_status: ClientStatus::Running,
                alloc_states: vec![],
                ..r
            };
            a.next_allocation = r.id.clone();
            allocs.push(Rc::new(r));
        }
        allocs.push(Rc::new(a));
    }
    input.allocs = allocs.into();
    input
}

fn bench(c: &mut Criterion) {
    let input = input();
    let options = ReconcileOptions::default();
    let update = |_: &Allocation, _: &Job, _: &TaskGroup| UpdateType::Ignore;

    // Sanity: the scenario does what it says.
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("id-{n}")
    };
    let r = reconcile(&input, &options, &update, &mut ids);
    let du = r.desired_tg_updates["web"];
    assert_eq!(du.disconnect, 1_000, "{du:?}");
    assert_eq!(
        r.stop.len(),
        500,
        "the picker stops 500 replacements or originals"
    );

    assert_eq!(
        once_floor(&input),
        once_floor_btree(&input),
        "the floors agree"
    );

    let mut group = c.benchmark_group("service-10k-allocs-1k-nodes");
    group.sample_size(20);
    group.bench_function("reconcile", |b| {
        b.iter(|| {
            let mut n = 0;
            let mut ids = || {
                n += 1;
                format!("id-{n}")
            };
            black_box(reconcile(black_box(&input), &options, &update, &mut ids))
        })
    });
    // The floor: one pass that does, per alloc, the lookups every
    // reconciler run needs (its node among the tainted ones, its task group
    // in the job) and buckets it by status, as a classification would.
    group.bench_function("floor: one pass (node + group lookup, status count)", |b| {
        b.iter(|| black_box(once_floor(black_box(&input))))
    });
    // The floor as first written: a string-keyed `BTreeMap` lookup of the
    // node and a group search per alloc, which the reconciler avoids.
    group.bench_function("floor (BTreeMap<String> lookups)", |b| {
        b.iter(|| black_box(once_floor_btree(black_box(&input))))
    });
    let rules = ReconcilerRules::default();
    let cx = FilterContext {
        tainted_nodes: &input.tainted_nodes,
        clock: &EvalClock::new(input.now, &input.eval_id),
        rules: &rules,
    };
    group.bench_function("floor: one classification pass", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for a in black_box(input.allocs.iter()) {
                n += classify_alloc(a, &cx).0 as usize;
            }
            black_box(n)
        })
    });
    group.finish();
}

/// One reconcile run and one floor pass, each in its own function, for
/// counting instructions: `RECONCILE_ONCE=5 valgrind --tool=callgrind
/// --toggle-collect='*reconcile::once_*' <bench binary>` (then divide the
/// inclusive counts by 5). The run's time goes mostly to cache misses on
/// the allocs, so count those too: add `--cache-sim=yes
/// --LL=1048576,16,64` (a 1 MiB last level, like a core's L2) and read
/// the `D1` and `LLd` misses. Heap blocks: `valgrind --tool=dhat` with
/// `RECONCILE_ONCE=1` and `=3`, halving the difference.
#[inline(never)]
fn once_reconcile(input: &ClusterInput) -> usize {
    let options = ReconcileOptions::default();
    let update = |_: &Allocation, _: &Job, _: &TaskGroup| UpdateType::Ignore;
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("id-{n}")
    };
    let r = reconcile(black_box(input), &options, &update, &mut ids);
    r.stop.len()
}

/// The floor: one pass with the lookups a run needs, in the structures a
/// run builds once (the tainted nodes as a table keyed by ID prefix; the
/// group looked up again only when it changes from the previous alloc's).
#[inline(never)]
fn once_floor(input: &ClusterInput) -> [usize; 8] {
    let job = input.job.as_ref().unwrap();
    let tainted = TaintedIndex::new(&input.tainted_nodes);
    let mut counts = [0usize; 8];
    let mut group: Option<(&str, u32)> = None;
    for a in black_box(input.allocs.iter()) {
        let node = tainted.get(a.node_id.as_str());
        let tainted = node.is_some() as usize;
        let count = match group {
            Some((name, count)) if name == a.task_group => count,
            _ => {
                let count = job
                    .lookup_task_group(&a.task_group)
                    .map_or(0, |tg| tg.count);
                group = Some((a.task_group.as_str(), count));
                count
            }
        };
        let k = match a.client_status {
            ClientStatus::Running => 0,
            ClientStatus::Unknown => 1,
            _ => 2,
        } + (count == 0) as usize * 3;
        counts[(k * 2 + tainted) % 8] += 1;
    }
    counts
}

/// The floor as first written: string-keyed `BTreeMap` lookups per alloc.
#[inline(never)]
fn once_floor_btree(input: &ClusterInput) -> [usize; 8] {
    let job = input.job.as_ref().unwrap();
    let mut counts = [0usize; 8];
    for a in black_box(input.allocs.iter()) {
        let node = input.tainted_nodes.get(a.node_id.as_str());
        let tainted = node.is_some() as usize;
        let count = job
            .lookup_task_group(&a.task_group)
            .map_or(0, |tg| tg.count);
        let k = match a.client_status {
            ClientStatus::Running => 0,
            ClientStatus::Unknown => 1,
            _ => 2,
        } + (count == 0) as usize * 3;
        counts[(k * 2 + tainted) % 8] += 1;
    }
    counts
}

criterion_group!(benches, bench);

fn main() {
    allocator::configure();
    if let Some(n) = std::env::var_os("RECONCILE_ONCE") {
        // `RECONCILE_ONCE=<n>` runs each function n times (default once),
        // so a count over several runs is free of first-run effects.
        let n: usize = n.to_str().and_then(|n| n.parse().ok()).unwrap_or(1);
        let input = input();
        for _ in 0..n {
            black_box(once_reconcile(&input));
            black_box(once_floor(&input));
            black_box(once_floor_btree(&input));
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
