//! Deployment watcher and client alloc health (`src/server/deployments.rs`,
//! `src/client/runner.rs`): the progress deadline, the healthy deadline and
//! a rollback without a stable version, checked by scenario assertions.
//! Follows Nomad's `nomad/deploymentwatcher/deployment_watcher.go`
//! (`shouldFail`, `getDeploymentProgressCutoff`) and
//! `client/allochealth/tracker.go`.

mod support;

/// Plays a scenario under `latest`; every assertion must hold. Returns the trace.
fn check(scenario: &str) -> String {
    support::checked_trace(scenario, "latest")
}

/// The new alloc fails; with a progress deadline and reschedule attempts
/// left the watcher only allows its replacement, and the deployment fails
/// when the progress deadline passes (TestDeploymentWatcher_Watch_ProgressDeadline),
/// rolling back to version 0.
#[test]
fn progress_deadline_fails_and_rolls_back() {
    let trace = check(
        r#"{
  "version": 1,
  "name": "progress-deadline",
  "seed": 3,
  "nodes": [{"id": "node-a"}],
  "jobs": [{"id": "web", "groups": [{"name": "web", "count": 2,
    "update": {"max_parallel": 1, "auto_revert": true, "min_healthy_time": "5s", "healthy_deadline": "20s", "progress_deadline": "30s"},
    "tasks": [{"name": "server", "config": {"image": "v0"}}]}]}],
  "script": [
    {"action": "advance", "by": "10s"},
    {"action": "assert", "checks": [{"deployment": "web", "status": "successful"}, {"job": "web", "stable": true}]},
    {"action": "update_job", "job": "web", "config": {"image": "v1"}},
    {"action": "advance", "by": "1s"},
    {"action": "task_fail", "alloc": "web.web[0]#1"},
    {"action": "advance", "by": "5s"},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "running", "unhealthy_allocs": 1},
      {"alloc": "web.web[0]#1", "healthy": false},
      {"job": "web", "job_version": 1}]},
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [
      {"deployment": "web#1", "status": "failed", "status_description": "Failed due to progress deadline - rolling back to job version 0"},
      {"job": "web", "job_version": 2}]}
  ]
}"#,
    );
    assert!(
        trace.contains("desired transition reschedule"),
        "the unhealthy alloc may be replaced:\n{trace}"
    );
}

/// Tasks that do not run by `healthy_deadline` make the alloc unhealthy;
/// without a progress deadline that fails the first deployment, and
/// auto_revert finds no stable version.
#[test]
fn healthy_deadline_fails_without_a_stable_version() {
    check(
        r#"{
  "version": 1,
  "name": "healthy-deadline",
  "seed": 4,
  "settings": {"task_start": "30s"},
  "nodes": [{"id": "node-a"}],
  "jobs": [{"id": "web", "groups": [{"name": "web", "count": 1,
    "update": {"max_parallel": 1, "auto_revert": true, "min_healthy_time": "5s", "healthy_deadline": "20s", "progress_deadline": "0s"}}]}],
  "script": [
    {"action": "advance", "by": "19s"},
    {"action": "assert", "checks": [{"deployment": "web", "status": "running", "unhealthy_allocs": 0}]},
    {"action": "advance", "by": "5s"},
    {"action": "assert", "checks": [
      {"alloc": "web.web[0]", "healthy": false},
      {"deployment": "web", "status": "failed", "status_description": "Failed due to unhealthy allocations - no stable job version to auto revert to", "unhealthy_allocs": 1},
      {"job": "web", "job_version": 0, "stable": false}]}
  ]
}"#,
    );
}

/// A job without an update block gets no deployment, and its allocs no health.
#[test]
fn no_update_block_no_deployment() {
    let trace = check(
        r#"{
  "version": 1,
  "name": "no-update",
  "nodes": [{"id": "node-a"}],
  "jobs": [{"id": "web", "groups": [{"name": "web", "count": 2}]}],
  "script": [
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [{"deployment": "web", "exists": false}, {"count": {"job": "web", "client_status": "running"}, "equals": 2}]}
  ]
}"#,
    );
    assert!(!trace.contains("deployment health"), "{trace}");
}
