//! Explore mode's state-space reductions (issue 7, performance): canonical
//! fingerprints, forced steps that are not choice points and sleep-set
//! partial-order reduction let a scenario with three reconnecting nodes be
//! searched exhaustively in a few hundred orders, and the reduced search
//! finds the same invariants broken as the unreduced one.

use nomad_playground::explore::{ExploreConfig, ExploreResult, Explorer, SearchMode};

const PLAIN: &str = include_str!("data/explore/plain-reconnect.json");
const THREE: &str = include_str!("data/explore/three-reconnect.json");

fn run(text: &str, config: ExploreConfig) -> ExploreResult {
    Explorer::from_json(text, config)
        .unwrap_or_else(|e| panic!("explorer: {e}"))
        .run()
}

fn exhaustive(profile: &str, reduce: bool) -> ExploreConfig {
    ExploreConfig {
        profile: Some(profile.to_string()),
        max_orders: 200_000,
        mode: SearchMode::Exhaustive,
        // Small enough that the unreduced search stays quick in a debug
        // build (with 100 ms it takes ~24k orders, minutes unoptimised).
        max_delay: 10,
        reduce_orders: reduce,
        ..ExploreConfig::default()
    }
}

#[test]
fn three_reconnecting_nodes_are_searched_exhaustively_in_few_orders() {
    // Before the reductions this took 9,024 orders (76,608 in the space);
    // with them, a few hundred, well inside the default budget.
    let config = ExploreConfig {
        fire_loops: false,
        max_delay: 10,
        ..ExploreConfig::default()
    };
    let result = run(THREE, config);
    assert!(
        result.exhaustive,
        "not exhaustive after {} orders ({} states)",
        result.orders, result.states
    );
    assert!(result.orders < 1_000, "{} orders", result.orders);
    assert_eq!(result.reconnecting_nodes.len(), 3);
    assert!(result.violated().is_empty(), "{:?}", result.violated());
    assert!(result.complete_orders > 0);
    assert!(result.dedup_ratio > 0.0);
}

#[test]
fn the_reduction_finds_what_the_full_search_finds() {
    // Under 1.4.2, where some order breaks an invariant (#15068), so that
    // equal sets of violated invariants mean something.
    let reduced = run(PLAIN, exhaustive("1.4.2", true));
    let full = run(PLAIN, exhaustive("1.4.2", false));
    assert!(reduced.exhaustive && full.exhaustive);
    assert!(!full.violated().is_empty(), "the full search found nothing");
    assert_eq!(reduced.violated(), full.violated());
    assert!(reduced.complete_orders > 0);
    assert!(
        reduced.states <= full.states,
        "the reduction searched more states ({} > {})",
        reduced.states,
        full.states
    );
}

/// Issue 7: the scenario with three reconnecting nodes is searched to
/// exhaustion (not cut by the order budget) with the default delay bound
/// (calls held up to 1 s while time passes), under a generous order bound;
/// no order breaks an invariant. (1,928 orders with sleep sets with state
/// caching; 2,036 before.)
#[test]
fn three_reconnecting_nodes_are_exhausted_with_the_default_delay_bound() {
    let result = run(
        THREE,
        ExploreConfig {
            max_orders: 20_000,
            mode: SearchMode::Exhaustive,
            fire_loops: false,
            ..ExploreConfig::default()
        },
    );
    assert!(
        result.exhaustive,
        "not exhausted after {} orders ({} states)",
        result.orders, result.states
    );
    assert_eq!(result.reconnecting_nodes.len(), 3);
    assert!(result.violated().is_empty(), "{:?}", result.violated());
    assert!(result.complete_orders > 0);
}

/// Same seed, same search: the search is deterministic.
#[test]
fn the_three_node_search_is_deterministic() {
    let config = ExploreConfig {
        fire_loops: false,
        max_delay: 10,
        ..ExploreConfig::default()
    };
    assert_eq!(run(THREE, config.clone()), run(THREE, config));
}
