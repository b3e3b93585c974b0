//! The reasons the cluster reconciler records for each alloc: the set, the
//! classification rule and the decision, checked on a few fixtures.

use nomad_playground::fixture::{FixtureInput, parse_fixture};
use nomad_playground::model::ClientStatus;
use nomad_playground::reconciler::cluster::ReconcileResult;
use nomad_playground::reconciler::reasons::{
    AllocCategory, AllocDecision, ClassifyRule, Decision, StopReason,
};
use nomad_playground::reconciler::rules::ReconcilerRules;
use std::path::Path;

fn decisions(case: &str) -> Vec<AllocDecision> {
    run(case).1
}

fn run(case: &str) -> (ReconcileResult, Vec<AllocDecision>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/cases")
        .join(case);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let fixture = parse_fixture(case, &text).expect("parses");
    let FixtureInput::Cluster(input) = &fixture.input else {
        panic!("{case} is not a cluster fixture")
    };
    input.run_explained(ReconcilerRules::default())
}

fn get<'a>(ds: &'a [AllocDecision], id: &str) -> &'a AllocDecision {
    ds.iter()
        .find(|d| d.alloc_id() == id)
        .unwrap_or_else(|| panic!("no record for {id}"))
}

#[test]
fn lost_allocs_are_stopped_and_replaced() {
    let ds = decisions("lost-node.json");
    let a0 = get(&ds, "a0");
    assert_eq!(
        (a0.set, a0.rule),
        (AllocCategory::Lost, ClassifyRule::NodeDown)
    );
    assert_eq!(
        a0.decision,
        Decision::Stop {
            reason: StopReason::Lost,
            replaced: true
        }
    );
    let a5 = get(&ds, "a5");
    assert_eq!(
        (a5.set, a5.rule, &a5.decision),
        (
            AllocCategory::Untainted,
            ClassifyRule::NodeFine,
            &Decision::Keep
        )
    );
}

#[test]
fn disconnecting_allocs_are_marked_unknown() {
    let ds = decisions("node-disconnect-updates-alloc-to-unknown.json");
    for id in ["a0", "a1"] {
        let d = get(&ds, id);
        assert_eq!(
            (d.set, d.rule),
            (AllocCategory::Disconnecting, ClassifyRule::Disconnected)
        );
        assert_eq!(d.decision, Decision::Disconnect { replaced: true }, "{id}");
    }
    assert_eq!(get(&ds, "a2").decision, Decision::Keep);
}

#[test]
fn reschedule_later_names_its_eval_and_time() {
    let ds = decisions("reschedule-later-with-batched-evals-batch.json");
    let Decision::RescheduleLater {
        eval_id,
        wait_until,
    } = &get(&ds, "a0").decision
    else {
        panic!("a0: {:?}", get(&ds, "a0").decision)
    };
    assert!(!eval_id.is_empty());
    assert_eq!(wait_until.to_rfc3339(), "2026-01-01T12:00:15Z");
    let Decision::RescheduleLater { wait_until, .. } = &get(&ds, "a6").decision else {
        panic!()
    };
    assert_eq!(wait_until.to_rfc3339(), "2026-01-01T12:00:25Z");
}

#[test]
fn reconnect_picker_outcomes_are_explained() {
    let ds = decisions("disconnected-client--resume-original-and-stop-replacement.json");
    let a0 = get(&ds, "a0");
    assert_eq!(
        (a0.set, &a0.decision),
        (AllocCategory::Reconnecting, &Decision::Reconnect)
    );
    assert_eq!(
        get(&ds, "r0").decision,
        Decision::Stop {
            reason: StopReason::OriginalReconnected,
            replaced: false
        }
    );
}

#[test]
fn scale_down_and_migration() {
    let ds = decisions("drain-node-scale-down.json");
    assert_eq!(get(&ds, "a0").decision, Decision::Migrate);
    assert_eq!(get(&ds, "a0").rule, ClassifyRule::MigrateTransition);
    for id in ["a1", "a2"] {
        assert_eq!(
            get(&ds, id).decision,
            Decision::Stop {
                reason: StopReason::NotNeeded,
                replaced: false
            },
            "{id}"
        );
    }
}

#[test]
fn every_alloc_has_one_record() {
    let ds = decisions("tainted-node-rolling-upgrade.json");
    assert_eq!(ds.len(), 10);
    assert_eq!(get(&ds, "o8").decision, Decision::DestructiveUpdate);
    assert_eq!(
        get(&ds, "r0").decision,
        Decision::Stop {
            reason: StopReason::Lost,
            replaced: true
        }
    );
}

/// A disconnecting alloc replaced now: the placement names the alloc as the
/// run read it, and `previous_updated` gives it as the run leaves it (its
/// disconnect update, Nomad's previous alloc); a lost alloc's replacement
/// names the alloc as read in both.
#[test]
fn placements_name_the_alloc_they_replace() {
    let (r, _) = run("node-disconnect-updates-alloc-to-unknown.json");
    let mut seen = 0;
    for p in &r.place {
        let Some(prev) = &p.previous_alloc else {
            continue;
        };
        let update = r.disconnect_updates.get(&prev.id).expect("an update");
        assert_eq!(prev.client_status, ClientStatus::Running, "{}", prev.id);
        let updated = p.previous_updated(&r).expect("previous");
        assert_eq!(*updated, update.to_alloc(), "{}", prev.id);
        assert_eq!(updated.client_status, ClientStatus::Unknown);
        seen += 1;
    }
    assert_eq!(seen, 2, "a0 and a1 are replaced");

    let (r, _) = run("lost-node.json");
    let p = r.place.iter().find(|p| p.previous_alloc.is_some());
    let p = p.expect("a replacement");
    let prev = p.previous_alloc.as_deref().expect("previous");
    assert!(std::ptr::eq(
        &*p.previous_updated(&r).expect("previous"),
        prev
    ));
}
