//! Importers: Nomad API JSON samples (written from Nomad's `api/` and
//! `nomad/structs` types), a debug bundle's list files and an HCL jobspec
//! import to the expected scenarios, with warnings that name the field;
//! bad input gives errors with positions; arbitrary input never panics.

use nomad_playground::import::{ImportError, import, import_text};
use nomad_playground::scenario::{self, duration::Dur};
use proptest::prelude::*;
use std::path::Path;

fn sample(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/samples/import")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn import_files(names: &[&str]) -> nomad_playground::import::Imported {
    let texts: Vec<String> = names.iter().map(|n| sample(n)).collect();
    let inputs: Vec<(&str, &str)> = names
        .iter()
        .zip(&texts)
        .map(|(n, t)| (*n, t.as_str()))
        .collect();
    import(&inputs).unwrap_or_else(|e| panic!("{names:?}: {e}"))
}

fn expect(names: &[&str], expected: &str) -> Vec<String> {
    let imported = import_files(names);
    let want = scenario::parse(&sample(&format!("expected/{expected}"))).unwrap();
    assert_eq!(imported.scenario, want, "{names:?}");
    imported.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn job_inspect_output_imports() {
    let warnings = expect(&["job-inspect.json"], "job-inspect.json");
    let imported = import_files(&["job-inspect.json"]);
    let group = &imported.scenario.jobs[0].groups[0];
    assert_eq!(group.count, Some(3));
    assert_eq!(group.cpu, Some(200));
    let disconnect = group.disconnect.as_ref().unwrap();
    assert_eq!(disconnect.lost_after, Some(Dur::mins(10)));
    assert_eq!(disconnect.reconcile.as_deref(), Some("best_score"));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("Job.TaskGroups[0].Networks") && w.contains("not supported")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("Job.Constraints[0]") && w.contains("${attr.kernel.name}")),
        "{warnings:?}"
    );
}

#[test]
fn bare_job_equals_wrapped_job() {
    let wrapped: serde_json::Value = serde_json::from_str(&sample("job-inspect.json")).unwrap();
    let bare = wrapped["Job"].to_string();
    let a = import_text("job.json", &bare).unwrap();
    let b = import_text("job.json", &sample("job-inspect.json")).unwrap();
    assert_eq!(a.scenario.jobs, b.scenario.jobs);
}

#[test]
fn node_and_its_allocations_import() {
    let warnings = expect(
        &["node.json", "node-allocations.json"],
        "node-and-allocations.json",
    );
    let imported = import_files(&["node.json", "node-allocations.json"]);
    let node = imported
        .scenario
        .nodes
        .iter()
        .find(|n| n.name.as_deref() == Some("client-1"))
        .unwrap();
    // NodeResources minus ReservedResources.
    assert_eq!((node.cpu, node.memory_mb), (Some(7500), Some(15000)));
    // The newest job version (2, count 3) wins over the older embedded one.
    assert_eq!(imported.scenario.jobs[0].groups[0].count, Some(3));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("no initial allocations"))
    );
    let note = match &imported.scenario.script[0] {
        scenario::format::Action::Note { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        note.contains("web.web[0]") && note.contains("ClientStatus=unknown"),
        "{note}"
    );
    assert!(note.contains("client lost, desired stop"), "{note}");
}

#[test]
fn allocation_and_evaluations_import() {
    let warnings = expect(
        &["allocation.json", "evaluations.json"],
        "allocation-and-evaluations.json",
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("evaluations.json: [0]: evaluation 9c7f0b5e")),
        "{warnings:?}"
    );
}

#[test]
fn debug_bundle_list_stubs_warn_about_what_they_lack() {
    let warnings = expect(
        &[
            "debug-jobs.json",
            "debug-allocations.json",
            "debug-nodes.json",
        ],
        "debug-bundle.json",
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("list stub") && w.contains("nomad job inspect web"))
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("allocation 5a3c3d8e is a list stub"))
    );
    assert!(warnings.iter().any(|w| w.contains("has no resources")));
}

#[test]
fn hcl_jobspec_imports() {
    let warnings = expect(&["web.nomad.hcl"], "web-hcl.json");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("job[web].group[web] (line 36)") && w.contains("network")),
        "{warnings:?}"
    );
}

#[test]
fn errors_name_the_field() {
    let e = import_text(
        "j.json",
        r#"{"Job":{"ID":"x","TaskGroups":[{"Name":"g","Count":"three"}]}}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "j.json: Job.TaskGroups[0].Count: expected an integer, found a string"
    );
    let e = import_text(
        "j.json",
        r#"{"Job":{"ID":"x","TaskGroups":[{"Name":"g","Disconnect":{"LostAfter":-5}}]}}"#,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("Job.TaskGroups[0].Disconnect.LostAfter"),
        "{e}"
    );
    let e = import_text("j.json", "{\"Job\": {").unwrap_err();
    assert!(matches!(e, ImportError::Json { line: 1, .. }), "{e}");
    let e = import_text("j.json", r#"{"Foo": 1}"#).unwrap_err();
    assert!(e.to_string().contains("not a Nomad job"), "{e}");
    let e = import_text(
        "a.hcl",
        "job \"x\" {\n  group \"g\" {\n    count = \"3\"\n  }\n}\n",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "a.hcl: job[x].group[g].count (line 3): expected an integer, found a string"
    );
    let e = import_text("a.hcl", "job \"x\" {\n  group \"g\" {\n    disconnect {\n      lost_after = \"ten\"\n    }\n  }\n}\n")
        .unwrap_err();
    assert!(e.to_string().contains("invalid duration \"ten\""), "{e}");
    let e = import_text("a.hcl", "job \"x\" {\n  count = var.n\n}\n").unwrap_err();
    assert!(matches!(e, ImportError::Hcl { line: 2, .. }), "{e}");
    assert_eq!(import(&[]).unwrap_err(), ImportError::Empty);
}

#[test]
fn legacy_disconnect_fields_import_from_hcl() {
    let imported = import_text(
        "legacy.hcl",
        r#"
job "batchy" {
  type = "batch"
  group "g" {
    stop_after_client_disconnect = "90s"
    prevent_reschedule_on_lost   = true
    ephemeral_disk {
      sticky  = true
      migrate = true
      size    = 500
    }
    update { max_parallel = 0 }
    task "t" {
      driver = "exec"
      leader = true
    }
  }
}
"#,
    )
    .unwrap();
    let job = &imported.scenario.jobs[0];
    assert_eq!(job.job_type.as_deref(), Some("batch"));
    let group = &job.groups[0];
    assert_eq!(group.stop_after_client_disconnect, Some(Dur::secs(90)));
    assert_eq!(group.prevent_reschedule_on_lost, Some(true));
    assert!(
        group
            .ephemeral_disk
            .as_ref()
            .is_some_and(|d| d.sticky && d.migrate)
    );
    assert_eq!(group.update, None);
    assert_eq!(group.tasks.as_ref().unwrap()[0].leader, Some(true));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = import_text("fuzz", &text);
    }

    #[test]
    fn hcl_like_text_never_panics(text in "[a-z \"{}=\\[\\],\n#/*<0-9.$-]{0,200}") {
        let _ = import_text("fuzz.hcl", &text);
        let _ = import_text("fuzz.hcl", &format!("job \"j\" {{\n group \"g\" {{\n{text}\n}}\n}}"));
    }

    #[test]
    fn json_like_text_never_panics(text in "[\\[\\]{}:,\"A-Za-z0-9 .-]{0,200}") {
        let _ = import_text("fuzz.json", &format!("{{{text}"));
        let _ = import_text("fuzz.json", &format!("{{\"Job\":{{\"ID\":\"x\",\"TaskGroups\":[{{{text}"));
    }

    #[test]
    fn mutated_samples_never_panic(at in 0usize..5000, byte in any::<u8>()) {
        for name in ["job-inspect.json", "node-allocations.json", "web.nomad.hcl"] {
            let mut bytes = sample(name).into_bytes();
            let i = at % bytes.len();
            bytes[i] = byte;
            let text = String::from_utf8_lossy(&bytes);
            let _ = import_text(name, &text);
        }
    }
}

/// `update.health_check` comes through import, so a jobspec with manual
/// health imports as a rollout that waits for `set_alloc_health`; a value
/// Nomad does not know is refused with the field's path.
#[test]
fn health_check_mode_imports_from_hcl() {
    let jobspec = |mode: &str| {
        format!(
            "job \"web\" {{\n  group \"web\" {{\n    update {{\n      max_parallel = 1\n      health_check = \"{mode}\"\n    }}\n    task \"t\" {{\n      driver = \"exec\"\n    }}\n  }}\n}}\n"
        )
    };
    let imported = import_text("web.hcl", &jobspec("manual")).unwrap();
    let update = imported.scenario.jobs[0].groups[0].update.as_ref().unwrap();
    assert_eq!(update.health_check.as_deref(), Some("manual"));
    let e = import_text("web.hcl", &jobspec("bogus")).unwrap_err();
    assert!(e.to_string().contains("health_check"), "{e}");
}
