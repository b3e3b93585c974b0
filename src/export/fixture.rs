//! Any processed eval of a session as a reconciler fixture in the
//! conformance format (`shared/conformance/FORMAT.md`, `kind: cluster`), so a
//! reproduced bug becomes a test case.
//!
//! The trace keeps the reconciler's results but not its inputs, so the
//! inputs are rebuilt: the session is replayed to the start of the step in
//! which the eval was processed, then (for `advance` and `step`) event by
//! event until just before the event that processes it, and the server state
//! there is read the way the generic scheduler reads it (the job, the job's
//! allocs, tainted nodes, the newest deployment, the alloc update kinds).
//! The fixture's `expect` is what this build's reconciler returns for that
//! input under the session's profile; the note says whether it matches what
//! the simulator recorded for the eval.

use crate::fixture::{ClusterFixtureInput, MAX_GROUP_COUNT, cluster_result_json};
use crate::model::{Allocation, DesiredUpdates, Node, NodeStatus};
use crate::reconciler::rules::ReconcilerRules;
use crate::scenario::format::Action;
use crate::server::tick_time;
use crate::sim::Sim;
use crate::sim::history::Session;
use crate::sim::trace::{TraceEvent, short};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Why an eval cannot be exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixtureExportError {
    /// No processed eval matches the reference.
    #[error(
        "no processed eval matches {0:?} (use an eval ID prefix, or trigger:job, or trigger:job#n)"
    )]
    NotFound(String),
    /// More than one processed eval matches an ID prefix.
    #[error("eval reference {reference:?} is ambiguous: {matches}")]
    Ambiguous {
        /// The reference.
        reference: String,
        /// The matching IDs.
        matches: String,
    },
    /// The eval is for a system or sysbatch job (fixtures cover the cluster reconciler).
    #[error(
        "eval {0} is for a system or sysbatch job: only cluster-reconciler fixtures can be exported"
    )]
    NotCluster(String),
    /// The eval was processed inside an action that cannot be split.
    #[error(
        "eval {eval} was processed inside action {action:?}; fixtures can be exported for evals processed during advance, step, process_eval or run_until_idle"
    )]
    Unsplittable {
        /// Eval ID.
        eval: String,
        /// The action.
        action: String,
    },
    /// The rebuilt state lacks the eval or the fixture does not read back.
    #[error("cannot rebuild the reconciler input of eval {eval}: {why}")]
    Rebuild {
        /// Eval ID.
        eval: String,
        /// Why.
        why: String,
    },
}

/// The processed evals of a session's trace: (eval ID, step, tick, job,
/// trigger, recorded DesiredTGUpdates).
type Processed = (
    String,
    usize,
    u64,
    String,
    String,
    BTreeMap<String, DesiredUpdates>,
);

fn processed(session: &Session) -> Vec<Processed> {
    session
        .trace()
        .into_iter()
        .filter_map(|e| match e.event {
            TraceEvent::EvalProcessed(processed) => Some((
                processed.eval.into(),
                e.step,
                e.tick,
                processed.job.to_string(),
                processed.trigger.to_string(),
                processed.desired_tg_updates.to_map(),
            )),
            _ => None,
        })
        .collect()
}

fn find(session: &Session, reference: &str) -> Result<Processed, FixtureExportError> {
    let all = processed(session);
    // trigger:job or trigger:job#n (1-based, in processing order).
    if let Some((trigger, rest)) = reference.split_once(':') {
        let (job, n) = match rest.split_once('#') {
            Some((job, n)) => (job, n.parse::<usize>().unwrap_or(0)),
            None => (rest, 1),
        };
        return all
            .into_iter()
            .filter(|p| p.4 == trigger && p.3 == job)
            .nth(n.saturating_sub(1))
            .ok_or_else(|| FixtureExportError::NotFound(reference.to_string()));
    }
    let mut matches: Vec<Processed> = all
        .into_iter()
        .filter(|p| p.0.starts_with(reference) && !reference.is_empty())
        .collect();
    matches.dedup_by(|a, b| a.0 == b.0);
    match matches.len() {
        0 => Err(FixtureExportError::NotFound(reference.to_string())),
        1 => Ok(matches.remove(0)),
        _ => Err(FixtureExportError::Ambiguous {
            reference: reference.to_string(),
            matches: matches
                .iter()
                .map(|m| short(&m.0).to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The sim just before `eval` is processed, replaying `session`'s actions.
fn state_before(session: &Session, eval: &str, step: usize) -> Result<Sim, FixtureExportError> {
    let mut scenario = session.scenario().clone();
    scenario.script = session.actions().to_vec();
    let rebuild = |why: String| FixtureExportError::Rebuild {
        eval: eval.to_string(),
        why,
    };
    let mut replay = Session::new(scenario, Some(&session.profile().name))
        .map_err(|e| rebuild(e.to_string()))?;
    if step == 0 {
        return Err(rebuild("the eval was processed during setup".into()));
    }
    replay.jump(step - 1);
    let mut sim = replay.sim().clone();
    let _ = sim.take_trace();
    let action = session.actions().get(step - 1).cloned();
    match action {
        Some(Action::Advance { .. }) | Some(Action::Step {}) => {
            sim.step_index = step;
            for _ in 0..10_000_000u64 {
                let before = sim.clone();
                if !sim.step() {
                    break;
                }
                let done = sim.take_trace().into_iter().any(|e| {
                    matches!(&e.event, TraceEvent::EvalProcessed(processed) if *processed.eval == *eval)
                });
                if done {
                    return Ok(before);
                }
            }
            Err(rebuild("the replay did not reach the eval".into()))
        }
        // The broker's next ready eval, or a named one: the state at the
        // start of the step is the state the scheduler reads (exact for the
        // first eval such an action processes).
        Some(Action::ProcessEval { .. }) | Some(Action::RunUntilIdle {}) => Ok(sim),
        Some(other) => Err(FixtureExportError::Unsplittable {
            eval: eval.to_string(),
            action: crate::scenario::action_text(&other),
        }),
        None => Err(rebuild(format!("step {step} is past the action log"))),
    }
}

/// The fixture JSON for the processed eval `reference` (an ID prefix,
/// `trigger:job` or `trigger:job#n`) of `session`.
pub fn eval_fixture(session: &Session, reference: &str) -> Result<Value, FixtureExportError> {
    let (eval_id, step, tick, job_id, trigger, recorded) = find(session, reference)?;
    let sim = state_before(session, &eval_id, step)?;
    let rebuild = |why: String| FixtureExportError::Rebuild {
        eval: eval_id.clone(),
        why,
    };
    let server = &sim.server;
    let record = server
        .state
        .evals
        .get(&eval_id)
        .ok_or_else(|| rebuild("the eval is not in the replayed state".into()))?;
    let job_record = server.state.jobs.get(&job_id);
    let job = job_record.map(|r| Rc::clone(&r.job));
    if let Some(job) = &job
        && matches!(
            job.job_type,
            crate::model::JobType::System | crate::model::JobType::SysBatch
        )
    {
        return Err(FixtureExportError::NotCluster(eval_id.clone()));
    }
    let allocs: Vec<Rc<Allocation>> = server.job_allocs(&job_id);
    // Tainted nodes as the generic scheduler computes them.
    let mut tainted: BTreeMap<String, Option<Node>> = BTreeMap::new();
    for alloc in &allocs {
        if tainted.contains_key(&alloc.node_id) {
            continue;
        }
        match server.state.nodes.get(&alloc.node_id) {
            None => {
                tainted.insert(alloc.node_id.clone(), None);
            }
            Some(r) => {
                if matches!(r.node.status, NodeStatus::Down | NodeStatus::Disconnected)
                    || r.node.draining()
                {
                    tainted.insert(alloc.node_id.clone(), Some(r.node.clone()));
                }
            }
        }
    }
    let deployment = server
        .state
        .deployments
        .values()
        .filter(|d| d.job_id == job_id)
        .max_by_key(|d| d.create_index)
        .cloned();
    // The alloc update function, as the scheduler's.
    let mut per_alloc = serde_json::Map::new();
    if let (Some(job), Some(jr)) = (&job, job_record) {
        for alloc in &allocs {
            if alloc.job_modify_index() == job.job_modify_index || alloc.terminal_status() {
                continue;
            }
            let group = &alloc.task_group;
            let old = jr
                .specs
                .get(&alloc.job_version())
                .and_then(|s| s.groups.iter().find(|g| &g.name == group));
            let new = jr
                .specs
                .get(&job.version)
                .and_then(|s| s.groups.iter().find(|g| &g.name == group));
            let destructive = match (old, new) {
                (Some(old), Some(new)) => crate::server::jobs::tasks_differ(old, new),
                _ => true,
            };
            per_alloc.insert(
                alloc.id.clone(),
                if destructive {
                    "destructive"
                } else {
                    "inplace"
                }
                .into(),
            );
        }
    }
    let alloc_json: Vec<Value> = allocs
        .iter()
        .map(|a| {
            let mut v = serde_json::to_value(a.as_ref()).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut v {
                let version = a.job_version();
                let create = a.job.as_ref().map(|j| j.create_index);
                map.remove("Job");
                map.insert("JobVersion".into(), version.into());
                if let Some(create) = create {
                    map.insert("JobCreateIndex".into(), create.into());
                }
            }
            v
        })
        .collect();
    let now = serde_json::to_value(tick_time(tick)).unwrap_or(Value::Null);
    let mut input = json!({
        "now": now,
        "job": job.as_deref(),
        "job_id": job_id,
        "deployment": deployment,
        "eval_id": eval_id,
        "eval_priority": record.eval.priority,
        "tainted_nodes": tainted,
        "allocs": alloc_json,
    });
    if !per_alloc.is_empty() {
        input["update"] = json!({"default": "ignore", "per_alloc": per_alloc});
    }
    let name = format!(
        "playground/{}/{}-{}",
        session.scenario().name,
        trigger,
        short(&eval_id)
    );
    let mut fixture = json!({
        "format": 1,
        "kind": "cluster",
        "name": name,
        "source": format!(
            "nomad-playground scenario {:?}, profile {}, step {step}, eval {} ({trigger} for {job_id})",
            session.scenario().name,
            session.profile().name,
            short(&eval_id)
        ),
        "note": "",
        "input": input,
        "expect": {},
    });
    drop_unlisted_fields(&mut fixture["input"]);
    // Read the input back as the fixture reader does and run this build's
    // reconciler on it, under the session's profile, so the result can be
    // checked against the simulator's record of the eval; and under the
    // latest rules, which is what `reconcile --check` runs fixtures with.
    let cluster = read_back(&fixture["input"]).map_err(rebuild)?;
    let profile = session.profile();
    let under_profile = cluster_result_json(&cluster.run(
        crate::server::scheduler::reconciler_rules(&profile.rules, profile.version),
    ));
    let result = cluster_result_json(&cluster.run(ReconcilerRules::default()));
    let same_as_latest = under_profile == result;
    let matches = under_profile.get("desired_tg_updates").is_some_and(|got| {
        recorded
            .iter()
            .all(|(group, want)| got.get(group).is_some_and(|g| counters_equal(g, want)))
    });
    fixture["note"] = Value::String(format!(
        "Exported by nomad-playground {}. Replayed under profile {}, the rebuilt input gives {} \
         the simulator recorded for this eval. `expect` is what this build's reconciler returns \
         for it with the latest rules (as `reconcile --check` runs fixtures){}. If the reproduced \
         behaviour is the bug, edit `expect` to the correct result. Allocations carry the job \
         version they were placed with in JobVersion (the format embeds input.job in every alloc).",
        crate::VERSION,
        profile.name,
        if matches {
            "the DesiredTGUpdates"
        } else {
            "DesiredTGUpdates that DIFFER from what"
        },
        if same_as_latest {
            ", the same as under the session's profile"
        } else {
            ", which differs from the result under the session's profile"
        }
    ));
    fixture["expect"] = result;
    Ok(fixture)
}

/// The exported `input` typed as `parse_fixture` types a cluster fixture's
/// (the same deserialisers and group-count limit, without its JSON-path
/// tracking: the text is ours, and the path layer would add a second set
/// of deserialisers to the browser's tools module).
fn read_back(input: &Value) -> Result<ClusterFixtureInput, String> {
    let typed = ClusterFixtureInput::deserialize(input).map_err(|e| e.to_string())?;
    let groups = typed
        .job
        .as_ref()
        .map(|j| j.task_groups.as_slice())
        .unwrap_or_default();
    if let Some((i, tg)) = groups
        .iter()
        .enumerate()
        .find(|(_, tg)| tg.count > MAX_GROUP_COUNT)
    {
        return Err(format!(
            "exported: at $.input.job.TaskGroups[{i}].Count: count {} is over the limit of {MAX_GROUP_COUNT}",
            tg.count
        ));
    }
    Ok(typed)
}

fn counters_equal(got: &Value, want: &DesiredUpdates) -> bool {
    let want = serde_json::to_value(want).unwrap_or(Value::Null);
    let (Some(got), Some(want)) = (got.as_object(), want.as_object()) else {
        return false;
    };
    want.iter().all(|(k, v)| {
        let g = got.get(k).and_then(Value::as_u64).unwrap_or(0);
        v.as_u64().unwrap_or(0) == g
    })
}

/// The keys `tests/conformance/FORMAT.md` (and `validate.py`) list for each
/// object of a cluster fixture's input.
const FORMAT_JOB_KEYS: &[&str] = &[
    "ID",
    "Name",
    "Namespace",
    "Type",
    "Priority",
    "Version",
    "Stop",
    "CreateIndex",
    "ModifyIndex",
    "JobModifyIndex",
    "TaskGroups",
];
const FORMAT_GROUP_KEYS: &[&str] = &[
    "Name",
    "Count",
    "Update",
    "ReschedulePolicy",
    "Disconnect",
    "MaxClientDisconnect",
    "StopAfterClientDisconnect",
    "EphemeralDisk",
    "Tasks",
];
const FORMAT_ALLOC_KEYS: &[&str] = &[
    "ID",
    "Name",
    "NodeID",
    "JobID",
    "TaskGroup",
    "ClientStatus",
    "DesiredStatus",
    "DesiredDescription",
    "CreateIndex",
    "ModifyIndex",
    "CreateTime",
    "ModifyTime",
    "AllocStates",
    "DesiredTransition",
    "PreviousAllocation",
    "NextAllocation",
    "RescheduleTracker",
    "FollowupEvalID",
    "DeploymentID",
    "DeploymentStatus",
    "TaskStates",
    "JobVersion",
    "JobCreateIndex",
    "JobModifyIndex",
    "NodeScore",
    "EvalID",
    "Namespace",
    "NodeName",
];
const FORMAT_NODE_KEYS: &[&str] = &[
    "ID",
    "Status",
    "DrainStrategy",
    "SchedulingEligibility",
    "Name",
    "Attributes",
];
const FORMAT_DEPLOYMENT_KEYS: &[&str] = &[
    "ID",
    "JobID",
    "JobVersion",
    "JobCreateIndex",
    "JobModifyIndex",
    "Status",
    "StatusDescription",
    "TaskGroups",
    "Namespace",
    "JobSpecModifyIndex",
    "EvalPriority",
    "IsMultiregion",
    "CreateTime",
];

/// Unlisted fields that the reconciler reads.
const READ_BY_THE_RECONCILER: &[&str] = &["PreventRescheduleOnLost"];

/// Removes the model fields the fixture format does not list, so the export
/// is in `FORMAT.md` form: they are fields the reconciler does not read
/// (`Datacenters`, `NodePool`, `Status`, `AllocModifyIndex`, `Preempted*`, ...),
/// except `PreventRescheduleOnLost`, which changes what it does and is kept
/// when set (`validate.py` then names it; dropping it would make the fixture
/// a different eval, which the read-back below would report).
fn drop_unlisted_fields(input: &mut Value) {
    fn prune(object: &mut Value, keep: &[&str]) {
        if let Value::Object(map) = object {
            map.retain(|key, value| {
                keep.contains(&key.as_str())
                    || (READ_BY_THE_RECONCILER.contains(&key.as_str()) && !is_zero(value))
            });
        }
    }
    fn is_zero(value: &Value) -> bool {
        match value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            Value::Array(items) => items.is_empty(),
            Value::Object(map) => map.values().all(is_zero),
        }
    }
    if let Some(job) = input.get_mut("job") {
        prune(job, FORMAT_JOB_KEYS);
        if let Some(Value::Array(groups)) = job.get_mut("TaskGroups") {
            groups.iter_mut().for_each(|g| prune(g, FORMAT_GROUP_KEYS));
        }
    }
    if let Some(Value::Array(allocs)) = input.get_mut("allocs") {
        allocs.iter_mut().for_each(|a| prune(a, FORMAT_ALLOC_KEYS));
    }
    if let Some(Value::Object(nodes)) = input.get_mut("tainted_nodes") {
        nodes.values_mut().for_each(|n| prune(n, FORMAT_NODE_KEYS));
    }
    if let Some(deployment) = input.get_mut("deployment") {
        prune(deployment, FORMAT_DEPLOYMENT_KEYS);
    }
}
