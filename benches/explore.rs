//! Explore-mode benchmarks (issue 7): orders explored per second on the
//! plain reconnect scenario under 1.4.2, and a full exhaustive search of a
//! scenario with three reconnecting nodes (figures in docs/explore.md).

use criterion::{Criterion, criterion_group, criterion_main};
use nomad_playground::explore::{ExploreConfig, Explorer, SearchMode};
use std::hint::black_box;

const PLAIN: &str = include_str!("../tests/data/explore/plain-reconnect.json");
const THREE: &str = include_str!("../tests/data/explore/three-reconnect.json");

fn bench(c: &mut Criterion) {
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
    group.bench_function("three-reconnect latest, exhaustive", |b| {
        b.iter(|| {
            let config = ExploreConfig {
                max_orders: 1_000_000,
                mode: SearchMode::Exhaustive,
                fire_loops: false,
                max_delay: 10,
                ..ExploreConfig::default()
            };
            let mut explorer = Explorer::from_json(THREE, config).ok();
            black_box(explorer.as_mut().map(|e| e.run()))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
