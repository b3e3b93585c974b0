//! Bad scenarios are refused with the JSON path of the problem, never a
//! panic.

use nomad_playground::scenario::{self, ScenarioError};

fn err(text: &str) -> ScenarioError {
    scenario::parse(text).expect_err("must be refused")
}

fn path_of(e: &ScenarioError) -> String {
    match e {
        ScenarioError::Parse { path, .. } | ScenarioError::Invalid { path, .. } => path.clone(),
        ScenarioError::Version { .. } => "version".to_string(),
    }
}

const MINIMAL: &str = r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}]}"#;

#[test]
fn minimal_scenario_parses() {
    let parsed = scenario::parse(MINIMAL).expect("minimal");
    assert_eq!(parsed.nodes.len(), 1);
}

#[test]
fn newer_or_missing_version_is_refused() {
    let e = err(r#"{"version": 2, "name": "t", "nodes": []}"#);
    assert!(matches!(e, ScenarioError::Version { .. }), "{e}");
    assert!(
        e.to_string().contains("version 2") || e.to_string().contains("2"),
        "{e}"
    );
    let e = err(r#"{"name": "t", "nodes": []}"#);
    assert_eq!(path_of(&e), "version");
    let e = err(r#"{"version": "1", "name": "t", "nodes": []}"#);
    assert!(matches!(e, ScenarioError::Version { .. }), "{e}");
}

#[test]
fn wrong_types_carry_the_json_path() {
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a", "cpu": "lots"}]}"#);
    assert_eq!(path_of(&e), "nodes[0].cpu", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
            "script": [{"action": "advance", "by": "ten minutes"}]}"#);
    // Inside an internally tagged enum serde reports the action's path.
    assert!(path_of(&e).starts_with("script[0]"), "{e}");
    assert!(e.to_string().contains("invalid duration"), "{e}");
    let e = err(
        r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}], "script": [{"action": "fly"}]}"#,
    );
    assert_eq!(path_of(&e), "script[0].action", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a", "colour": "red"}]}"#);
    assert_eq!(path_of(&e), "nodes[0].colour", "{e}");
    let e = err("{not json");
    assert!(matches!(e, ScenarioError::Parse { line: 1, .. }), "{e}");
}

#[test]
fn bad_references_carry_the_json_path() {
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
            "script": [{"action": "link_down", "node": "b"}]}"#);
    assert_eq!(path_of(&e), "script[0].node", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
            "script": [{"action": "stop_job", "job": "web"}]}"#);
    assert_eq!(path_of(&e), "script[0].job", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "profile": "nonsense", "nodes": []}"#);
    assert_eq!(path_of(&e), "profile", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}, {"id": "a"}]}"#);
    assert_eq!(path_of(&e), "nodes[1].id", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
            "jobs": [{"id": "web", "groups": [{"name": "web", "nodes": ["z"]}]}]}"#);
    assert_eq!(path_of(&e), "jobs[0].groups[0].nodes[0]", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
            "script": [{"action": "assert", "profiles": ["~1.4"], "checks": []}]}"#);
    assert_eq!(path_of(&e), "script[0].profiles[0]", "{e}");
    let e = err(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
            "script": [{"action": "assert", "checks": [{"node": "a", "alloc": "x"}]}]}"#);
    assert_eq!(path_of(&e), "script[0].checks[0]", "{e}");
}

#[test]
fn runtime_references_fail_the_action_not_the_process() {
    let text = r##"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
        "script": [{"action": "task_fail", "alloc": "nothing[0]"},
                   {"action": "deliver", "node": "a", "call": "#99"},
                   {"action": "process_eval", "eval": "job-register:none"}]}"##;
    let (session, errors) = nomad_playground::scenario::cli::play(text, None).expect("play");
    assert_eq!(errors, 3);
    assert!(session.records().iter().skip(1).all(|r| r.error.is_some()));
}

#[test]
fn cli_check_exit_codes() {
    let read = |path: &str| -> Result<String, String> {
        match path {
            "ok.json" => Ok(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
                "script": [{"action": "assert", "checks": [{"node": "a", "status": "ready"}]}]}"#
                .to_string()),
            "fail.json" => Ok(r#"{"version": 1, "name": "t", "nodes": [{"id": "a"}],
                "script": [{"action": "assert", "checks": [{"node": "a", "status": "down"}]}]}"#
                .to_string()),
            _ => Err("no such file".to_string()),
        }
    };
    let run = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = scenario::cli::run(&args, &read, &mut out, &mut err);
        (code, String::from_utf8(out).expect("utf8"))
    };
    assert_eq!(run(&["ok.json", "--check"]).0, 0);
    assert_eq!(run(&["fail.json", "--check"]).0, 1);
    assert_eq!(run(&["fail.json"]).0, 0);
    assert_eq!(run(&["missing.json"]).0, 2);
    let (code, json) = run(&["ok.json", "--json"]);
    assert_eq!(code, 0);
    let value: serde_json::Value = serde_json::from_str(&json).expect("json output");
    assert_eq!(value["nodes"][0]["ID"], "a");
    assert_eq!(value["nodes"][0]["Status"], "ready");
    assert!(value["allocations"].is_array());
    assert!(value["evals"].is_array());
}
