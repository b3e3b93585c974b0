//! Scenarios: the versioned JSON documents the simulator plays (format
//! version 1, described in `docs/scenario-format.md`).
//!
//! [`parse`] reads and validates a scenario: structural errors come with
//! the JSON path ([`json_path`]), references (nodes, jobs,
//! profiles) are checked, and nothing panics on user input. [`print`]
//! writes it back; a scenario in canonical form round-trips unchanged.

pub mod action_de;
pub mod assert;
pub mod cli;
pub mod duration;
pub mod format;
pub mod json;
pub mod json_path;

use format::{Action, Check, FORMAT_VERSION, Scenario};
use std::collections::BTreeSet;

/// A scenario that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// Not JSON, or the wrong shape or type somewhere.
    #[error("{path}: {message} (line {line}, column {column})")]
    Parse {
        /// JSON path of the offending value (`.` = the document).
        path: String,
        /// What is wrong.
        message: String,
        /// Line in the text.
        line: usize,
        /// Column in the text.
        column: usize,
    },
    /// A format version this build does not read.
    #[error(
        "version: unsupported scenario format version {found} (this build reads version {FORMAT_VERSION})"
    )]
    Version {
        /// The version found.
        found: String,
    },
    /// Well-formed but wrong: a bad reference or value.
    #[error("{path}: {message}")]
    Invalid {
        /// JSON path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

fn invalid(path: String, message: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid {
        path,
        message: message.into(),
    }
}

/// Parses and validates a scenario.
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ScenarioError::Parse {
            path: ".".to_string(),
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        })?;
    match value.get("version") {
        None => {
            return Err(invalid("version".to_string(), "missing field `version`"));
        }
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(FORMAT_VERSION)) => {}
        Some(other) => {
            return Err(ScenarioError::Version {
                found: other.to_string(),
            });
        }
    }
    let scenario: Scenario = serde_json::from_str(text).map_err(|inner| {
        let (line, column) = (inner.line(), inner.column());
        let mut path = json_path::path_at(text, line, column);
        let mut message = inner.to_string();
        // A hand-read action raises its error after reading the whole action
        // and names the field the error is about.
        if let Some((field, rest)) = action_de::split_field_error(&message) {
            let element = json_path::path_of_element_before(text, line, column);
            path = match (element.as_str(), field) {
                (".", "") => ".".to_string(),
                (".", field) => field.to_string(),
                (element, "") => element.to_string(),
                (element, field) => format!("{element}.{field}"),
            };
            message = rest.to_string();
        }
        ScenarioError::Parse {
            path,
            message,
            line: inner.line(),
            column: inner.column(),
        }
    })?;
    validate(&scenario)?;
    Ok(scenario)
}

/// Prints a scenario in canonical form (pretty JSON, two-space indent,
/// trailing newline).
pub fn print(scenario: &Scenario) -> String {
    let mut text = json::to_string_pretty(scenario).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads a scenario nested in another document (serde's
/// `deserialize_with`) through a `serde_json::Value`. Code size: a scenario
/// inside a buffered document (an internally tagged enum, such as the
/// explore worker's messages) would otherwise compile the whole scenario
/// reader once more for serde's private buffer type; this way it shares the
/// `Value` reader the script actions already use, and reads the scenario
/// from that value's text (with the reader `parse` uses: see
/// [`action_de::from_value`]). The result is the same.
pub fn deserialize_nested<'de, D>(deserializer: D) -> Result<Scenario, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
    action_de::from_value(&value).map_err(serde::de::Error::custom)
}

fn valid_profile(name: &str) -> bool {
    crate::profile::profile(name).is_some()
}

/// Checks references and values.
pub fn validate(scenario: &Scenario) -> Result<(), ScenarioError> {
    if let Some(profile) = &scenario.profile
        && !valid_profile(profile)
    {
        return Err(invalid(
            "profile".into(),
            format!("unknown profile {profile:?}"),
        ));
    }
    for (index, profile) in scenario.profiles.iter().flatten().enumerate() {
        if !valid_profile(profile) {
            return Err(invalid(
                format!("profiles[{index}]"),
                format!("unknown profile {profile:?}"),
            ));
        }
    }
    let mut nodes = BTreeSet::new();
    for (index, node) in scenario.nodes.iter().enumerate() {
        if node.id.is_empty() {
            return Err(invalid(
                format!("nodes[{index}].id"),
                "node ID must not be empty",
            ));
        }
        if !nodes.insert(node.id.clone()) {
            return Err(invalid(
                format!("nodes[{index}].id"),
                format!("duplicate node ID {:?}", node.id),
            ));
        }
        if node.cpu == Some(0) || node.memory_mb == Some(0) {
            return Err(invalid(
                format!("nodes[{index}]"),
                "cpu and memory_mb must be positive",
            ));
        }
    }
    let mut jobs = BTreeSet::new();
    for (index, job) in scenario.jobs.iter().enumerate() {
        validate_job(job, &format!("jobs[{index}]"), &nodes)?;
        if !jobs.insert(job.id.clone()) {
            return Err(invalid(
                format!("jobs[{index}].id"),
                format!("duplicate job ID {:?}", job.id),
            ));
        }
    }
    for (index, action) in scenario.script.iter().enumerate() {
        let path = format!("script[{index}]");
        validate_action(action, &path, &nodes, &mut jobs)?;
    }
    Ok(())
}

fn validate_job(
    job: &format::JobSpec,
    path: &str,
    nodes: &BTreeSet<String>,
) -> Result<(), ScenarioError> {
    if job.id.is_empty() {
        return Err(invalid(format!("{path}.id"), "job ID must not be empty"));
    }
    if let Some(job_type) = &job.job_type
        && !matches!(
            job_type.as_str(),
            "service" | "batch" | "system" | "sysbatch"
        )
    {
        return Err(invalid(
            format!("{path}.type"),
            format!("unknown job type {job_type:?}"),
        ));
    }
    if job.groups.is_empty() {
        return Err(invalid(
            format!("{path}.groups"),
            "a job needs at least one group",
        ));
    }
    let mut names = BTreeSet::new();
    for (index, group) in job.groups.iter().enumerate() {
        let group_path = format!("{path}.groups[{index}]");
        if group.name.is_empty() || !names.insert(group.name.clone()) {
            return Err(invalid(
                format!("{group_path}.name"),
                "group names must be unique and not empty",
            ));
        }
        for (n, node) in group.nodes.iter().flatten().enumerate() {
            if !nodes.contains(node) {
                return Err(invalid(
                    format!("{group_path}.nodes[{n}]"),
                    format!("unknown node {node:?}"),
                ));
            }
        }
        if let Some(reconcile) = group.disconnect.as_ref().and_then(|d| d.reconcile.as_ref())
            && !matches!(
                reconcile.as_str(),
                "best_score" | "keep_original" | "keep_replacement" | "longest_running"
            )
        {
            return Err(invalid(
                format!("{group_path}.disconnect.reconcile"),
                format!("unknown reconcile strategy {reconcile:?}"),
            ));
        }
        if let Some(function) = group
            .reschedule
            .as_ref()
            .and_then(|r| r.delay_function.as_ref())
            && !matches!(function.as_str(), "constant" | "exponential" | "fibonacci")
        {
            return Err(invalid(
                format!("{group_path}.reschedule.delay_function"),
                format!("unknown delay function {function:?}"),
            ));
        }
        if let Some(mode) = group.update.as_ref().and_then(|u| u.health_check.as_ref())
            && !matches!(mode.as_str(), "task_states" | "checks" | "manual")
        {
            return Err(invalid(
                format!("{group_path}.update.health_check"),
                format!("unknown health_check {mode:?}"),
            ));
        }
        if let Some(tasks) = &group.tasks {
            let mut task_names = BTreeSet::new();
            for (t, task) in tasks.iter().enumerate() {
                if task.name.is_empty() || !task_names.insert(task.name.clone()) {
                    return Err(invalid(
                        format!("{group_path}.tasks[{t}].name"),
                        "task names must be unique and not empty",
                    ));
                }
            }
        }
    }
    Ok(())
}

const CLIENT_STATUSES: &[&str] = &[
    "pending", "running", "complete", "failed", "lost", "unknown",
];

fn validate_action(
    action: &Action,
    path: &str,
    nodes: &BTreeSet<String>,
    jobs: &mut BTreeSet<String>,
) -> Result<(), ScenarioError> {
    let need_node = |node: &String| {
        if nodes.contains(node) {
            Ok(())
        } else {
            Err(invalid(
                format!("{path}.node"),
                format!("unknown node {node:?}"),
            ))
        }
    };
    match action {
        Action::RegisterJob { job } => {
            validate_job(job, &format!("{path}.job"), nodes)?;
            jobs.insert(job.id.clone());
        }
        Action::UpdateJob { job, .. } | Action::StopJob { job } | Action::RevertJob { job, .. }
            if !jobs.contains(job) =>
        {
            return Err(invalid(
                format!("{path}.job"),
                format!("unknown job {job:?}"),
            ));
        }
        Action::DrainNode { node, .. }
        | Action::SetEligibility { node, .. }
        | Action::Heartbeat { node }
        | Action::GetAllocs { node }
        | Action::Register { node }
        | Action::LinkDown { node }
        | Action::LinkUp { node }
        | Action::Hold { node, .. }
        | Action::Release { node }
        | Action::Deliver { node, .. }
        | Action::Reorder { node, .. }
        | Action::Drop { node, .. }
        | Action::Delay { node, .. } => need_node(node)?,
        Action::PromoteDeployment { deployment, .. }
        | Action::PauseDeployment { deployment }
        | Action::ResumeDeployment { deployment }
        | Action::FailDeployment { deployment }
        | Action::UnblockDeployment { deployment }
        | Action::SetAllocHealth {
            deployment: Some(deployment),
            ..
        } => {
            let job = deployment
                .split_once('#')
                .map_or(deployment.as_str(), |(job, _)| job);
            // 8+ hex digits and dashes: a deployment ID (prefix), found at run time.
            let id_prefix = deployment.len() >= 8
                && deployment
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == '-');
            if !jobs.contains(job) && !id_prefix {
                return Err(invalid(
                    format!("{path}.deployment"),
                    format!("unknown job {job:?} (a deployment is `job`, `job#n` or an ID)"),
                ));
            }
        }
        Action::SetAllocHealth {
            deployment: None,
            healthy,
            unhealthy,
        } if healthy.iter().chain(unhealthy).all(Vec::is_empty) => {
            return Err(invalid(
                path.to_string(),
                "set_alloc_health needs a `deployment` or an alloc to find it by",
            ));
        }
        Action::UpdateAlloc { node, allocs } => {
            need_node(node)?;
            for (index, item) in allocs.iter().flatten().enumerate() {
                if !CLIENT_STATUSES.contains(&item.status.as_str()) {
                    return Err(invalid(
                        format!("{path}.allocs[{index}].status"),
                        format!("unknown client status {:?}", item.status),
                    ));
                }
            }
        }
        Action::Assert {
            profiles, checks, ..
        } => {
            for (index, filter) in profiles.iter().flatten().enumerate() {
                if !crate::profile::valid_filter(filter) {
                    return Err(invalid(
                        format!("{path}.profiles[{index}]"),
                        format!("invalid profile filter {filter:?}"),
                    ));
                }
            }
            for (index, check) in checks.iter().enumerate() {
                validate_check(check, &format!("{path}.checks[{index}]"), nodes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn validate_check(
    check: &Check,
    path: &str,
    nodes: &BTreeSet<String>,
) -> Result<(), ScenarioError> {
    let subjects = [
        check.alloc.is_some(),
        check.node.is_some() && check.count.is_none(),
        check.eval.is_some(),
        check.count.is_some(),
        check.job.is_some() && check.count.is_none(),
        check.deployment.is_some(),
    ]
    .iter()
    .filter(|s| **s)
    .count();
    if subjects != 1 {
        return Err(invalid(
            path.to_string(),
            "a check needs exactly one subject: alloc, node, eval, count, job or deployment",
        ));
    }
    if let Some(node) = &check.node
        && !nodes.contains(node)
    {
        return Err(invalid(
            format!("{path}.node"),
            format!("unknown node {node:?}"),
        ));
    }
    for (field, value) in [("client_status", &check.client_status)] {
        if let Some(value) = value
            && !CLIENT_STATUSES.contains(&value.as_str())
        {
            return Err(invalid(
                format!("{path}.{field}"),
                format!("unknown client status {value:?}"),
            ));
        }
    }
    if let Some(value) = &check.desired_status
        && !matches!(value.as_str(), "run" | "stop" | "evict")
    {
        return Err(invalid(
            format!("{path}.desired_status"),
            format!("unknown desired status {value:?}"),
        ));
    }
    Ok(())
}

/// One line for an action: its name and its fields as `key=value`.
pub fn action_text(action: &Action) -> String {
    let value = json::to_value(action).unwrap_or(serde_json::Value::Null);
    let Some(object) = value.as_object() else {
        return String::new();
    };
    let mut text = object
        .get("action")
        .and_then(|a| a.as_str())
        .unwrap_or("")
        .to_string();
    for (key, value) in object {
        if key == "action" {
            continue;
        }
        let shown = match value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Object(o) if key == "job" => o
                .get("id")
                .and_then(|id| id.as_str())
                .unwrap_or("")
                .to_string(),
            other => other.to_string(),
        };
        text.push_str(&format!(" {key}={shown}"));
    }
    text
}
