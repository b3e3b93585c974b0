//! The `link`, `unlink`, `import` and `export` commands, driven through
//! their library entry points with an in-memory file reader.

use nomad_playground::{export, import, share};

fn read(path: &str) -> Result<String, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).map_err(|e| e.to_string())
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A command entry point over in-memory output buffers.
type Command<'a> = &'a dyn Fn(&[String], &mut Vec<u8>, &mut Vec<u8>) -> u8;

fn run(f: Command<'_>, list: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = f(&args(list), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn link_then_unlink_gives_the_scenario_back() {
    let link = |a: &[String], o: &mut Vec<u8>, e: &mut Vec<u8>| share::cli::link(a, &read, o, e);
    let (code, url, _) = run(
        &link,
        &[
            "scenarios/issue-14925.json",
            "--step",
            "4",
            "--profile",
            "1.4.3",
            "--base",
            "https://x/",
        ],
    );
    assert_eq!(code, 0);
    assert!(url.starts_with("https://x/#v1."), "{url}");
    let unlink = |a: &[String], o: &mut Vec<u8>, e: &mut Vec<u8>| share::cli::unlink(a, o, e);
    let (code, json, err) = run(&unlink, &[url.trim()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json, read("scenarios/issue-14925.json").unwrap());
    assert_eq!(err, "step: 4\nprofile: 1.4.3\n");
    let (code, _, err) = run(&unlink, &["https://x/#v1.garbage"]);
    assert_eq!(code, 2);
    assert!(err.contains("damaged"), "{err}");
    let (code, _, err) = run(&link, &["scenarios/issue-14925.json", "--step", "99"]);
    assert_eq!(code, 2);
    assert!(err.contains("past the end"), "{err}");
    let (code, _, err) = run(
        &link,
        &["scenarios/issue-14925.json", "--profile", "no-such-profile"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("unknown profile"), "{err}");
}

#[test]
fn import_prints_a_scenario_and_warnings() {
    let imp = |a: &[String], o: &mut Vec<u8>, e: &mut Vec<u8>| import::cli::run(a, &read, o, e);
    let (code, json, err) = run(&imp, &["tests/samples/import/web.nomad.hcl"]);
    assert_eq!(code, 0, "{err}");
    assert!(nomad_playground::scenario::parse(&json).is_ok());
    assert!(err.contains("warning: "), "{err}");
    let (code, _, err) = run(&imp, &["tests/samples/import/missing.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
    let (code, _, _) = run(&imp, &[]);
    assert_eq!(code, 2);
}

#[test]
fn export_modes() {
    let exp = |a: &[String], o: &mut Vec<u8>, e: &mut Vec<u8>| export::cli::run(a, &read, o, e);
    let file = "scenarios/issue-14925.json";
    let (code, text, _) = run(&exp, &["--mermaid", file]);
    assert_eq!(code, 0);
    assert!(text.starts_with("sequenceDiagram"));
    let (code, text, _) = run(&exp, &["--trace-json", file]);
    assert_eq!(code, 0);
    assert!(
        serde_json::from_str::<serde_json::Value>(&text)
            .unwrap()
            .is_array()
    );
    let (code, text, err) = run(&exp, &["--fixture", "node-update:web", file]);
    assert_eq!(code, 0, "{err}");
    assert!(nomad_playground::fixture::parse_fixture("x", &text).is_ok());
    let (code, text, _) = run(&exp, &["--issue", "--step", "3", file]);
    assert_eq!(code, 0);
    assert!(text.contains("at step 3"), "{text}");
    let (code, text, _) = run(&exp, &["--scenario", file]);
    assert_eq!(code, 0);
    assert_eq!(text, read(file).unwrap());
    let (code, _, err) = run(&exp, &["--mermaid", "--issue", file]);
    assert_eq!(code, 2);
    assert!(err.contains("give one of"), "{err}");
    let (code, _, err) = run(&exp, &["--fixture", "nope:nope", file]);
    assert_eq!(code, 2);
    assert!(err.contains("no processed eval"), "{err}");
}
