//! Scenario links: round trips for every built-in scenario, the length
//! budget against lz-string, frozen golden links, and property tests
//! (generated scenarios round-trip; arbitrary input never panics).

#[path = "share_lzstring.rs"]
mod lzstring;

use nomad_playground::scenario::{self, format::Scenario};
use nomad_playground::share::{Link, LinkError, decode_link, encode_fragment, encode_link};
use proptest::prelude::*;
use std::path::Path;

fn builtin() -> Vec<(String, Scenario)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let scenario = scenario::parse(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            scenario,
        ));
    }
    assert!(!out.is_empty());
    out
}

#[test]
fn every_builtin_scenario_round_trips() {
    for (name, scenario) in builtin() {
        for (step, profile) in [(None, None), (Some(3), Some("1.4.2".to_string()))] {
            let link = Link {
                scenario: scenario.clone(),
                step,
                profile,
            };
            let text = encode_link("http://127.0.0.1:8080/", &link);
            assert_eq!(decode_link(&text).as_ref(), Ok(&link), "{name}");
        }
    }
}

#[test]
fn builtin_links_are_at_most_half_of_lz_string() {
    for (name, scenario) in builtin() {
        let json = serde_json::to_string(&scenario).unwrap();
        let lz = lzstring::compress_to_encoded_uri_component(&json).len();
        let ours = encode_fragment(&Link::new(scenario)).len();
        let ratio = ours as f64 / lz as f64;
        assert!(ratio <= 0.5, "{name}: {ours} / {lz} = {ratio:.3}");
    }
}

/// Golden links: each file in tests/samples/links/ holds a link made by a
/// released build and the scenario it must open, frozen forever.
#[test]
fn golden_links_still_open() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples/links");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "link") {
            continue;
        }
        let link_text = std::fs::read_to_string(&path).unwrap();
        let expected_text = std::fs::read_to_string(path.with_extension("json")).unwrap();
        let expected: serde_json::Value = serde_json::from_str(&expected_text).unwrap();
        let link = decode_link(&link_text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert_eq!(link.step, expected["step"].as_u64(), "{path:?}");
        assert_eq!(
            link.profile.as_deref(),
            expected["profile"].as_str(),
            "{path:?}"
        );
        let scenario: Scenario = serde_json::from_value(expected["scenario"].clone()).unwrap();
        assert_eq!(link.scenario, scenario, "{path:?}");
        count += 1;
    }
    assert!(count >= 2, "golden links missing in {dir:?}");
}

#[test]
fn damaged_links_say_what_is_wrong() {
    let (_, scenario) = builtin().remove(0);
    let good = encode_fragment(&Link::new(scenario));
    // Cut short.
    let cut = &good[..good.len() / 2];
    let e = decode_link(cut).unwrap_err();
    assert!(e.to_string().contains("damaged"), "{e}");
    // One character changed in the middle.
    let mut bytes = good.clone().into_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    assert!(decode_link(&tampered).is_err() || decode_link(&tampered) != decode_link(&good));
    assert_eq!(
        decode_link("http://127.0.0.1:8080/#v7.abc"),
        Err(LinkError::UnknownVersion { found: "v7".into() })
    );
}

#[test]
fn oversized_payload_is_refused() {
    // A note of 2 MiB of varied text: over the 1 MiB cap once decompressed.
    let mut text = String::new();
    let mut x: u64 = 1;
    while text.len() < 2 << 20 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.push(char::from(b'a' + (x >> 59) as u8 % 26));
    }
    let scenario = scenario::parse(&format!(
        r#"{{"version":1,"name":"big","description":"{text}","nodes":[{{"id":"n"}}]}}"#
    ))
    .unwrap();
    let link = encode_fragment(&Link::new(scenario));
    let e = decode_link(&link).unwrap_err();
    assert!(
        matches!(e, LinkError::Inflate(_) | LinkError::TooLong(_)),
        "{e}"
    );
}

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9-]{1,12}",
        any::<String>().prop_map(|s| if s.is_empty() { "x".into() } else { s }),
        Just("node-a".to_string()),
    ]
}

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    (
        arb_text(),
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<u64>()),
        proptest::collection::btree_set("[a-z]{1,6}", 1..4),
        proptest::collection::vec(
            (
                "[a-z]{1,8}",
                proptest::option::of(0u32..500),
                proptest::option::of(0u64..100_000_000),
                proptest::option::of(any::<bool>()),
            ),
            0..3,
        ),
        proptest::collection::vec((0u64..10_000_000, any::<String>(), 0usize..4), 0..8),
        proptest::option::of(0.5f64..1e6),
    )
        .prop_map(|(name, description, seed, node_ids, jobs, steps, hb)| {
            let nodes: Vec<String> = node_ids.into_iter().collect();
            let mut doc = serde_json::json!({
                "version": 1,
                "name": name,
                "nodes": nodes.iter().map(|id| serde_json::json!({"id": id})).collect::<Vec<_>>(),
            });
            if let Some(d) = description {
                doc["description"] = d.into();
            }
            if let Some(s) = seed {
                doc["seed"] = s.into();
            }
            if let Some(hb) = hb {
                doc["server"] = serde_json::json!({"max_heartbeats_per_second": hb});
            }
            let mut job_docs = Vec::new();
            for (i, (group, count, lost_after, replace)) in jobs.into_iter().enumerate() {
                let mut g = serde_json::json!({"name": group});
                if let Some(c) = count {
                    g["count"] = c.into();
                }
                if let Some(ms) = lost_after {
                    g["disconnect"] = serde_json::json!({"lost_after": ms, "replace": replace});
                }
                job_docs.push(serde_json::json!({"id": format!("job{i}"), "groups": [g]}));
            }
            doc["jobs"] = job_docs.into();
            let script: Vec<serde_json::Value> = steps
                .into_iter()
                .map(|(ms, text, kind)| match kind {
                    0 => serde_json::json!({"action": "advance", "by": ms}),
                    1 => serde_json::json!({"action": "note", "text": text}),
                    2 => serde_json::json!({"action": "link_down", "node": nodes[0]}),
                    _ => serde_json::json!({"action": "heartbeat", "node": nodes[nodes.len() - 1]}),
                })
                .collect();
            doc["script"] = script.into();
            let text = doc.to_string();
            scenario::parse(&text)
                .unwrap_or_else(|e| panic!("generated scenario invalid: {e}\n{text}"))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn generated_scenarios_round_trip(
        scenario in arb_scenario(),
        step in proptest::option::of(any::<u64>()),
        profile in proptest::option::of(prop_oneof![Just("latest"), Just("1.4.2"), Just("1.8.0")]),
    ) {
        let link = Link { scenario, step, profile: profile.map(str::to_string) };
        let text = encode_link("https://example.org/play/", &link);
        prop_assert_eq!(decode_link(&text), Ok(link));
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = decode_link(&text);
        let _ = decode_link(&format!("#v1.{text}"));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        // Straight into base64, so they reach the inflater and the value decoder.
        let text = format!("v1.{}", nomad_playground::share::base64url::encode(&bytes));
        let _ = decode_link(&text);
    }

    #[test]
    fn tampered_links_never_panic(flip in 0usize..4000, to in 0u8..64) {
        let scenario = scenario::parse(r#"{"version":1,"name":"t","nodes":[{"id":"node-a"}],"script":[{"action":"advance","by":"5s"}]}"#).unwrap();
        let good = encode_fragment(&Link::new(scenario));
        let mut bytes = good.into_bytes();
        let at = 3 + flip % (bytes.len() - 3);
        bytes[at] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[usize::from(to)];
        let _ = decode_link(&String::from_utf8(bytes).unwrap());
    }
}
