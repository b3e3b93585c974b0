//! Runs every reconciler conformance fixture (kinds `cluster` and `node`)
//! from `tests/conformance/cases/` and, when it exists, from
//! `../shared/conformance/cases/` (where new fixtures arrive), and compares
//! each result with its `expect` by `compare.py`'s rules. The failure
//! message lists every failing file with its differences.

use nomad_playground::fixture::{FixtureKind, parse_fixture};
use std::path::{Path, PathBuf};

fn case_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        root.join("tests/conformance/cases"),
        root.join("../shared/conformance/cases"),
    ]
    .into_iter()
    .filter(|d| d.is_dir())
    .collect()
}

fn fixture_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in case_dirs() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_fixture_passes() {
    let files = fixture_files();
    assert!(!files.is_empty(), "no fixtures found");
    let mut failures = Vec::new();
    let (mut cluster, mut node) = (0, 0);
    for path in &files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fixture = match parse_fixture(&name, &text) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{name}: refused: {e}"));
                continue;
            }
        };
        match fixture.kind {
            FixtureKind::Cluster => cluster += 1,
            FixtureKind::Node => node += 1,
        }
        let diffs = fixture.compare(&fixture.run());
        if !diffs.is_empty() {
            failures.push(format!("{name}:\n  {}", diffs.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures fail ({cluster} cluster, {node} node read):\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    assert!(
        cluster >= 91,
        "expected at least the 91 shipped cluster fixtures, read {cluster}"
    );
}

#[test]
fn result_json_has_every_key() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/cases/lost-node.json");
    let text = std::fs::read_to_string(&path).expect("lost-node.json");
    let fixture = parse_fixture("lost-node.json", &text).expect("parses");
    let result = fixture.run();
    for key in [
        "place",
        "stop",
        "destructive",
        "inplace",
        "attribute_updates",
        "disconnect_updates",
        "reconnect_updates",
        "desired_tg_updates",
        "create_deployment",
        "deployment_updates",
        "place_names",
        "place_previous",
        "stop_ids",
        "destructive_ids",
        "inplace_ids",
        "reconnect_ids",
        "disconnect_ids",
        "attribute_update_ids",
        "followup_evals",
        "followup_wait_until",
        "place_rescheduled",
    ] {
        assert!(result.get(key).is_some(), "missing key {key}");
    }
    let groups = result["desired_tg_updates"].as_object().expect("object");
    for counters in groups.values() {
        assert_eq!(
            counters.as_object().map(|o| o.len()),
            Some(12),
            "{counters}"
        );
    }
}

#[test]
fn a_wrong_expectation_is_reported() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/cases/drain-node.json");
    let text = std::fs::read_to_string(&path).expect("drain-node.json");
    let mut fixture = parse_fixture("drain-node.json", &text).expect("parses");
    fixture.expect["place"] = serde_json::json!(3);
    fixture.expect["stop_ids"] = serde_json::json!(["a0", "a9"]);
    let diffs = fixture.compare(&fixture.run());
    assert_eq!(diffs.len(), 2, "{diffs:?}");
    assert!(diffs[0].starts_with("place: want 3, got 2"), "{diffs:?}");
}
