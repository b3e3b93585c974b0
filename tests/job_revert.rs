//! The operator's `Job.Revert` as a scenario action (`revert_job`): the
//! old version's spec registered again as a new, unstable version with its
//! `job-register` eval, and the endpoint's refusals with Nomad's texts.
//! Follows Nomad's `nomad/job_endpoint.go` (`Revert`, then `Register`);
//! the cases echo `TestJobEndpoint_Revert` and
//! `TestJobEndpoint_Revert_Vault_NoToken`'s sibling checks (current version,
//! missing version, `EnforcePriorVersion`).

use nomad_playground::scenario::{self, ScenarioError};
use nomad_playground::sim::trace::trace_text;

mod support;

/// Job `web` (2 allocs, image v0) updated to image v1, then `script`.
fn web(script: &str) -> String {
    format!(
        r#"{{
  "version": 1,
  "name": "revert",
  "seed": 3,
  "nodes": [{{"id": "node-a"}}, {{"id": "node-b"}}],
  "jobs": [{{"id": "web", "groups": [{{"name": "web", "count": 2,
    "tasks": [{{"name": "server", "config": {{"image": "v0"}}}}]}}]}}],
  "script": [
    {{"action": "advance", "by": "30s"}},
    {{"action": "update_job", "job": "web", "config": {{"image": "v1"}}}},
    {{"action": "advance", "by": "30s"}},
    {{"action": "assert", "checks": [
      {{"count": {{"job": "web", "client_status": "running", "job_version": 1}}, "equals": 2}}]}},
    {script}
  ]
}}"#
    )
}

/// The lines of the trace that contain `needle`.
fn lines_with<'a>(trace: &'a str, needle: &str) -> Vec<&'a str> {
    trace.lines().filter(|l| l.contains(needle)).collect()
}

/// Reverting to version 0 registers v0's spec as version 2; its eval
/// replaces the v1 allocs with allocs of version 2 running image v0.
#[test]
fn revert_registers_the_old_spec_as_a_new_version() {
    let scenario = web(r#"{"action": "revert_job", "job": "web", "version": 0},
    {"action": "assert", "checks": [
      {"job": "web", "job_version": 2, "stable": false},
      {"eval": "job-register:web#last", "status": "pending"}]},
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [
      {"count": {"job": "web", "client_status": "running", "job_version": 2}, "equals": 2},
      {"count": {"job": "web", "client_status": "running", "job_version": 1}, "equals": 0}]}"#);
    let trace = support::checked_trace(&scenario, "latest");
    assert_eq!(
        lines_with(&trace, "Job.Revert from operator"),
        vec![
            lines_with(
                &trace,
                "call-accepted      Job.Revert from operator: reverting web to the spec of version 0"
            )[0]
        ],
        "{trace}"
    );
    assert_eq!(
        lines_with(&trace, "updated to version 2").len(),
        1,
        "{trace}"
    );

    let (session, _) = scenario::cli::play(&scenario, Some("latest")).expect("plays");
    let record = &session.sim().server.state.jobs["web"];
    assert_eq!(record.job.version, 2);
    assert_eq!(record.specs[&2], record.specs[&0], "version 2 is v0's spec");
    assert_ne!(record.specs[&2], record.specs[&1]);
}

/// Stopping writes a stopped copy of the job as a new version (Nomad's
/// deregister without purge). Reverting to a version that ran starts the
/// job again; reverting to the stopped version stops it again.
#[test]
fn revert_restarts_a_stopped_job() {
    let trace = support::checked_trace(
        &web(r#"{"action": "stop_job", "job": "web"},
    {"action": "assert", "checks": [{"job": "web", "job_version": 2}]},
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [
      {"count": {"job": "web", "desired_status": "run"}, "equals": 0}]},
    {"action": "revert_job", "job": "web", "version": 0},
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [
      {"count": {"job": "web", "client_status": "running", "desired_status": "run", "job_version": 3}, "equals": 2}]},
    {"action": "revert_job", "job": "web", "version": 2},
    {"action": "assert", "checks": [{"job": "web", "job_version": 4}]},
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [
      {"count": {"job": "web", "desired_status": "run"}, "equals": 0}]}"#),
        "latest",
    );
    assert_eq!(lines_with(&trace, "web v2 stopped").len(), 1, "{trace}");
    assert_eq!(
        lines_with(&trace, "web v3 updated to version 3").len(),
        1,
        "{trace}"
    );
    assert_eq!(
        lines_with(&trace, "web v4 updated to version 4, stopped").len(),
        1,
        "{trace}"
    );
}

/// Nomad's refusals: the current version, a version that never was, and a
/// failed `EnforcePriorVersion` check. None of them changes the job or
/// creates an eval.
#[test]
fn refused_reverts_change_nothing() {
    for (call, refusal) in [
        (
            r#"{"action": "revert_job", "job": "web", "version": 1}"#,
            "can't revert to current version",
        ),
        (
            r#"{"action": "revert_job", "job": "web", "version": 7}"#,
            r#"job "web" in namespace "default" at version 7 not found"#,
        ),
        (
            r#"{"action": "revert_job", "job": "web", "version": 0, "enforce_prior_version": 0}"#,
            "Current job has version 1; enforcing version 0",
        ),
    ] {
        let scenario = web(&format!(
            r#"{call},
    {{"action": "assert", "checks": [
      {{"job": "web", "job_version": 1}},
      {{"eval": "job-register:web#last", "status": "complete"}}]}}"#
        ));
        let trace = support::checked_trace(&scenario, "latest");
        let refused = lines_with(&trace, "call-refused");
        assert_eq!(refused.len(), 1, "{call}:\n{trace}");
        assert!(
            refused[0].ends_with(&format!("Job.Revert from operator: {refusal}")),
            "{call}: {}",
            refused[0]
        );
    }
}

/// The prior-version check passes when the job is at that version.
#[test]
fn enforce_prior_version_accepts_the_current_version() {
    let trace = support::checked_trace(
        &web(
            r#"{"action": "revert_job", "job": "web", "version": 0, "enforce_prior_version": 1},
    {"action": "assert", "checks": [{"job": "web", "job_version": 2}]}"#,
        ),
        "latest",
    );
    assert_eq!(
        lines_with(&trace, "call-accepted      Job.Revert from operator").len(),
        1,
        "{trace}"
    );
}

/// Bad input names the field: a missing or mistyped version, an unknown
/// job.
#[test]
fn bad_reverts_are_errors_with_a_path() {
    for (call, path, message) in [
        (
            r#"{"action": "revert_job", "job": "web"}"#,
            "script[4]",
            "version",
        ),
        (
            r#"{"action": "revert_job", "job": "web", "version": "zero"}"#,
            "script[4].version",
            "invalid type",
        ),
        (
            r#"{"action": "revert_job", "job": "api", "version": 0}"#,
            "script[4].job",
            "unknown job",
        ),
    ] {
        let err = scenario::parse(&web(call)).expect_err(call);
        let text = err.to_string();
        assert!(
            matches!(
                err,
                ScenarioError::Invalid { .. } | ScenarioError::Parse { .. }
            ),
            "{call}: {text}"
        );
        assert!(text.contains(path), "{call}: {text}");
        assert!(text.contains(message), "{call}: {text}");
    }
}

/// The same revert scenario gives the same trace twice.
#[test]
fn a_revert_is_deterministic() {
    let scenario = web(r#"{"action": "revert_job", "job": "web", "version": 0},
    {"action": "run_until_idle"}"#);
    let run = || {
        let (session, _) = scenario::cli::play(&scenario, Some("latest")).expect("plays");
        trace_text(&session.trace())
    };
    assert_eq!(run(), run());
}
