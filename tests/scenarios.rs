//! Golden traces of the built-in scenarios (`scenarios/*.json`), one
//! snapshot per scenario and profile of its `profiles` list, and the
//! assertions each scenario carries.
//!
//! Set `NOMAD_PLAYGROUND_CANONICALIZE=1` to rewrite the scenario files in
//! canonical form (what `scenario::print` writes).

use nomad_playground::scenario;
use nomad_playground::scenario::cli::play;
use nomad_playground::sim::trace::trace_text;
use std::path::PathBuf;

fn scenario_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Profiles under which a scenario's assertions are known not to hold
/// because the cluster reconciler does not model that version's rule yet
/// (see the sim report): (scenario, profile).
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[];

#[test]
fn scenarios_are_canonical_and_round_trip() {
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).expect("read");
        let parsed = scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let printed = scenario::print(&parsed);
        if std::env::var_os("NOMAD_PLAYGROUND_CANONICALIZE").is_some() {
            std::fs::write(&path, &printed).expect("write");
            continue;
        }
        assert_eq!(printed, text, "{} is not in canonical form", path.display());
        assert_eq!(scenario::parse(&printed).expect("reparse"), parsed);
    }
}

#[test]
fn golden_traces() {
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).expect("read");
        let parsed = scenario::parse(&text).expect("parse");
        let profiles = parsed
            .profiles
            .clone()
            .unwrap_or_else(|| vec![parsed.profile.clone().unwrap_or_else(|| "latest".into())]);
        for profile in profiles {
            let (session, errors) = play(&text, Some(&profile)).expect("play");
            let sim = session.sim();
            let mut golden = format!(
                "# {} under {profile}: {} assertions passed, {} failed, {errors} action errors\n",
                parsed.name, sim.assertions.0, sim.assertions.1
            );
            golden.push_str(&trace_text(&session.trace()));
            insta::assert_snapshot!(format!("{}@{profile}", parsed.name), golden);
            assert_eq!(
                errors, 0,
                "{} under {profile}: an action failed",
                parsed.name
            );
            let known = KNOWN_DIVERGENCES.contains(&(parsed.name.as_str(), profile.as_str()));
            if known {
                assert!(
                    sim.assertions.1 > 0,
                    "{} under {profile} now passes: drop it from KNOWN_DIVERGENCES",
                    parsed.name
                );
            } else {
                assert_eq!(
                    sim.assertions.1, 0,
                    "{} under {profile}: assertions failed",
                    parsed.name
                );
            }
            assert!(sim.assertions.0 > 0, "{} checks nothing", parsed.name);
        }
    }
}
