//! Helpers shared by the integration tests (each test file that needs them
//! says `mod support;`). Each test crate compiles its own copy and uses only
//! some of them, hence the `dead_code` allowance.
#![allow(dead_code)]

use nomad_playground::fixture::ClusterFixtureInput;
use nomad_playground::reconciler::cluster::ReconcileResult;
use nomad_playground::reconciler::reasons::AllocDecision;
use nomad_playground::reconciler::rules::ReconcilerRules;
use serde_json::{Value, json};

use nomad_playground::scenario::cli::play;
use nomad_playground::sim::trace::trace_text;

/// Plays a scenario's JSON under `profile`: every action must apply and every
/// assertion must hold, and at least one assertion must have run. Returns
/// the trace text.
pub fn checked_trace(scenario: &str, profile: &str) -> String {
    let (session, errors) = play(scenario, Some(profile)).unwrap_or_else(|e| panic!("{e}"));
    let trace = trace_text(&session.trace());
    let sim = session.sim();
    assert_eq!(errors, 0, "an action failed:\n{trace}");
    assert!(sim.assertions.0 > 0, "no assertion ran:\n{trace}");
    assert_eq!(sim.assertions.1, 0, "an assertion failed:\n{trace}");
    trace
}

/// An alloc of job `j`, group `web`, in fixture JSON (Nomad API names);
/// `extra`'s fields are set over the defaults.
pub fn alloc(id: &str, index: u32, node: &str, client: &str, extra: Value) -> Value {
    let mut a = json!({"ID": id, "Name": format!("j.web[{index}]"), "NodeID": node, "JobID": "j",
                       "TaskGroup": "web", "ClientStatus": client, "DesiredStatus": "run"});
    for (k, v) in extra.as_object().expect("extra is an object") {
        a[k] = v.clone();
    }
    a
}

/// A reconcile of a cluster fixture's input: the result (which the run
/// derefs to) and its reason records.
pub struct Run {
    pub result: ReconcileResult,
    pub decisions: Vec<AllocDecision>,
}

impl std::ops::Deref for Run {
    type Target = ReconcileResult;
    fn deref(&self) -> &ReconcileResult {
        &self.result
    }
}

/// Reconciles a cluster fixture's input under `rules`.
pub fn run(input: Value, rules: ReconcilerRules) -> Run {
    let input: ClusterFixtureInput = serde_json::from_value(input).expect("input");
    let (result, decisions) = input.run_explained(rules);
    Run { result, decisions }
}

/// The reconciler's decision about alloc `id`.
pub fn decision<'a>(r: &'a Run, id: &str) -> &'a AllocDecision {
    r.decisions
        .iter()
        .find(|d| d.alloc_id() == id)
        .expect("decision recorded")
}
