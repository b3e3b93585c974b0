//! Exporters for bug reports: the scenario JSON, the trace JSON, a Mermaid
//! sequence diagram of the client/server calls and evals ([`mermaid`]), any
//! processed eval as a reconciler fixture ([`fixture`]), and a GitHub issue
//! body with the link, the profile, the diagram and the outcome ([`issue`]).
//!
//! All of them are pure functions of a [`Session`] (or its trace), so the
//! browser and the CLI produce the same text.

pub mod cli;
pub mod fixture;
pub mod issue;
pub mod mermaid;

use crate::scenario::format::Scenario;
use crate::share::Link;
use crate::sim::history::Session;
use crate::sim::trace::TraceEntry;

/// The scenario JSON (canonical form).
pub fn scenario_json(scenario: &Scenario) -> String {
    crate::scenario::print(scenario)
}

/// The trace as pretty JSON: an array of entries (`step`, `tick`, `event`
/// with its `kind`), as `src/sim/trace.rs` defines them.
pub fn trace_json(entries: &[TraceEntry]) -> String {
    let mut text = serde_json::to_string_pretty(entries).unwrap_or_else(|_| "[]".into());
    text.push('\n');
    text
}

/// What a link to the session's current state carries: the scenario with
/// the session's action log as its script (edits included), the step the
/// session is on, and the profile when it is not the scenario's default.
pub fn session_link(session: &Session) -> Link {
    let mut scenario = session.scenario().clone();
    scenario.script = session.actions().to_vec();
    let default = scenario.profile.clone().unwrap_or_else(|| "latest".into());
    let profile = &session.profile().name;
    Link {
        scenario,
        step: Some(session.cursor() as u64),
        profile: (profile != &default).then(|| profile.clone()),
    }
}
