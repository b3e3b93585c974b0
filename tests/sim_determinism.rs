//! The simulator is deterministic: the same scenario and seed give the same
//! trace twice, a different seed gives a different one, and time travel
//! (replay from a checkpoint) lands on exactly the state of the straight run.

use nomad_playground::scenario::format::{Action, Scenario};
use nomad_playground::sim::history::Session;
use nomad_playground::sim::trace::trace_text;

fn scenario_text(name: &str) -> String {
    let path = format!("{}/scenarios/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("scenario")
}

fn state_json(session: &Session) -> String {
    serde_json::to_string(session.sim()).expect("serialize")
}

#[test]
fn same_seed_same_trace_twice() {
    for name in [
        "issue-12680",
        "pr-15068-heartbeat-order",
        "lost-after-expiry",
        "rolling-update",
        "rolling-update-auto-revert",
        "canary-auto-promote",
        "canary-manual-promote",
        "rolling-update-operator",
    ] {
        let text = scenario_text(name);
        let mut first = Session::load(&text, None).expect("load");
        first.run_to_end();
        let mut second = Session::load(&text, None).expect("load");
        second.run_to_end();
        assert_eq!(
            trace_text(&first.trace()),
            trace_text(&second.trace()),
            "{name}"
        );
        assert_eq!(state_json(&first), state_json(&second), "{name}");
    }
}

#[test]
fn another_seed_changes_the_trace() {
    let text = scenario_text("lost-after-expiry");
    let mut scenario: Scenario = nomad_playground::scenario::parse(&text).expect("parse");
    let mut a = Session::new(scenario.clone(), None).expect("load");
    a.run_to_end();
    scenario.seed = Some(scenario.seed.unwrap_or(1) + 1);
    let mut b = Session::new(scenario, None).expect("load");
    b.run_to_end();
    assert_ne!(trace_text(&a.trace()), trace_text(&b.trace()));
}

/// Time travel lands on the straight run's state; the operator scenarios
/// cross deployment writes and their watcher evals.
#[test]
fn replay_from_checkpoint_equals_straight_run() {
    for name in [
        "issue-14925",
        "canary-manual-promote",
        "rolling-update-operator",
    ] {
        let text = scenario_text(name);
        let mut scenario: Scenario = nomad_playground::scenario::parse(&text).expect("parse");
        // Small checkpoints so that jumps cross several of them.
        scenario.settings = Some(nomad_playground::scenario::format::Settings {
            checkpoint_every: Some(3),
            ..Default::default()
        });
        let mut straight = Session::new(scenario.clone(), None).expect("load");
        let mut states = vec![state_json(&straight)];
        while straight.cursor() < straight.actions().len() {
            straight.step();
            states.push(state_json(&straight));
        }
        let full_trace = trace_text(&straight.trace());
        let mut travel = Session::new(scenario, None).expect("load");
        travel.run_to_end();
        for target in [0, 7, 2, 11, 5, 1, 9, 4, 12] {
            let target = target.min(states.len() - 1);
            travel.jump(target);
            assert_eq!(travel.cursor(), target, "{name}");
            assert_eq!(
                state_json(&travel),
                states[target],
                "{name}: jump to {target}"
            );
        }
        travel.back();
        travel.jump(usize::MAX);
        assert_eq!(
            state_json(&travel),
            *states.last().expect("states"),
            "{name}"
        );
        assert_eq!(trace_text(&travel.trace()), full_trace, "{name}");
    }
}

#[test]
fn an_edit_in_the_past_starts_a_branch() {
    let text = scenario_text("issue-12680");
    let mut session = Session::load(&text, Some("latest")).expect("load");
    session.run_to_end();
    let original = session.actions().to_vec();
    session.jump(3);
    session.apply(Action::LinkUp {
        node: "node-a".to_string(),
    });
    assert_eq!(session.branches().len(), 1);
    assert_eq!(session.branches()[0].actions, original);
    assert_eq!(session.branches()[0].forked_at, 3);
    assert_eq!(session.actions().len(), 4);
    assert_eq!(session.cursor(), 4);
    // The new branch plays on from here.
    assert!(session.step());
    assert_eq!(session.actions().len(), 5);
}

#[test]
fn switching_profile_replays_the_same_actions() {
    let text = scenario_text("issue-12680");
    let mut session = Session::load(&text, Some("1.4.3")).expect("load");
    session.run_to_end();
    let cursor = session.cursor();
    session.set_profile("latest").expect("profile");
    assert_eq!(session.cursor(), cursor);
    assert_eq!(session.profile().name, "latest");
    let mut direct = Session::load(&text, Some("latest")).expect("load");
    direct.run_to_end();
    assert_eq!(state_json(&session), state_json(&direct));
}
