//! Exporters over real sessions: trace JSON round-trips, the Mermaid
//! diagram shows the calls and evals, every processed cluster eval of every
//! built-in scenario exports to a fixture that reads back and, replayed under
//! the session's profile, gives the DesiredTGUpdates the simulator recorded,
//! and the issue body carries a link that reopens the session.

use nomad_playground::export::{
    fixture::{FixtureExportError, eval_fixture},
    issue::issue_body,
    mermaid::mermaid,
    session_link, trace_json,
};
use nomad_playground::fixture::parse_fixture;
use nomad_playground::share::decode_link;
use nomad_playground::sim::history::Session;
use nomad_playground::sim::trace::{TraceEntry, TraceEvent};
use std::path::Path;

fn load(name: &str) -> Session {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut session = Session::load(&text, None).unwrap();
    session.run_to_end();
    session
}

fn builtin_names() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

#[test]
fn trace_json_round_trips() {
    let session = load("issue-14925.json");
    let trace = session.trace();
    let back: Vec<TraceEntry> = serde_json::from_str(&trace_json(&trace)).unwrap();
    assert_eq!(back, trace);
}

#[test]
fn mermaid_shows_calls_and_evals() {
    let session = load("issue-14925.json");
    let text = mermaid(&session.trace());
    assert!(text.starts_with("sequenceDiagram\n"));
    assert!(text.contains("participant C2 as node-c"), "{text}");
    assert!(text.contains("Server->>Scheduler: eval "), "{text}");
    assert!(text.contains("node-update for web"), "{text}");
    assert!(text.contains("C2-xServer: Node.UpdateStatus"), "{text}");
    assert!(text.contains("node node-c ready → disconnected"), "{text}");
    // Mermaid specials never reach a message.
    for line in text.lines().skip(1) {
        assert!(!line.contains(';') && !line.contains('#'), "{line}");
    }
    // Routine heartbeats are left out.
    assert!(!text.contains("status=ready"), "{text}");
}

#[test]
fn every_cluster_eval_exports_to_a_faithful_fixture() {
    let mut exported = 0;
    let dir = std::env::temp_dir().join(format!("np-export-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for name in builtin_names() {
        let session = load(&name);
        let evals: Vec<String> = session
            .trace()
            .into_iter()
            .filter_map(|e| match e.event {
                TraceEvent::EvalProcessed(processed) => Some(String::from(processed.eval)),
                _ => None,
            })
            .collect();
        for eval in evals {
            match eval_fixture(&session, &eval) {
                Ok(fixture) => {
                    let text = serde_json::to_string_pretty(&fixture).unwrap();
                    let parsed = parse_fixture(&name, &text)
                        .unwrap_or_else(|e| panic!("{name} {eval}: {e}"));
                    // The fixture passes against its own expect.
                    assert_eq!(parsed.compare(&parsed.run()), Vec::<String>::new());
                    let note = fixture["note"].as_str().unwrap();
                    assert!(
                        note.contains("gives the DesiredTGUpdates the simulator recorded"),
                        "{name} {eval}: {note}"
                    );
                    exported += 1;
                    let file = dir.join(format!("{exported}.json"));
                    std::fs::write(&file, &text).unwrap();
                    files.push(file);
                }
                // System jobs and evals created and processed inside one
                // run_until_idle cannot be exported; they must say so.
                Err(FixtureExportError::NotCluster(_)) => {}
                Err(e @ FixtureExportError::Rebuild { .. }) => {
                    assert!(name.contains("10200"), "{name} {eval}: {e}");
                }
                Err(e) => panic!("{name} {eval}: {e}"),
            }
        }
    }
    assert!(exported >= 40, "only {exported} fixtures exported");
    // Every export is in FORMAT.md form: the conformance suite's own
    // validator (keys and types) accepts it.
    let validator = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance/validate.py");
    let out = std::process::Command::new("python3")
        .arg(validator)
        .args(&files)
        .output()
        .expect("python3 runs tests/conformance/validate.py");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "validate.py refused exported fixtures:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn eval_references() {
    let session = load("issue-14925.json");
    let by_trigger = eval_fixture(&session, "node-update:web").unwrap();
    let id = by_trigger["input"]["eval_id"].as_str().unwrap().to_string();
    let by_prefix = eval_fixture(&session, &id[..8]).unwrap();
    assert_eq!(by_trigger, by_prefix);
    assert!(matches!(
        eval_fixture(&session, "nope:web"),
        Err(FixtureExportError::NotFound(_))
    ));
    assert!(matches!(
        eval_fixture(&session, ""),
        Err(FixtureExportError::NotFound(_))
    ));
}

#[test]
fn issue_body_links_back_to_the_session() {
    let mut session = load("issue-14925.json");
    session.jump(5);
    session.set_profile("1.4.3").unwrap();
    let body = issue_body(&session, "https://play.example/");
    assert!(body.contains("**Profile:** `1.4.3`"), "{body}");
    assert!(body.contains("```mermaid\nsequenceDiagram"), "{body}");
    let start = body.find("https://play.example/#").unwrap();
    let end = start + body[start..].find(')').unwrap();
    let link = decode_link(&body[start..end]).unwrap();
    assert_eq!(link, session_link(&session));
    assert_eq!(link.step, Some(session.cursor() as u64));
    assert_eq!(link.profile.as_deref(), Some("1.4.3"));
}

#[test]
fn a_link_reopens_in_the_playground() {
    let session = load("pr-15068-heartbeat-order.json");
    let link = decode_link(&nomad_playground::share::encode_link(
        "http://x/",
        &session_link(&session),
    ))
    .unwrap();
    let json = nomad_playground::scenario::print(&link.scenario);
    let playground = nomad_playground::playground::Playground::load(&json, link.profile.as_deref());
    assert!(playground.is_ok());
}

/// The operator's deployment calls are notes over the server, refused ones
/// with Nomad's reason.
#[test]
fn mermaid_shows_the_operators_calls() {
    let session = load("canary-manual-promote.json");
    let text = mermaid(&session.trace());
    let refused = text
        .lines()
        .find(|l| l.contains("Note over Server: operator Deployment.Promote refused:"))
        .unwrap_or_else(|| panic!("no refused promotion:\n{text}"));
    assert!(refused.contains("healthy allocations"), "{refused}");
    assert!(
        text.contains("Note over Server: operator Deployment.Promote accepted"),
        "{text}"
    );
}
