//! `TestAllocSet_classifyAllocs` from Nomad's
//! `scheduler/reconciler/allocs_test.go`, as data: `tests/data/classify_allocs.json`
//! holds each case's allocs (API JSON plus the test job they embed) and the
//! expected set of every alloc; each case runs with the Go test's tainted
//! nodes and, unless the case says otherwise, again with no tainted nodes.

use nomad_playground::model::{
    Allocation, DisconnectStrategy, DrainStrategy, Duration, Job, JobType, Node, NodeStatus,
    TaskGroup, Time,
};
use nomad_playground::reconciler::alloc_set::AllocSet;
use nomad_playground::reconciler::filters::{
    Classified, EvalClock, FilterContext, classify_allocs,
};
use nomad_playground::reconciler::rules::ReconcilerRules;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Deserialize)]
struct Doc {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    skip_nil_node_test: bool,
    allocs: Vec<CaseAlloc>,
    expect: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct CaseAlloc {
    job: Option<String>,
    alloc: Allocation,
}

/// The Go test's jobs: `mock.Job()` with group `web` and a disconnect block.
fn test_job(variant: &str) -> Rc<Job> {
    let disconnect = match variant {
        "testJob" | "testJobSingle" => Some(DisconnectStrategy {
            lost_after: Duration::from_secs(5),
            replace: Some(true),
            ..Default::default()
        }),
        "testJobNoMaxDisconnect" => None,
        "testJobNoMaxDisconnectSingle" => Some(DisconnectStrategy {
            lost_after: Duration::ZERO,
            replace: Some(false),
            ..Default::default()
        }),
        other => panic!("unknown test job {other}"),
    };
    Rc::new(Job {
        id: "my-job".into(),
        job_type: JobType::Service,
        task_groups: vec![TaskGroup {
            name: "web".into(),
            count: 10,
            disconnect,
            ..Default::default()
        }],
        ..Default::default()
    })
}

fn nodes() -> BTreeMap<String, Option<Node>> {
    let node = |id: &str, status: NodeStatus| {
        Some(Node {
            id: id.into(),
            status,
            ..Default::default()
        })
    };
    BTreeMap::from([
        (
            "draining".to_string(),
            Some(Node {
                id: "draining".into(),
                drain_strategy: Some(DrainStrategy::default()),
                ..Default::default()
            }),
        ),
        ("down".to_string(), node("down", NodeStatus::Down)),
        ("nil".to_string(), None),
        ("normal".to_string(), node("normal", NodeStatus::Ready)),
        (
            "disconnected".to_string(),
            node("disconnected", NodeStatus::Disconnected),
        ),
    ])
}

fn sets(c: &Classified) -> BTreeMap<&'static str, Vec<String>> {
    let ids = |s: &AllocSet| s.ids().cloned().collect::<Vec<_>>();
    BTreeMap::from([
        ("untainted", ids(&c.untainted)),
        ("migrate", ids(&c.migrate)),
        ("lost", ids(&c.lost)),
        ("disconnecting", ids(&c.disconnecting)),
        ("reconnecting", ids(&c.reconnecting)),
        ("ignore", ids(&c.ignore)),
        ("expiring", ids(&c.expiring)),
    ])
}

#[test]
fn classify_allocs_table() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/classify_allocs.json");
    let doc: Doc =
        serde_json::from_str(&std::fs::read_to_string(path).expect("data file")).expect("parses");
    assert_eq!(doc.cases.len(), 17);
    let now = Time::parse_rfc3339("2026-01-01T12:00:00Z").unwrap();
    let rules = ReconcilerRules::default();
    let with_nodes = nodes();
    let no_nodes = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &doc.cases {
        let set: AllocSet = case
            .allocs
            .iter()
            .map(|a| {
                let mut alloc = a.alloc.clone();
                alloc.job = a.job.as_deref().map(test_job);
                Rc::new(alloc)
            })
            .collect();
        let mut want: BTreeMap<&str, Vec<String>> = sets(&Classified::default());
        for (k, v) in &case.expect {
            want.insert(
                [
                    "untainted",
                    "migrate",
                    "lost",
                    "disconnecting",
                    "reconnecting",
                    "ignore",
                    "expiring",
                ]
                .into_iter()
                .find(|s| s == k)
                .expect("known set"),
                v.clone(),
            );
        }
        let mut runs = vec![("with-nodes", &with_nodes)];
        if !case.skip_nil_node_test {
            runs.push(("without-nodes", &no_nodes));
        }
        for (label, tainted) in runs {
            let cx = FilterContext {
                tainted_nodes: tainted,
                clock: &EvalClock::new(now, ""),
                rules: &rules,
            };
            let got = sets(&classify_allocs(&set, &cx));
            if got != want {
                failures.push(format!(
                    "{} ({label}):\n  want {want:?}\n  got  {got:?}",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
