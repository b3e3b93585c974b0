//! Plan retries as Nomad's `retryMax` makes them (`scheduler/util.go`): an
//! eval fails after 5 attempts in a row that committed nothing, an attempt
//! that committed something starts the count again, and system evals retry
//! as service evals do but leave no blocked eval (`scheduler_system.go`).

use nomad_playground::sim::history::Session;
use nomad_playground::sim::trace::trace_text;

/// A system job whose node comes back from a partition: from 1.5.0 the node
/// is `initializing` when the reconnect eval runs, so the applier refuses
/// the reconnect mark on it.
const SYSTEM_RECONNECT: &str = r#"{"version": 1, "name": "system-reconnect", "seed": 7,
  "nodes": [{"id": "node-a"}, {"id": "node-b"}],
  "jobs": [{"id": "agent", "type": "system", "groups": [{"name": "agent",
    "max_client_disconnect": "1h", "disconnect": {"lost_after": "1h"}}]}],
  "script": [{"action": "advance", "by": "5s"}, {"action": "link_down", "node": "node-a"},
    {"action": "advance", "by": "2m"}, {"action": "link_up", "node": "node-a"},
    {"action": "advance", "by": "1m"}]}"#;

fn run(text: &str, profile: &str) -> Session {
    let mut session = Session::load(text, Some(profile)).expect("scenario");
    session.run_to_end();
    session
}

/// (status, trace line) of each processed eval with this trigger.
fn processed(session: &Session, trigger: &str) -> Vec<(String, String)> {
    let text = trace_text(&session.trace());
    session
        .sim()
        .server
        .state
        .evals
        .values()
        .filter(|record| record.eval.triggered_by == trigger)
        .filter_map(|record| {
            let short = &record.eval.id[..8];
            let line = text
                .lines()
                .find(|l| l.contains("eval-processed") && l.contains(short))?;
            Some((record.eval.status.as_str().to_string(), line.to_string()))
        })
        .collect()
}

/// How many attempts an eval's trace line shows: the first, each
/// `attempt N:` recomputed, and the `N more attempts` repeated.
fn attempts(line: &str) -> usize {
    let mut numbered: Vec<&str> = line
        .split("plan: attempt ")
        .skip(1)
        .filter_map(|rest| rest.split(':').next())
        .collect();
    numbered.dedup();
    let repeated = line
        .split(" more attempts")
        .next()
        .filter(|_| line.contains(" more attempts"))
        .and_then(|head| head.rsplit(' ').next())
        .map_or(0, |n| n.parse::<usize>().expect("count"));
    1 + numbered.len() + repeated
}

#[test]
fn a_system_plan_refused_in_part_is_retried_then_fails_without_a_blocked_eval() {
    let session = run(SYSTEM_RECONNECT, "1.5.0");
    let reconnects = processed(&session, "reconnect");
    assert_eq!(reconnects.len(), 1, "{reconnects:?}");
    let (status, line) = &reconnects[0];
    assert_eq!(status, "failed", "{line}");
    assert_eq!(attempts(line), 5, "{line}");
    assert!(processed(&session, "max-plan-attempts").is_empty());
    // Before the initializing gate the node is ready at once: one attempt.
    let session = run(SYSTEM_RECONNECT, "1.4.3");
    for (status, line) in processed(&session, "reconnect") {
        assert_eq!(status, "complete", "{line}");
        assert_eq!(attempts(&line), 1, "{line}");
    }
}

#[test]
fn an_attempt_that_commits_starts_the_count_again() {
    let path = format!(
        "{}/scenarios/pr-15808-register-race.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("scenario");
    let session = run(&text, "1.5.0");
    let reconnects = processed(&session, "reconnect");
    let (status, line) = reconnects
        .iter()
        .find(|(_, line)| line.contains("stop "))
        .expect("a reconnect eval that also stops an alloc");
    assert_eq!(status, "failed", "{line}");
    // The first attempt commits the stop and is refused the reconnect mark;
    // five more in a row commit nothing.
    assert_eq!(attempts(line), 6, "{line}");
    // The blocked eval it leaves commits nothing at all: five attempts.
    let blocked = processed(&session, "max-plan-attempts");
    assert!(!blocked.is_empty());
    for (_, line) in blocked.iter().filter(|(s, _)| s == "failed") {
        assert_eq!(attempts(line), 5, "{line}");
    }
}
