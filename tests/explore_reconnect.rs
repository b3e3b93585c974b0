//! Explore mode finds Nomad's reconnect races from plain, unscripted
//! disconnect-and-reconnect scenarios (issue 7): #15068 (an alloc update
//! accepted before the heartbeat places a replacement that is torn down
//! again) and #14925 (a reconnected alloc misses a job update) under 1.4.2,
//! none under `latest`; the shortest order replays through a normal
//! session; a seed gives the same result twice.

use nomad_playground::explore::invariant::Invariant;
use nomad_playground::explore::{ExploreConfig, ExploreResult, Explorer, SearchMode, cli};
use nomad_playground::scenario::format::Scenario;

const PLAIN: &str = include_str!("data/explore/plain-reconnect.json");
const UPDATE: &str = include_str!("data/explore/plain-reconnect-update.json");

fn scenario(text: &str) -> Scenario {
    nomad_playground::scenario::parse(text).unwrap_or_else(|e| panic!("bad test input: {e}"))
}

fn search(text: &str, profile: &str, orders: u64, seed: u64) -> ExploreResult {
    let config = ExploreConfig {
        profile: Some(profile.to_string()),
        max_orders: orders,
        seed,
        mode: SearchMode::Random,
        ..ExploreConfig::default()
    };
    let mut explorer =
        Explorer::new(&scenario(text), config).unwrap_or_else(|e| panic!("explorer: {e}"));
    explorer.run()
}

fn count(result: &ExploreResult, invariant: Invariant) -> u64 {
    result
        .invariants
        .iter()
        .find(|r| r.invariant == invariant)
        .map_or(0, |r| r.violating_orders)
}

#[test]
fn finds_15068_under_1_4_2_without_being_told_the_order() {
    let result = search(PLAIN, "1.4.2", 60, 1);
    assert!(
        count(&result, Invariant::NoReplacementFlap) > 0,
        "no #15068 flap found: {:?}",
        result.violated()
    );
    assert_eq!(result.reconnecting_nodes, vec!["node-c".to_string()]);
}

/// #14925: under 1.4.2 the reconnect is remembered only as a sticky task
/// event, so the job-register eval still sees the reconnected alloc as
/// reconnecting and never updates it. The search finds the stale version
/// without being told the order (`latest` finds none: see
/// `latest_has_no_violation_in_either_scenario`).
#[test]
fn finds_14925_when_the_job_is_updated_after_the_reconnect() {
    let result = search(UPDATE, "1.4.2", 40, 1);
    assert!(
        count(&result, Invariant::ReconnectedVersion) > 0,
        "no #14925 stale version found under 1.4.2: {:?}",
        result.violated()
    );
}

#[test]
fn latest_has_no_violation_in_either_scenario() {
    for text in [PLAIN, UPDATE] {
        let result = search(text, "latest", 60, 1);
        assert!(
            result.violated().is_empty(),
            "latest violates {:?}",
            result.violated()
        );
        assert!(result.complete_orders > 0);
    }
}

#[test]
fn shortest_order_replays_through_a_session_to_the_same_violation() {
    let result = search(PLAIN, "1.4.2", 60, 1);
    let report = result
        .invariants
        .iter()
        .find(|r| r.invariant == Invariant::NoReplacementFlap)
        .unwrap_or_else(|| panic!("no report"));
    let repro = report
        .shortest
        .as_ref()
        .unwrap_or_else(|| panic!("no reproduction"));
    // The scenario is a valid scenario file that round-trips.
    let text = nomad_playground::scenario::print(&repro.scenario);
    let parsed = scenario(&text);
    assert_eq!(parsed, repro.scenario);
    let replayed = repro.replay().unwrap_or_else(|e| panic!("replay: {e}"));
    let details: Vec<&str> = repro
        .violations
        .iter()
        .filter(|v| v.invariant == Invariant::NoReplacementFlap)
        .map(|v| v.detail.as_str())
        .collect();
    let again: Vec<&str> = replayed
        .iter()
        .filter(|v| v.invariant == Invariant::NoReplacementFlap)
        .map(|v| v.detail.as_str())
        .collect();
    assert!(!details.is_empty());
    assert_eq!(details, again);
    // The same file through the `run` command plays without action errors.
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = nomad_playground::scenario::cli::run(
        &["repro.json".to_string(), "--json".to_string()],
        &|_| Ok(text.clone()),
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let json: serde_json::Value =
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("run --json: {e}"));
    assert_eq!(json["assertions"]["action_errors"], 0);
}

#[test]
fn a_seed_gives_the_same_result_twice() {
    let a = search(PLAIN, "1.4.2", 25, 42);
    let b = search(PLAIN, "1.4.2", 25, 42);
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap_or_default(),
        serde_json::to_string(&b).unwrap_or_default()
    );
}

#[test]
fn batches_give_the_same_result_as_one_run() {
    let config = ExploreConfig {
        profile: Some("1.4.2".to_string()),
        max_orders: 30,
        seed: 3,
        ..ExploreConfig::default()
    };
    let mut whole =
        Explorer::new(&scenario(PLAIN), config.clone()).unwrap_or_else(|e| panic!("explorer: {e}"));
    let whole = whole.run();
    let mut sliced =
        Explorer::new(&scenario(PLAIN), config).unwrap_or_else(|e| panic!("explorer: {e}"));
    let mut last = 0.0;
    loop {
        let progress = sliced.run_batch(7);
        assert!(progress.fraction >= last);
        last = progress.fraction;
        if progress.done {
            break;
        }
    }
    assert_eq!(sliced.result(), whole);
    assert_eq!(whole.orders, 30);
}

#[test]
fn cli_exits_1_on_a_violation_and_0_without() {
    let run = |profile: &str| {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let args: Vec<String> = [
            "plain.json",
            "--profile",
            profile,
            "--max-orders",
            "60",
            "--mode",
            "random",
            "--no-compare",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let code = cli::run(
            &args,
            &|_| Ok(PLAIN.to_string()),
            &|_, _| Ok(()),
            &mut out,
            &mut err,
        );
        (code, String::from_utf8_lossy(&out).to_string())
    };
    let (code, text) = run("1.4.2");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no-replacement-flap"), "{text}");
    let (code, text) = run("latest");
    assert_eq!(code, 0, "{text}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = cli::run(
        &["x.json".to_string()],
        &|_| Ok("{".to_string()),
        &|_, _| Ok(()),
        &mut out,
        &mut err,
    );
    assert_eq!(code, 2);
    let no_window = r#"{"version":1,"name":"n","nodes":[{"id":"a"}],"script":[{"action":"advance","by":"1s"}]}"#;
    assert!(Explorer::from_json(no_window, ExploreConfig::default()).is_err());
}

/// A depth-first search stopped at its budget makes no random walk, so it
/// has no estimate of the space: the report gives the lower bound it knows
/// instead of "space ~0 orders".
#[test]
fn a_search_stopped_at_its_budget_reports_a_lower_bound_not_zero() {
    let config = ExploreConfig {
        profile: Some("1.4.2".to_string()),
        max_orders: 5,
        seed: 1,
        mode: SearchMode::Exhaustive,
        ..ExploreConfig::default()
    };
    let mut explorer =
        Explorer::new(&scenario(PLAIN), config).unwrap_or_else(|e| panic!("explorer: {e}"));
    let result = explorer.run();
    assert!(!result.exhaustive, "5 orders exhausted the plain reconnect");
    let report = cli::text_report(&result, &[]);
    assert!(
        report.contains(&format!("space more than {} orders", result.orders)),
        "{report}"
    );
    assert!(!report.contains("space ~0"), "{report}");
}
