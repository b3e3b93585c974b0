//! The code-size helpers give the same results as the code they replace:
//! `scenario::json` (one serializer for a scenario's three JSON forms)
//! against serde_json's own `to_value`, `to_string` and
//! `to_string_pretty`, and `scenario::deserialize_nested` against reading
//! the scenario directly.

use nomad_playground::playground::BUILTIN_SCENARIOS;
use nomad_playground::scenario::format::Scenario;
use nomad_playground::scenario::{self, json};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn scenarios() -> Vec<Scenario> {
    let mut texts: Vec<String> = BUILTIN_SCENARIOS
        .iter()
        .map(|s| s.json.to_string())
        .collect();
    for dir in ["tests/data", "tests/data/explore"] {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for path in paths {
            texts.push(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    texts
        .iter()
        .filter_map(|text| scenario::parse(text).ok())
        .collect()
}

fn same_three_forms<T: Serialize + std::fmt::Debug>(value: &T) {
    assert_eq!(
        json::to_value(value).ok(),
        serde_json::to_value(value).ok(),
        "to_value of {value:?}"
    );
    assert_eq!(
        json::to_string(value).ok(),
        serde_json::to_string(value).ok(),
        "to_string of {value:?}"
    );
    assert_eq!(
        json::to_string_pretty(value).ok(),
        serde_json::to_string_pretty(value).ok(),
        "to_string_pretty of {value:?}"
    );
}

#[test]
fn scenarios_and_actions_serialize_as_serde_json_does() {
    let scenarios = scenarios();
    assert!(scenarios.len() >= BUILTIN_SCENARIOS.len());
    let mut actions = 0;
    for scenario in &scenarios {
        same_three_forms(scenario);
        for action in &scenario.script {
            same_three_forms(action);
            actions += 1;
        }
        let mut printed = serde_json::to_string_pretty(scenario).unwrap_or_default();
        printed.push('\n');
        assert_eq!(scenario::print(scenario), printed);
    }
    assert!(actions > 100, "{actions} actions");
}

#[test]
fn floats_and_odd_numbers_serialize_as_serde_json_does() {
    let text = r#"{"version":1,"name":"f","server":{"max_heartbeats_per_second":0.30000000000000004},
        "nodes":[{"id":"node-a"}],
        "script":[{"action":"update_job","job":"j","config":{"x":1e300,"y":-0.0,"z":[1.5,-7,18446744073709551615],"w":{}, "v":[]}}]}"#;
    // Read without validation: only the serialized forms matter here.
    let scenario: Scenario = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    same_three_forms(&scenario);
    for x in [
        0.1_f64,
        1.0 / 3.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        -0.0,
        f64::NAN,
    ] {
        same_three_forms(&x);
        same_three_forms(&vec![Some(x), None]);
    }
    same_three_forms(&u128::from(u64::MAX));
    same_three_forms(&i128::from(i64::MIN));
    same_three_forms(&-5_i8);
    // Not in scenarios, so not compiled in: refused.
    assert!(json::to_string(&1.1_f32).is_err());
    assert!(json::to_value(&(u128::from(u64::MAX) + 1)).is_err());
}

#[derive(Debug, Serialize)]
enum Shapes {
    Unit,
    Newtype(u32),
    Tuple(u8, String),
    Struct { a: bool, b: Option<char> },
}

#[derive(Debug, Serialize)]
struct Empty {}

#[derive(Debug, Serialize)]
struct Unit;

#[derive(Debug, Serialize)]
struct Wrapper(Vec<u8>);

#[derive(Debug, Serialize)]
#[serde(tag = "kind")]
enum Tagged {
    Plain {},
    WithMap { map: BTreeMap<u64, Vec<Empty>> },
}

#[test]
fn every_shape_serializes_as_serde_json_does() {
    same_three_forms(&vec![
        Shapes::Unit,
        Shapes::Newtype(3),
        Shapes::Tuple(4, "x\"y\n".into()),
        Shapes::Struct {
            a: true,
            b: Some('é'),
        },
    ]);
    same_three_forms(&(Empty {}, Unit, Wrapper(vec![1, 2]), (), Vec::<u8>::new()));
    let mut map = BTreeMap::new();
    map.insert(7, vec![Empty {}]);
    map.insert(2, Vec::new());
    same_three_forms(&vec![Tagged::Plain {}, Tagged::WithMap { map }]);
    let mut bools = BTreeMap::new();
    bools.insert(true, 1);
    same_three_forms(&bools);
    same_three_forms(&serde_bytes_like());
}

/// Bytes the way `serialize_bytes` sends them.
fn serde_bytes_like() -> impl Serialize + std::fmt::Debug {
    #[derive(Debug)]
    struct Bytes(&'static [u8]);
    impl Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    Bytes(b"ab")
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Message {
    Done {
        #[serde(deserialize_with = "scenario::deserialize_nested")]
        scenario: Scenario,
    },
}

#[test]
fn a_nested_scenario_reads_as_the_scenario_itself() {
    for scenario in scenarios() {
        let text = format!(
            r#"{{"type":"done","scenario":{}}}"#,
            serde_json::to_string(&scenario).unwrap_or_default()
        );
        let message: Message = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let Message::Done { scenario: read } = message;
        assert_eq!(read, scenario);
    }
    let bad = r#"{"type":"done","scenario":{"version":1,"name":"x","nodes":"none"}}"#;
    assert!(serde_json::from_str::<Message>(bad).is_err());
}
