//! The `reconcile` command through the built binary: pass, differences,
//! `--explain`, and malformed fixtures refused with exit 2 and a message
//! naming the file and the JSON path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nomad-playground"))
}

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/cases")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs the binary")
}

/// Writes `text` to a fresh temp file named `name` and returns its path.
fn temp_fixture(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nomad-playground-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write fixture");
    path
}

/// A valid fixture with one edit applied to its JSON.
fn broken(name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(case("lost-node.json")).expect("lost-node.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    edit(&mut v);
    temp_fixture(name, &v.to_string())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn check_passes_on_a_good_fixture() {
    let p = case("lost-node.json");
    let o = run(&["reconcile", "--check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn print_gives_result_json() {
    let p = case("lost-node.json");
    let o = run(&["reconcile", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_eq!(v["place"], 2);
    assert_eq!(v["create_deployment"], serde_json::Value::Null);
}

#[test]
fn check_reports_differences_with_exit_1() {
    let p = broken("differs.json", |v| {
        v["expect"]["place"] = serde_json::json!(7)
    });
    let o = run(&["reconcile", "--check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("place: want 7, got 2"), "{out}");
}

#[test]
fn explain_prints_a_table() {
    let p = case("lost-node.json");
    let o = run(&["reconcile", "--explain", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut lines = out.lines();
    let header = lines.next().expect("header");
    for col in ["ALLOC", "NAME", "NODE", "CLIENT", "SET", "RULE", "DECISION"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        out.lines()
            .any(|l| l.contains("lost") && l.contains("stop: lost")),
        "{out}"
    );
}

/// `--explain` on a `kind: node` fixture prints the same table: the
/// disconnecting alloc with its set and decision, and placements with `-`
/// for the alloc.
#[test]
fn explain_prints_a_node_table() {
    let p = case("node--disconnected-node--alloc-in-disconnected-client-is-marked-as-unknown.json");
    let o = run(&["reconcile", "--explain", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    let header = out.lines().next().expect("header");
    for col in ["ALLOC", "NAME", "NODE", "CLIENT", "SET", "RULE", "DECISION"] {
        assert!(header.contains(col), "{header}");
    }
    let row = out
        .lines()
        .find(|l| l.starts_with("a0 "))
        .unwrap_or_else(|| panic!("no row for a0:\n{out}"));
    let cells: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells[3], "running", "{row}");
    assert_eq!(cells[4], "disconnecting", "{row}");
    assert_eq!(cells.last(), Some(&"mark unknown"), "{row}");
    assert!(!out.contains("no per-alloc reasons"), "{out}");

    let p = case("node--placements--expect-placement-on-good-node.json");
    let o = run(&["reconcile", "--explain", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .skip(1)
            .any(|l| l.starts_with("- ") && l.ends_with("place")),
        "{out}"
    );
}

fn assert_refused(o: &Output, file: &str, path: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = stderr(o);
    assert!(err.contains(file), "message does not name the file: {err}");
    assert!(
        err.contains(path),
        "message does not name the path {path}: {err}"
    );
}

#[test]
fn not_json_is_refused() {
    let p = temp_fixture("not-json.json", "{ \"format\": 1,");
    let o = run(&["reconcile", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not-json.json"), "{}", stderr(&o));
}

#[test]
fn wrong_type_is_refused_with_its_path() {
    let p = broken("wrong-type.json", |v| {
        v["input"]["allocs"][1]["CreateIndex"] = serde_json::json!("seven")
    });
    let o = run(&["reconcile", "--check", p.to_str().unwrap()]);
    assert_refused(&o, "wrong-type.json", "$.input.allocs[1].CreateIndex");
}

#[test]
fn missing_now_is_refused() {
    let p = broken("missing-now.json", |v| {
        v["input"].as_object_mut().unwrap().remove("now");
    });
    let o = run(&["reconcile", p.to_str().unwrap()]);
    assert_refused(&o, "missing-now.json", "$.input.now");
}

#[test]
fn bad_time_is_refused_with_its_path() {
    let p = broken("bad-time.json", |v| {
        v["input"]["allocs"][0]["AllocStates"] =
            serde_json::json!([{"Field": "ClientStatus", "Value": "unknown", "Time": "yesterday"}]);
    });
    let o = run(&["reconcile", p.to_str().unwrap()]);
    assert_refused(&o, "bad-time.json", "$.input.allocs[0].AllocStates[0].Time");
}

#[test]
fn bad_format_and_kind_are_refused() {
    let p = broken("bad-format.json", |v| v["format"] = serde_json::json!(2));
    assert_refused(
        &run(&["reconcile", p.to_str().unwrap()]),
        "bad-format.json",
        "$.format",
    );
    let p = broken("bad-kind.json", |v| v["kind"] = serde_json::json!("system"));
    assert_refused(
        &run(&["reconcile", p.to_str().unwrap()]),
        "bad-kind.json",
        "$.kind",
    );
}

#[test]
fn bad_update_is_refused() {
    let p = broken("bad-update.json", |v| {
        v["input"]["update"] = serde_json::json!("sideways")
    });
    assert_refused(
        &run(&["reconcile", p.to_str().unwrap()]),
        "bad-update.json",
        "$.input.update",
    );
}

#[test]
fn bad_node_fixture_is_refused() {
    let text = std::fs::read_to_string(case("node--stops.json")).expect("node--stops.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["input"]["live_allocs"][0]["ModifyIndex"] = serde_json::json!(-1);
    let p = temp_fixture("bad-node.json", &v.to_string());
    assert_refused(
        &run(&["reconcile", p.to_str().unwrap()]),
        "bad-node.json",
        "$.input.live_allocs[0].ModifyIndex",
    );
}

#[test]
fn missing_file_and_bad_args_exit_2() {
    assert_eq!(
        run(&["reconcile", "/nonexistent/x.json"]).status.code(),
        Some(2)
    );
    assert_eq!(run(&["reconcile"]).status.code(), Some(2));
    assert_eq!(
        run(&["reconcile", "--frobnicate", "x.json"]).status.code(),
        Some(2)
    );
    assert_eq!(run(&["version"]).status.code(), Some(0));
}

#[test]
fn absurd_count_is_refused() {
    let p = broken("huge-count.json", |v| {
        v["input"]["job"]["TaskGroups"][0]["Count"] = serde_json::json!(4_000_000_000u64)
    });
    let o = run(&["reconcile", p.to_str().unwrap()]);
    assert_refused(&o, "huge-count.json", "$.input.job.TaskGroups[0].Count");
}
