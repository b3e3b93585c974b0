//! Operator deployment calls as scenario actions
//! (`src/server/deployments/operator.rs`): promote, pause, resume, fail,
//! unblock and set alloc health, their refusals with Nomad's error texts,
//! `health_check = "manual"`, bad input with JSON paths, and every action
//! name through a v1 link.
//! Follows Nomad's `nomad/deployment_endpoint.go`,
//! `nomad/deploymentwatcher/deployment_watcher.go` and
//! `nomad/state/state_store.go` (`UpdateDeploymentPromotion`,
//! `UpdateDeploymentAllocHealth`); the cases echo
//! `TestDeploymentEndpoint_Promote`, `TestDeploymentEndpoint_SetAllocHealth`,
//! `TestDeploymentEndpoint_SetAllocHealth_Rollback`,
//! `TestDeploymentEndpoint_Fail_Rollback` and `TestDeploymentEndpoint_Pause`.

use nomad_playground::scenario::{self, ScenarioError, action_de::ACTION_NAMES, cli::play};
use nomad_playground::share::{Link, decode_link, encode_fragment};
use nomad_playground::sim::trace::trace_text;

/// Plays a scenario under `latest`; every action applies and every
/// assertion holds. Returns the trace.
fn check(scenario: &str) -> String {
    check_under(scenario, "latest")
}

mod support;

/// [`check`] under `profile`.
fn check_under(scenario: &str, profile: &str) -> String {
    support::checked_trace(scenario, profile)
}

/// The lines of the trace that contain `needle`.
fn lines_with<'a>(trace: &'a str, needle: &str) -> Vec<&'a str> {
    trace.lines().filter(|l| l.contains(needle)).collect()
}

/// A scenario of one job `web` (count 2) with the update block given,
/// version 0 deployed, then `script`.
fn web(update: &str, script: &str) -> String {
    format!(
        r#"{{
  "version": 1,
  "name": "ops",
  "seed": 7,
  "nodes": [{{"id": "node-a"}}, {{"id": "node-b"}}],
  "jobs": [{{"id": "web", "groups": [{{"name": "web", "count": 2, "update": {update},
    "tasks": [{{"name": "server", "config": {{"image": "v0"}}}}]}}]}}],
  "script": {script}
}}"#
    )
}

/// `health_check = "manual"`: the client never reports health, so the
/// deployment waits until the operator sets it; then the watcher's eval
/// completes the deployment and the version becomes stable.
#[test]
fn manual_health_waits_for_set_alloc_health() {
    let trace = check(&web(
        r#"{"max_parallel": 2, "health_check": "manual", "min_healthy_time": "1s"}"#,
        r#"[
    {"action": "advance", "by": "1m"},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "running", "placed_allocs": 2, "healthy_allocs": 0},
      {"count": {"job": "web", "client_status": "running"}, "equals": 2},
      {"job": "web", "stable": false}]},
    {"action": "set_alloc_health", "healthy": ["web.web[0]", "web.web[1]"]},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "running", "healthy_allocs": 2},
      {"alloc": "web.web[0]", "healthy": true},
      {"eval": "deployment-watcher:web#last", "status": "pending"}]},
    {"action": "advance", "by": "5s"},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "successful"},
      {"job": "web", "job_version": 0, "stable": true}]}
  ]"#,
    ));
    assert!(!trace.contains("deployment health: healthy"), "{trace}");
    assert_eq!(
        lines_with(
            &trace,
            "call-accepted      Deployment.SetAllocHealth from operator"
        )
        .len(),
        1,
        "{trace}"
    );
    assert_eq!(
        lines_with(&trace, "deployment health set healthy by the operator").len(),
        2,
        "{trace}"
    );
}

/// Marking an alloc unhealthy fails the deployment at once; with
/// auto_revert and a stable version whose spec differs, the job rolls back
/// (`TestDeploymentEndpoint_SetAllocHealth_Rollback`). Without a stable
/// version the description has no rollback part (unlike the watcher's own
/// failures).
#[test]
fn set_alloc_health_unhealthy_fails_and_rolls_back() {
    check(&web(
        r#"{"max_parallel": 1, "auto_revert": true, "min_healthy_time": "5s"}"#,
        r#"[
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [{"deployment": "web", "status": "successful"}, {"job": "web", "stable": true}]},
    {"action": "update_job", "job": "web", "config": {"image": "v1"}},
    {"action": "advance", "by": "1s"},
    {"action": "set_alloc_health", "deployment": "web", "unhealthy": ["web.web[0]#1"]},
    {"action": "assert", "checks": [
      {"deployment": "web#1", "status": "failed", "status_description": "Failed due to unhealthy allocations - rolling back to job version 0", "unhealthy_allocs": 1},
      {"alloc": "web.web[0]#1", "healthy": false},
      {"job": "web", "job_version": 2, "stable": true}]}
  ]"#,
    ));
    check(&web(
        r#"{"max_parallel": 1, "auto_revert": true, "health_check": "manual"}"#,
        r#"[
    {"action": "advance", "by": "5s"},
    {"action": "set_alloc_health", "unhealthy": ["web.web[0]"]},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "failed", "status_description": "Failed due to unhealthy allocations"},
      {"job": "web", "job_version": 0, "stable": false}]}
  ]"#,
    ));
}

/// Refused calls change nothing and are traced with Nomad's error text:
/// a terminal deployment, an alloc of another deployment, no allocs, and
/// promotion of a group without canaries (allowed) next to one short of
/// healthy canaries (refused).
#[test]
fn refusals_are_traced_with_nomads_reasons() {
    let trace = check(&web(
        r#"{"max_parallel": 1, "canary": 1, "min_healthy_time": "5s"}"#,
        r#"[
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [{"deployment": "web", "status": "successful"}]},
    {"action": "promote_deployment", "deployment": "web"},
    {"action": "resume_deployment", "deployment": "web"},
    {"action": "pause_deployment", "deployment": "web"},
    {"action": "unblock_deployment", "deployment": "web"},
    {"action": "update_job", "job": "web", "config": {"image": "v1"}},
    {"action": "advance", "by": "1s"},
    {"action": "set_alloc_health", "deployment": "web", "healthy": ["web.web[1]"]},
    {"action": "set_alloc_health", "deployment": "web"},
    {"action": "promote_deployment", "deployment": "web", "groups": ["web"]},
    {"action": "unblock_deployment", "deployment": "web"},
    {"action": "assert", "checks": [
      {"deployment": "web", "job_version": 1, "status": "running", "status_description": "Deployment is running but requires manual promotion", "healthy_allocs": 0},
      {"alloc": "web.web[1]", "job_version": 0}]}
  ]"#,
    ));
    let refused = lines_with(&trace, "call-refused");
    let reasons: Vec<&str> = refused
        .iter()
        .map(|l| l.split("from operator: ").nth(1).unwrap_or(""))
        .collect();
    assert_eq!(reasons.len(), 7, "{trace}");
    assert_eq!(reasons[0], "can't promote terminal deployment");
    assert_eq!(reasons[1], "can't resume terminal deployment");
    assert_eq!(reasons[2], "can't pause terminal deployment");
    assert_eq!(reasons[3], "can't unblock terminal deployment");
    assert!(
        reasons[4].starts_with("alloc \"") && reasons[4].contains("is not part of deployment"),
        "{}",
        reasons[4]
    );
    assert_eq!(
        reasons[5],
        "must specify at least one healthy/unhealthy allocation ID"
    );
    assert_eq!(
        reasons[6],
        "1 error occurred: * Task group \"web\" has 0/1 healthy allocations"
    );
    // The running deployment's unblock is accepted and does nothing.
    assert_eq!(
        lines_with(&trace, "call-accepted      Deployment.Unblock").len(),
        1,
        "{trace}"
    );
}

/// A pause longer than the progress deadline: before #27804 (2.0.0) the
/// deadline still fails the paused deployment; since, a paused deployment
/// does not fail, and resuming restarts the deadline, so the rollout
/// completes (`TestDeploymentWatcher_PausedDeploymentSkipsProgressDeadline`-like).
#[test]
fn a_paused_deployment_and_its_progress_deadline() {
    let scenario = web(
        r#"{"max_parallel": 1, "min_healthy_time": "5s", "progress_deadline": "30s"}"#,
        r#"[
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [{"deployment": "web", "status": "successful"}]},
    {"action": "update_job", "job": "web", "config": {"image": "v1"}},
    {"action": "advance", "by": "1s"},
    {"action": "pause_deployment", "deployment": "web"},
    {"action": "advance", "by": "2m"},
    {"action": "assert", "profiles": ["<2.0.0"], "checks": [
      {"deployment": "web", "job_version": 1, "status": "failed", "status_description": "Failed due to progress deadline", "healthy_allocs": 1}]},
    {"action": "assert", "profiles": [">=2.0.0"], "checks": [
      {"deployment": "web", "job_version": 1, "status": "paused", "healthy_allocs": 1}]},
    {"action": "resume_deployment", "deployment": "web"},
    {"action": "advance", "by": "1m"},
    {"action": "assert", "profiles": ["<2.0.0"], "checks": [
      {"deployment": "web", "job_version": 1, "status": "failed"},
      {"count": {"job": "web", "desired_status": "run", "job_version": 0}, "equals": 1}]},
    {"action": "assert", "profiles": [">=2.0.0"], "checks": [
      {"deployment": "web", "job_version": 1, "status": "successful"},
      {"job": "web", "job_version": 1, "stable": true}]}
  ]"#,
    );
    let old = check_under(&scenario, "1.8.0");
    assert_eq!(
        lines_with(
            &old,
            "Deployment.Pause from operator: can't resume terminal deployment"
        )
        .len(),
        1,
        "resuming the failed deployment is refused:\n{old}"
    );
    check(&scenario);
}

/// Promoting named groups promotes only those (`-group`); the other canary
/// group still needs promotion until it is promoted too.
#[test]
fn promote_named_groups() {
    check(
        r#"{
  "version": 1,
  "name": "two-groups",
  "seed": 9,
  "nodes": [{"id": "node-a"}, {"id": "node-b"}],
  "jobs": [{"id": "web", "groups": [
    {"name": "api", "count": 1, "update": {"canary": 1, "min_healthy_time": "2s"}, "tasks": [{"name": "t", "config": {"image": "v0"}}]},
    {"name": "ui", "count": 1, "update": {"canary": 1, "min_healthy_time": "2s"}, "tasks": [{"name": "t", "config": {"image": "v0"}}]}]}],
  "script": [
    {"action": "advance", "by": "20s"},
    {"action": "assert", "checks": [{"deployment": "web", "status": "successful"}]},
    {"action": "register_job", "job": {"id": "web", "groups": [
      {"name": "api", "count": 1, "update": {"canary": 1, "min_healthy_time": "2s"}, "tasks": [{"name": "t", "config": {"image": "v1"}}]},
      {"name": "ui", "count": 1, "update": {"canary": 1, "min_healthy_time": "2s"}, "tasks": [{"name": "t", "config": {"image": "v1"}}]}]}},
    {"action": "advance", "by": "20s"},
    {"action": "promote_deployment", "deployment": "web", "groups": ["api"]},
    {"action": "advance", "by": "20s"},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "running", "status_description": "Deployment is running but requires manual promotion"},
      {"count": {"job": "web", "name": "web.api[0]", "desired_status": "run"}, "equals": 1},
      {"count": {"job": "web", "name": "web.ui[0]", "desired_status": "run"}, "equals": 2}]},
    {"action": "promote_deployment", "deployment": "web", "groups": ["ui"]},
    {"action": "advance", "by": "30s"},
    {"action": "assert", "checks": [
      {"deployment": "web", "status": "successful"},
      {"job": "web", "job_version": 1, "stable": true},
      {"count": {"job": "web", "desired_status": "run", "job_version": 1}, "equals": 2}]}
  ]
}"#,
    );
}

/// A deployment reference that names no deployment is an action error
/// (the job exists but has no update block).
#[test]
fn a_job_without_deployments_is_an_action_error() {
    let text = r#"{
  "version": 1,
  "name": "no-deployment",
  "nodes": [{"id": "node-a"}],
  "jobs": [{"id": "web", "groups": [{"name": "web"}]}],
  "script": [
    {"action": "advance", "by": "5s"},
    {"action": "promote_deployment", "deployment": "web"},
    {"action": "assert", "checks": [{"deployment": "web", "exists": false}]}
  ]
}"#;
    let (session, errors) = play(text, Some("latest")).expect("play");
    assert_eq!(errors, 1);
    let trace = trace_text(&session.trace());
    assert!(
        trace.contains("action failed: deployment \"web\" not found"),
        "{trace}"
    );
}

fn parse_error(text: &str) -> (String, String) {
    match scenario::parse(text).expect_err("must be refused") {
        ScenarioError::Parse { path, message, .. } | ScenarioError::Invalid { path, message } => {
            (path, message)
        }
        ScenarioError::Version { found } => ("version".to_string(), found),
    }
}

/// Bad input is refused with the JSON path of the problem.
#[test]
fn bad_deployment_actions_carry_the_json_path() {
    let base = |script: &str| {
        format!(
            r#"{{"version": 1, "name": "t", "nodes": [{{"id": "a"}}],
  "jobs": [{{"id": "web", "groups": [{{"name": "web", "update": {{}}}}]}}], "script": {script}}}"#
        )
    };
    let (path, message) = parse_error(&base(
        r#"[{"action": "advance", "by": "1s"}, {"action": "promote_deployment", "deployment": "api"}]"#,
    ));
    assert_eq!(path, "script[1].deployment", "{message}");
    assert!(message.contains("unknown job \"api\""), "{message}");
    let (path, message) = parse_error(&base(r#"[{"action": "set_alloc_health", "healthy": []}]"#));
    assert_eq!(path, "script[0]", "{message}");
    // An ID prefix is accepted by the parser and resolved at run time.
    scenario::parse(&base(
        r#"[{"action": "fail_deployment", "deployment": "4339ffc2-b3"}]"#,
    ))
    .expect("an ID prefix parses");
    let (path, message) = parse_error(&base(
        r#"[{"action": "pause_deployment", "deployment": "web", "pause": true}]"#,
    ));
    assert_eq!(path, "script[0].pause", "{message}");
    let (path, message) = parse_error(&base(
        r#"[{"action": "promote_deployment", "deployment": "web", "groups": "web"}]"#,
    ));
    assert_eq!(path, "script[0].groups", "{message}");
    let (path, message) = parse_error(&base(r#"[{"action": "fail_deployment"}]"#));
    assert_eq!(path, "script[0].deployment", "{message}");
    assert!(message.contains("missing field `deployment`"), "{message}");
    let (path, message) = parse_error(&base(
        r#"[{"action": "set_alloc_health", "deployment": "web#1", "healthy": "web.web[0]"}]"#,
    ));
    assert_eq!(path, "script[0].healthy", "{message}");
    let (path, message) = parse_error(&base(
        r#"[{"action": "set_alloc_health", "deployment": "db", "healthy": ["web.web[0]"]}]"#,
    ));
    assert_eq!(path, "script[0].deployment", "{message}");
    let (path, message) = parse_error(
        r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
  "jobs": [{"id": "web", "groups": [{"name": "web", "update": {"health_check": "consul"}}]}]}"#,
    );
    assert_eq!(path, "jobs[0].groups[0].update.health_check", "{message}");
    assert!(message.contains("unknown health_check"), "{message}");
}

/// One sample action of every name (references valid in [`link_scenario`]).
fn sample_action(name: &str) -> serde_json::Value {
    use serde_json::json;
    let job = json!({"id": "web", "groups": [{"name": "web", "count": 2}]});
    let mut value = match name {
        "register_job" => json!({"job": job}),
        "update_job" => json!({"job": "web", "count": 3}),
        "stop_job" => json!({"job": "web"}),
        "revert_job" => json!({"job": "web", "version": 0, "enforce_prior_version": 1}),
        "drain_node" => json!({"node": "a", "enable": true}),
        "set_eligibility" => json!({"node": "a", "eligible": false}),
        "heartbeat" | "get_allocs" | "register" | "link_down" | "link_up" | "release" => {
            json!({"node": "a"})
        }
        "update_alloc" => {
            json!({"node": "a", "allocs": [{"alloc": "web.web[0]", "status": "failed"}]})
        }
        "task_fail" | "task_complete" | "task_restart" => json!({"alloc": "web.web[0]"}),
        "hold" => json!({"node": "a", "call": "#1"}),
        "deliver" | "drop" => json!({"node": "a", "call": "1"}),
        "reorder" => json!({"node": "a", "call": "1", "position": 0}),
        "delay" => json!({"node": "a", "call": "1", "by": "5s"}),
        "advance" => json!({"by": "10s"}),
        "step" | "run_until_idle" | "gc" => json!({}),
        "process_eval" => json!({"eval": "job-register:web"}),
        "assert" => json!({"checks": [{"node": "a", "status": "ready"}]}),
        "note" => json!({"text": "hello"}),
        "promote_deployment" => json!({"deployment": "web", "groups": ["web"]}),
        "pause_deployment" | "resume_deployment" | "fail_deployment" | "unblock_deployment" => {
            json!({"deployment": "web#0"})
        }
        "set_alloc_health" => {
            json!({"deployment": "web", "healthy": ["web.web[0]"], "unhealthy": ["web.web[1]"]})
        }
        other => panic!("no sample action for {other}: add one"),
    };
    value["action"] = json!(name);
    value
}

/// Every action name survives a v1 link (new names are written literally:
/// the link codec's frozen tables do not change).
#[test]
fn every_action_name_round_trips_through_a_link() {
    let script: Vec<serde_json::Value> = ACTION_NAMES.iter().map(|n| sample_action(n)).collect();
    let text = serde_json::json!({
        "version": 1,
        "name": "every-action",
        "nodes": [{"id": "a"}],
        "jobs": [{"id": "web", "groups": [{"name": "web", "count": 2, "update": {"canary": 1}}]}],
        "script": script,
    })
    .to_string();
    let parsed = scenario::parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let link = Link::new(parsed.clone());
    let decoded = decode_link(&encode_fragment(&link)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(decoded, link);
    let names: Vec<String> = decoded
        .scenario
        .script
        .iter()
        .map(|a| {
            serde_json::to_value(a).unwrap()["action"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ACTION_NAMES, "every action name, in order");
}

/// A deployment is also found by its ID or an ID prefix (8+ characters),
/// as `nomad deployment promote <prefix>` finds it.
#[test]
fn a_deployment_id_prefix_names_it() {
    use nomad_playground::scenario::format::Action;
    use nomad_playground::sim::history::Session;
    let path = format!(
        "{}/scenarios/canary-manual-promote.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("scenario");
    let mut session = Session::load(&text, Some("latest")).expect("load");
    // Up to the refused promotion: the canary is placed.
    for _ in 0..6 {
        session.step();
    }
    let latest = session
        .sim()
        .server
        .resolve_deployment("web")
        .expect("web has a deployment");
    let first = session
        .sim()
        .server
        .resolve_deployment("web#0")
        .expect("web#0");
    assert_ne!(latest, first);
    assert_eq!(
        session.sim().server.resolve_deployment(&latest[..8]),
        Some(latest.clone())
    );
    assert_eq!(session.sim().server.resolve_deployment("web#7"), None);
    assert_eq!(session.sim().server.resolve_deployment("web#x"), None);
    assert_eq!(session.sim().server.resolve_deployment("db"), None);
    session.apply(Action::PauseDeployment {
        deployment: latest[..8].to_string(),
    });
    let paused = &session.sim().server.state.deployments[&latest];
    assert_eq!(paused.status.as_str(), "paused");
    assert_eq!(paused.status_description, "Deployment is paused");
}
