//! Explore-mode benchmarks (issue 7): orders explored per second on the
//! plain reconnect scenario under 1.4.2, and exhaustive searches of the
//! scenario with three reconnecting nodes
//! (`tests/data/explore/three-reconnect.json`) under smaller bounds and
//! under the default ones (those past the budget stop there and say so).
//! Before the timed runs
//! it prints, for each three-node search, the orders to exhaust, the wall
//! time, orders per second and the deduplication ratio (figures in
//! docs/explore.md). `EXPLORE_FULL_SPACE=1` instead searches the
//! three-node scenario under the default bounds with no budget, printing
//! its progress (the size of the full space; `EXPLORE_MAX_DELAY`,
//! `EXPLORE_NO_FIRE_LOOPS`, `EXPLORE_NO_REDUCE` change the bounds).
//! `EXPLORE_COMMUTE=WALKS` and `EXPLORE_ABSTRACT=WALKS` print the
//! diagnostics of `nomad_playground::explore::diagnose` (which pairs of
//! moves commute and what the others differ in; how much coarser keys
//! would merge).

#[path = "support/allocator.rs"]
mod allocator;

use criterion::{Criterion, criterion_group};
use nomad_playground::explore::{ExploreConfig, Explorer, SearchMode};
use std::hint::black_box;

const PLAIN: &str = include_str!("../tests/data/explore/plain-reconnect.json");
const THREE: &str = include_str!("../tests/data/explore/three-reconnect.json");

/// The three-node searches: name and settings.
fn three_node_searches() -> Vec<(&'static str, ExploreConfig)> {
    let exhaustive = ExploreConfig {
        max_orders: 2_000_000,
        mode: SearchMode::Exhaustive,
        ..ExploreConfig::default()
    };
    vec![
        (
            "three-reconnect latest, --no-fire-loops --max-delay 0",
            ExploreConfig {
                fire_loops: false,
                max_delay: 0,
                ..exhaustive.clone()
            },
        ),
        (
            "three-reconnect latest, --no-fire-loops --max-delay 10",
            ExploreConfig {
                fire_loops: false,
                max_delay: 10,
                ..exhaustive.clone()
            },
        ),
        (
            "three-reconnect latest, --no-fire-loops (budget 200,000 orders)",
            ExploreConfig {
                fire_loops: false,
                max_orders: 200_000,
                ..exhaustive.clone()
            },
        ),
        (
            "three-reconnect latest, --max-delay 0 (budget 200,000 orders)",
            ExploreConfig {
                max_delay: 0,
                max_orders: 200_000,
                ..exhaustive.clone()
            },
        ),
        (
            "three-reconnect latest, default bounds (budget 200,000 orders)",
            ExploreConfig {
                max_orders: 200_000,
                ..exhaustive
            },
        ),
    ]
}

/// Prints the figures of one run of each three-node search (wall time is
/// read here, in the bench, never in the library).
fn report() {
    for (name, config) in three_node_searches() {
        // The bench measures wall time; the core never does.
        #[allow(clippy::disallowed_methods)]
        let start = std::time::Instant::now();
        let result = Explorer::from_json(THREE, config).map(|mut e| e.run());
        let secs = start.elapsed().as_secs_f64();
        match result {
            Ok(r) => eprintln!(
                "{name}: {} after {} orders ({} states, {} distinct), {secs:.2} s, {:.0} orders/s, {:.1}% of states deduplicated",
                if r.exhaustive {
                    "exhausted"
                } else {
                    "NOT exhausted"
                },
                r.orders,
                r.states,
                r.distinct_states,
                r.orders as f64 / secs.max(1e-9),
                r.dedup_ratio * 100.0
            ),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
}

/// CPU seconds this process used so far (Linux `/proc/self/stat`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which ends with ')'): utime and stime
    // are the 12th and 13th, in clock ticks (100 per second on Linux).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// `EXPLORE_FULL_SPACE=1 cargo bench --bench explore`: searches the
/// three-node scenario under the default bounds with no order budget,
/// printing progress every 200,000 orders (orders, states, distinct
/// states, CPU seconds, and where the depth-first search is: per level,
/// choices taken of choices offered), and the final figures.
fn full_space() {
    let config = ExploreConfig {
        max_orders: u64::MAX,
        mode: SearchMode::Exhaustive,
        max_delay: env_u64("EXPLORE_MAX_DELAY", 1_000),
        fire_loops: std::env::var_os("EXPLORE_NO_FIRE_LOOPS").is_none(),
        reduce_orders: std::env::var_os("EXPLORE_NO_REDUCE").is_none(),
        count_idle: true,
        ..ExploreConfig::default()
    };
    let Ok(mut explorer) = Explorer::from_json(THREE, config) else {
        eprintln!("three-reconnect: bad input");
        return;
    };
    let start = cpu_seconds();
    loop {
        let progress = explorer.run_batch(200_000);
        let result = explorer.result();
        let position: Vec<String> = explorer
            .search_position()
            .iter()
            .take(8)
            .map(|(next, len)| format!("{next}/{len}"))
            .collect();
        eprintln!(
            "{} orders, {} states ({} distinct, {} subsumed, {} idle end states), {:.1} s CPU, at {}",
            progress.orders,
            progress.states,
            result.distinct_states,
            result.subsumed_orders,
            result.idle_states,
            cpu_seconds() - start,
            position.join(" ")
        );
        if progress.done {
            eprintln!(
                "default bounds: {} after {} orders ({} complete, {} postponed, {} subsumed), {} states ({} distinct, {:.1}% deduplicated), space {} orders, {:.1} s CPU",
                if result.exhaustive {
                    "exhausted"
                } else {
                    "NOT exhausted"
                },
                result.orders,
                result.complete_orders,
                result.postponed_orders,
                result.subsumed_orders,
                result.states,
                result.distinct_states,
                result.dedup_ratio * 100.0,
                result.space_size,
                cpu_seconds() - start
            );
            break;
        }
    }
}

/// A number from the environment, or `default`.
fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The three-node scenario's explorer for the walk diagnostics
/// (`EXPLORE_MAX_DELAY` ms, default 1000; `EXPLORE_NO_FIRE_LOOPS=1`).
fn walk_explorer() -> Option<Explorer> {
    let config = ExploreConfig {
        max_delay: env_u64("EXPLORE_MAX_DELAY", 1_000),
        fire_loops: std::env::var_os("EXPLORE_NO_FIRE_LOOPS").is_none(),
        ..ExploreConfig::default()
    };
    let explorer = Explorer::from_json(THREE, config);
    if explorer.is_err() {
        eprintln!("three-reconnect: bad input");
    }
    explorer.ok()
}

/// `EXPLORE_COMMUTE=WALKS cargo bench --bench explore`: along WALKS seeded
/// random walks of the three-node scenario (every `EXPLORE_STRIDE`-th
/// state, default 1; `EXPLORE_MAX_DELAY` ms, default 1000;
/// `EXPLORE_NO_FIRE_LOOPS=1`), takes every pair of moves in both orders
/// and prints which kinds of pairs reach one state and what the others
/// differ in (`Explorer::commute_report`).
fn commute() {
    let Some(explorer) = walk_explorer() else {
        return;
    };
    let report = explorer.commute_report(
        env_u64("EXPLORE_COMMUTE", 20),
        env_u64("EXPLORE_STRIDE", 1),
        env_u64("EXPLORE_SEED", 1),
    );
    eprintln!(
        "{} states sampled, {} pairs taken both ways, {} reach one state, {} disable each other",
        report.states, report.pairs, report.commuting, report.disabling
    );
    eprintln!("by kind (pairs, commuting):");
    for (kind, (pairs, commuting)) in &report.by_kind {
        eprintln!("  {pairs:6} {commuting:6}  {kind}");
    }
    let mut paths: Vec<_> = report.paths.iter().collect();
    paths.sort_by(|a, b| b.1.cmp(a.1));
    eprintln!("paths that differ (non-commuting pairs):");
    for (path, n) in paths.iter().take(60) {
        eprintln!("  {n:6}  {path}");
    }
    let mut signatures: Vec<_> = report.signatures.iter().collect();
    signatures.sort_by(|a, b| b.1.cmp(a.1));
    eprintln!("sets of differing classes:");
    for (signature, n) in signatures.iter().take(40) {
        eprintln!("  {n:6}  {signature}");
    }
}

/// `EXPLORE_ABSTRACT=WALKS cargo bench --bench explore`: distinct states
/// met along WALKS seeded random walks of the three-node scenario under
/// the canonical fingerprint and coarser candidate keys
/// (`Explorer::abstraction_report`; `EXPLORE_MAX_DELAY`,
/// `EXPLORE_NO_FIRE_LOOPS`, `EXPLORE_SEED` as for `EXPLORE_COMMUTE`).
fn abstractions() {
    let Some(explorer) = walk_explorer() else {
        return;
    };
    let start = cpu_seconds();
    let report = explorer.abstraction_report(
        env_u64("EXPLORE_ABSTRACT", 1_000),
        env_u64("EXPLORE_SEED", 1),
    );
    eprintln!("{report:#?}");
    eprintln!("{:.1} s CPU", cpu_seconds() - start);
}

fn bench(c: &mut Criterion) {
    if std::env::var_os("EXPLORE_FULL_SPACE").is_some() {
        full_space();
        return;
    }
    if std::env::var_os("EXPLORE_COMMUTE").is_some() {
        commute();
        return;
    }
    if std::env::var_os("EXPLORE_ABSTRACT").is_some() {
        abstractions();
        return;
    }
    report();
    let mut group = c.benchmark_group("explore");
    group.sample_size(10);
    group.bench_function("plain-reconnect 1.4.2, 200 random orders", |b| {
        b.iter(|| {
            let config = ExploreConfig {
                profile: Some("1.4.2".to_string()),
                max_orders: 200,
                mode: SearchMode::Random,
                ..ExploreConfig::default()
            };
            let mut explorer = Explorer::from_json(PLAIN, config).ok();
            black_box(explorer.as_mut().map(|e| e.run()))
        })
    });
    for (name, config) in three_node_searches().into_iter().take(2) {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut explorer = Explorer::from_json(THREE, config.clone()).ok();
                black_box(explorer.as_mut().map(|e| e.run()))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    allocator::configure();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
