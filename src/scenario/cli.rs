//! `nomad-playground run SCENARIO.json [--profile NAME] [--all-profiles]
//! [--json] [--check]`: plays a scenario and prints its trace.
//!
//! The text form prints one fixed-column line per trace entry. The JSON
//! form prints the trace and ends with the final nodes, allocations and
//! every processed eval. `--check` exits 1 when an assertion fails or an
//! action errs; bad input exits 2. File reading and printing are passed in
//! by the caller, so this module does no I/O of its own.

use crate::model::DesiredUpdates;
use crate::sim::Sim;
use crate::sim::history::Session;
use crate::sim::trace::{TraceEntry, trace_text};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

const USAGE: &str = "usage: nomad-playground run SCENARIO.json [--profile NAME] [--all-profiles] [--json] [--check]";

/// A node in the JSON output.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FinalNode {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Status`.
    pub status: String,
}

/// An alloc state in the JSON output.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FinalAllocState {
    /// `Field`.
    pub field: String,
    /// `Value`.
    pub value: String,
    /// `Time` (RFC 3339).
    pub time: String,
}

/// An allocation in the JSON output.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FinalAlloc {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `Name`.
    pub name: String,
    /// `NodeID`.
    #[serde(rename = "NodeID")]
    pub node_id: String,
    /// `ClientStatus`.
    pub client_status: String,
    /// `DesiredStatus`.
    pub desired_status: String,
    /// `JobVersion`.
    pub job_version: u64,
    /// `AllocStates`.
    pub alloc_states: Vec<FinalAllocState>,
}

/// A processed eval in the JSON output.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FinalEval {
    /// `ID`.
    #[serde(rename = "ID")]
    pub id: String,
    /// `TriggeredBy`.
    pub triggered_by: String,
    /// `JobID`.
    #[serde(rename = "JobID")]
    pub job_id: String,
    /// `NodeID`.
    #[serde(rename = "NodeID")]
    pub node_id: String,
    /// `Status`.
    pub status: String,
    /// `DesiredTGUpdates`.
    #[serde(rename = "DesiredTGUpdates")]
    pub desired_tg_updates: BTreeMap<String, DesiredUpdates>,
}

/// The JSON output of one run.
#[derive(Debug, Serialize)]
pub struct RunOutput {
    /// Scenario name.
    pub scenario: String,
    /// Profile name.
    pub profile: String,
    /// Every trace entry.
    pub trace: Vec<TraceEntry>,
    /// Assertions (passed, failed).
    pub assertions: AssertionCount,
    /// Final nodes.
    pub nodes: Vec<FinalNode>,
    /// Final allocations.
    pub allocations: Vec<FinalAlloc>,
    /// Processed evals, in creation order.
    pub evals: Vec<FinalEval>,
}

/// Assertion results.
#[derive(Debug, Serialize)]
pub struct AssertionCount {
    /// Held.
    pub passed: u64,
    /// Failed.
    pub failed: u64,
    /// Actions that failed.
    pub action_errors: u64,
}

/// The final state in the CLI's JSON shape.
pub fn final_state(sim: &Sim) -> (Vec<FinalNode>, Vec<FinalAlloc>, Vec<FinalEval>) {
    let state = &sim.server.state;
    let nodes = sim
        .clients
        .keys()
        .map(|id| FinalNode {
            id: id.clone(),
            status: state.nodes.get(id).map_or("unregistered".to_string(), |r| {
                r.node.status.as_str().to_string()
            }),
        })
        .collect();
    let allocations = state
        .allocs
        .values()
        .map(|a| FinalAlloc {
            id: a.id.clone(),
            name: a.name.clone(),
            node_id: a.node_id.clone(),
            client_status: a.client_status.as_str().to_string(),
            desired_status: a.desired_status.as_str().to_string(),
            job_version: a.job_version(),
            alloc_states: a
                .alloc_states
                .iter()
                .map(|s| FinalAllocState {
                    field: s.field.clone(),
                    value: s.value.clone(),
                    time: s.time.to_rfc3339(),
                })
                .collect(),
        })
        .collect();
    let evals = state
        .eval_order
        .iter()
        .filter_map(|id| {
            let record = &state.evals[id];
            let outcome = record.outcome.as_ref()?;
            Some(FinalEval {
                id: id.clone(),
                triggered_by: record.eval.triggered_by.clone(),
                job_id: record.eval.job_id.clone(),
                node_id: record.eval.node_id.clone(),
                status: record.eval.status.as_str().to_string(),
                desired_tg_updates: outcome.desired_tg_updates.to_map(),
            })
        })
        .collect();
    (nodes, allocations, evals)
}

/// Plays a whole scenario under one profile: (session at the end, action errors).
pub fn play(json: &str, profile: Option<&str>) -> Result<(Session, u64), String> {
    let mut session = Session::load(json, profile).map_err(|e| e.to_string())?;
    session.run_to_end();
    let errors = session
        .records()
        .iter()
        .filter(|r| r.error.is_some())
        .count() as u64;
    Ok((session, errors))
}

/// Runs the subcommand. `read` reads a file; returns the exit code.
pub fn run(
    args: &[String],
    read: &dyn Fn(&str) -> Result<String, String>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let mut path = None;
    let mut profile = None;
    let mut json = false;
    let mut check = false;
    let mut all = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--check" => check = true,
            "--all-profiles" => all = true,
            "--profile" => match iter.next() {
                Some(name) => profile = Some(name.clone()),
                None => {
                    let _ = writeln!(stderr, "--profile needs a name\n{USAGE}");
                    return 2;
                }
            },
            other if other.starts_with("--") => {
                let _ = writeln!(stderr, "unknown option {other}\n{USAGE}");
                return 2;
            }
            other => path = Some(other.to_string()),
        }
    }
    let Some(path) = path else {
        let _ = writeln!(stderr, "{USAGE}");
        return 2;
    };
    let text = match read(&path) {
        Ok(text) => text,
        Err(e) => {
            let _ = writeln!(stderr, "{path}: {e}");
            return 2;
        }
    };
    let scenario = match crate::scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "{path}: {e}");
            return 2;
        }
    };
    let profiles: Vec<Option<String>> = if all {
        scenario
            .profiles
            .clone()
            .unwrap_or_else(|| {
                vec![
                    scenario
                        .profile
                        .clone()
                        .unwrap_or_else(|| "latest".to_string()),
                ]
            })
            .into_iter()
            .map(Some)
            .collect()
    } else {
        vec![profile]
    };
    let mut failed = false;
    let mut outputs = Vec::new();
    for profile in profiles {
        let (session, errors) = match play(&text, profile.as_deref()) {
            Ok(result) => result,
            Err(e) => {
                let _ = writeln!(stderr, "{path}: {e}");
                return 2;
            }
        };
        let sim = session.sim();
        if sim.assertions.1 > 0 || errors > 0 {
            failed = true;
        }
        if json {
            let (nodes, allocations, evals) = final_state(sim);
            outputs.push(RunOutput {
                scenario: scenario.name.clone(),
                profile: session.profile().name.clone(),
                trace: session.trace(),
                assertions: AssertionCount {
                    passed: sim.assertions.0,
                    failed: sim.assertions.1,
                    action_errors: errors,
                },
                nodes,
                allocations,
                evals,
            });
        } else {
            let _ = writeln!(
                stdout,
                "# {} under profile {}",
                scenario.name,
                session.profile().name
            );
            let _ = write!(stdout, "{}", trace_text(&session.trace()));
            let _ = writeln!(
                stdout,
                "# assertions: {} passed, {} failed; action errors: {errors}",
                sim.assertions.0, sim.assertions.1
            );
        }
    }
    if json {
        let text = if outputs.len() == 1 {
            serde_json::to_string_pretty(&outputs[0])
        } else {
            serde_json::to_string_pretty(&outputs)
        };
        let _ = writeln!(stdout, "{}", text.unwrap_or_default());
    }
    if check && failed { 1 } else { 0 }
}
