//! The version switches of `ReconcilerRules`: each test runs one small
//! cluster under today's rules and under the older rule, and checks that the
//! outcome differs the way `docs/nomad-semantics.md` §5 says.

use nomad_playground::reconciler::reasons::{AllocCategory, ClassifyRule, Decision};
use nomad_playground::reconciler::rules::{
    DisconnectingReplacement, ExpiredAllocs, ReconcilerRules, ReconnectMarker,
    UnknownOnUntaintedNode,
};
use serde_json::{Value, json};

mod support;
use support::{alloc, decision, run};

const NOW: &str = "2026-01-01T12:00:00Z";

fn job(group_extra: Value) -> Value {
    let mut tg = json!({
        "Name": "web",
        "Count": 2,
        "ReschedulePolicy": {"Attempts": 0, "Interval": 0, "Delay": 30000000000u64,
                             "DelayFunction": "exponential", "MaxDelay": 3600000000000u64, "Unlimited": true},
        "Disconnect": {"LostAfter": 300000000000u64}
    });
    for (k, v) in group_extra.as_object().unwrap() {
        tg[k] = v.clone();
    }
    json!({"ID": "j", "Type": "service", "Priority": 50, "Version": 0, "CreateIndex": 1, "JobModifyIndex": 1,
           "TaskGroups": [tg]})
}

fn node(id: &str, status: &str) -> Value {
    json!({"ID": id, "Status": status, "SchedulingEligibility": "eligible"})
}

fn unknown_state(time: &str) -> Value {
    json!([{"Field": "ClientStatus", "Value": "unknown", "Time": time}])
}

/// An unknown alloc whose node is back (not tainted) and whose replacement runs.
fn unknown_on_fine_node() -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(json!({})),
        "allocs": [
            alloc("a0", 0, "n-back", "unknown", json!({"AllocStates": unknown_state("2026-01-01T11:59:00Z"),
                                                       "NextAllocation": "r0", "NodeScore": 5})),
            alloc("a1", 1, "n1", "running", json!({})),
            alloc("r0", 0, "n2", "running", json!({"PreviousAllocation": "a0", "NodeScore": 1})),
        ]
    })
}

#[test]
fn unknown_alloc_on_a_fine_node() {
    // HEAD: reconnecting; best_score keeps the original (higher score), so the replacement stops.
    let head = run(unknown_on_fine_node(), ReconcilerRules::HEAD);
    assert_eq!(decision(&head, "a0").set, AllocCategory::Reconnecting);
    assert_eq!(decision(&head, "a0").rule, ClassifyRule::NeedsReconnect);
    assert!(head.stop.iter().any(|s| s.alloc.id == "r0"));
    assert!(
        head.reconnect_updates.is_empty(),
        "still unknown: no reconnect update"
    );

    // 1.7 - 1.11.1: untainted; nothing is stopped (unknown allocs do not count for the over-count check).
    let rules = ReconcilerRules {
        unknown_on_untainted_node: UnknownOnUntaintedNode::Untainted,
        ..ReconcilerRules::HEAD
    };
    let r = run(unknown_on_fine_node(), rules);
    assert_eq!(decision(&r, "a0").set, AllocCategory::Untainted);
    assert_eq!(decision(&r, "a0").rule, ClassifyRule::UnknownOnFineNode);
    assert!(r.stop.is_empty());

    // <= 1.6: ignored.
    let rules = ReconcilerRules {
        unknown_on_untainted_node: UnknownOnUntaintedNode::Ignore,
        ..ReconcilerRules::HEAD
    };
    let r = run(unknown_on_fine_node(), rules);
    assert_eq!(decision(&r, "a0").set, AllocCategory::Ignore);
    assert_eq!(r.desired_tg_updates["web"].ignore, 3);
}

/// A running alloc back on a ready node, marked only by the client's task event.
fn reconnected_by_task_event() -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(json!({"Tasks": [{"Name": "t"}]})),
        "tainted_nodes": {"n-back": node("n-back", "ready")},
        "allocs": [
            alloc("a0", 0, "n-back", "running", json!({"TaskStates": {"t": {"State": "running",
                "Events": [{"Type": "Reconnected", "Time": 1767268740000000000u64}]}}})),
            alloc("a1", 1, "n1", "running", json!({})),
        ]
    })
}

#[test]
fn reconnect_marker_task_event_vs_alloc_state() {
    // HEAD reads AllocStates: there is none, so a0 is a plain untainted alloc.
    let head = run(reconnected_by_task_event(), ReconcilerRules::HEAD);
    assert_eq!(decision(&head, "a0").set, AllocCategory::Untainted);

    // <= 1.4.2 reads the sticky task event: a0 reconnects, but nothing is persisted.
    let r = run(reconnected_by_task_event(), ReconcilerRules::V1_4_2);
    assert_eq!(decision(&r, "a0").set, AllocCategory::Reconnecting);
    assert_eq!(decision(&r, "a0").decision, Decision::ReconnectKept);
    assert!(r.reconnect_updates.is_empty());

    // Task-event marker with persisted updates (a hypothetical mix) writes the update.
    let rules = ReconcilerRules {
        reconnect_marker: ReconnectMarker::TaskEvent,
        emit_reconnect_updates: true,
        ..ReconcilerRules::HEAD
    };
    let r = run(reconnected_by_task_event(), rules);
    assert_eq!(r.reconnect_updates.len(), 1);
    assert_eq!(r.desired_tg_updates["web"].reconnect, 1);
}

fn running_on_disconnected_node(group_extra: Value) -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(group_extra),
        "tainted_nodes": {"n-gone": node("n-gone", "disconnected")},
        "allocs": [
            alloc("a0", 0, "n-gone", "running", json!({})),
            alloc("a1", 1, "n1", "running", json!({})),
        ]
    })
}

#[test]
fn disconnecting_replacement_immediate_vs_policy() {
    // HEAD: the reschedule policy's 30 s delay gives a follow-up eval, no placement yet.
    let head = run(
        running_on_disconnected_node(json!({})),
        ReconcilerRules::HEAD,
    );
    assert_eq!(head.disconnect_updates.len(), 1);
    assert!(head.place.is_empty());
    assert_eq!(head.desired_tg_updates["web"].reschedule_later, 1);
    assert!(matches!(
        decision(&head, "a0").decision,
        Decision::RescheduleLater { .. }
    ));

    // <= 1.6: replaced at once.
    let rules = ReconcilerRules {
        disconnecting_replacement: DisconnectingReplacement::Immediate,
        ..ReconcilerRules::HEAD
    };
    let r = run(running_on_disconnected_node(json!({})), rules);
    assert_eq!(r.disconnect_updates.len(), 1);
    assert_eq!(r.place.len(), 1);
    assert_eq!(
        r.place[0].previous_alloc.as_ref().map(|a| a.id.as_str()),
        Some("a0")
    );
    assert!(r.stop.is_empty(), "the original keeps running as unknown");
}

#[test]
fn legacy_max_client_disconnect() {
    // Only the legacy field, no lost_after in the block.
    let group = json!({"Disconnect": null, "MaxClientDisconnect": 300000000000u64});
    // HEAD ignores it (>= 1.10): lost_after is 0, so the alloc is lost.
    let head = run(
        running_on_disconnected_node(group.clone()),
        ReconcilerRules::HEAD,
    );
    assert_eq!(
        decision(&head, "a0").rule,
        ClassifyRule::DisconnectedNoLostAfter
    );
    assert_eq!(head.stop.len(), 1);
    assert_eq!(head.place.len(), 1);

    // <= 1.9 honours it: disconnecting, with a 5-minute timeout eval.
    let r = run(running_on_disconnected_node(group), ReconcilerRules::V1_8_0);
    assert_eq!(decision(&r, "a0").set, AllocCategory::Disconnecting);
    let evals = &r.desired_followup_evals["web"];
    assert!(
        evals
            .iter()
            .any(|e| e.triggered_by == "max-disconnect-timeout"
                && e.wait_until.to_rfc3339() == "2026-01-01T12:05:00Z")
    );
}

fn expired_no_replace() -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(json!({"Disconnect": {"LostAfter": 60000000000u64, "Replace": false}})),
        "tainted_nodes": {"n-gone": node("n-gone", "disconnected")},
        "allocs": [
            alloc("a0", 0, "n-gone", "unknown", json!({"AllocStates": unknown_state("2026-01-01T11:00:00Z")})),
            alloc("a1", 1, "n1", "running", json!({})),
        ]
    })
}

#[test]
fn expired_alloc_with_replace_false() {
    // HEAD: expired is always lost, and replaced.
    let head = run(expired_no_replace(), ReconcilerRules::HEAD);
    assert_eq!(decision(&head, "a0").set, AllocCategory::Expiring);
    assert!(head.stop.iter().any(|s| s.alloc.id == "a0"));
    assert_eq!(head.place.len(), 1);

    // <= 1.11.1: kept (untainted) when replace = false.
    let rules = ReconcilerRules {
        expired_allocs: ExpiredAllocs::KeptWhenNoReplace,
        ..ReconcilerRules::HEAD
    };
    let r = run(expired_no_replace(), rules);
    assert!(r.stop.is_empty());
    assert!(r.place.is_empty());
}

#[test]
fn head_is_the_default() {
    assert_eq!(ReconcilerRules::default(), ReconcilerRules::HEAD);
}
