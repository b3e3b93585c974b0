//! The reconnect handling of Nomad before 1.5.4 as reconciler switches
//! (`ReconnectReconciliation::InComputeStop`, `UnknownOnUntaintedNode::Ignore`)
//! and the profile mapping of the reconciler rules. The cases follow the
//! old `scheduler/reconcile.go` (`computeStop`, `computeStopByReconnecting`,
//! `computeReconnecting`, v1.4.2) and `reconcile_util.go` (`filterByTainted`),
//! and the bugs they caused: hashicorp/nomad#12680 and #14925.

use nomad_playground::model::ClientStatus;
use nomad_playground::profile::{Rules, Version};
use nomad_playground::reconciler::cluster::{ReconcileResult, status};
use nomad_playground::reconciler::node::NodeRules;
use nomad_playground::reconciler::reasons::{AllocCategory, Decision};
use nomad_playground::reconciler::rules::{
    ReconcilerRules, ReconnectReconciliation, ReplacementLookup, UnknownOnUntaintedNode,
};
use nomad_playground::server::scheduler::{node_rules, reconciler_rules};
use serde_json::{Value, json};

mod support;
use support::{alloc, decision, run};

const NOW: &str = "2026-01-01T12:00:00Z";

fn job(version: u64, count: u32) -> Value {
    json!({"ID": "j", "Type": "service", "Priority": 50, "Version": version, "CreateIndex": 1,
           "JobModifyIndex": 1 + version,
           "TaskGroups": [{"Name": "web", "Count": count, "MaxClientDisconnect": 3600000000000u64,
                           "Tasks": [{"Name": "t"}]}]})
}

/// A running alloc carrying the client's (sticky) `Reconnected` task event.
fn reconnected(id: &str, index: u32, node: &str, extra: Value) -> Value {
    let mut extra = extra;
    extra["TaskStates"] = json!({"t": {"State": "running",
        "Events": [{"Type": "Reconnected", "Time": 1767268740000000000u64}]}});
    alloc(id, index, node, "running", extra)
}

fn stopped(r: &ReconcileResult, id: &str) -> Option<String> {
    r.stop
        .iter()
        .find(|s| s.alloc.id == id)
        .map(|s| s.status_description.to_string())
}

/// #14925: the job moved to version 1; c0 reconnected long ago but still
/// carries its task event, a0 and b0 run version 0 on good nodes.
fn job_updated_after_reconnect() -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(1, 3),
        "update": {"default": "destructive"},
        "allocs": [
            alloc("a0", 0, "n-a", "running", json!({"JobVersion": 0})),
            alloc("b0", 1, "n-b", "running", json!({"JobVersion": 0})),
            reconnected("c0", 2, "n-c", json!({"JobVersion": 0})),
        ]
    })
}

#[test]
fn before_16609_a_reconnecting_alloc_misses_the_job_update() {
    // 1.4.2: c0 is reconnecting again; the group is not over its count, so
    // computeStop never looks at it, and it never reaches computeUpdates.
    let old = run(job_updated_after_reconnect(), ReconcilerRules::V1_4_2);
    assert_eq!(decision(&old, "c0").set, AllocCategory::Reconnecting);
    assert_eq!(decision(&old, "c0").decision, Decision::ReconnectKept);
    assert!(stopped(&old, "c0").is_none());
    assert_eq!(old.destructive_update.len(), 2);
    assert!(
        old.destructive_update
            .iter()
            .all(|d| d.stop_alloc.id != "c0")
    );
    assert!(old.place.is_empty(), "c0 still counts as existing");

    // Reconciled first (>= 1.5.4 rules on the same marker): c0 belongs to an
    // older job, so it is stopped and its name placed again.
    let rules = ReconcilerRules {
        reconnect_reconciliation: ReconnectReconciliation::First,
        ..ReconcilerRules::V1_4_2
    };
    let first = run(job_updated_after_reconnect(), rules);
    assert_eq!(
        stopped(&first, "c0").as_deref(),
        Some(status::ALLOC_NOT_NEEDED)
    );
    assert_eq!(first.place.len(), 1);
}

/// c0 reconnected on its node, r0 replaced it elsewhere, b0 runs: one too many.
fn over_count(c0_score: Option<f64>, r0_score: Option<f64>) -> Value {
    let score = |s: Option<f64>| s.map_or(Value::Null, |s| json!(s));
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(0, 2),
        "allocs": [
            reconnected("c0", 0, "n-c", json!({"NextAllocation": "r0", "NodeScore": score(c0_score)})),
            alloc("r0", 0, "n-a", "running", json!({"PreviousAllocation": "c0", "NodeScore": score(r0_score)})),
            alloc("b0", 1, "n-b", "running", json!({"NodeScore": 1.0})),
        ]
    })
}

#[test]
fn before_16609_the_over_count_stop_compares_same_name_allocs_by_score() {
    let rules = ReconcilerRules::V1_4_2;
    // Equal scores: the original stays, its replacement stops.
    let r = run(over_count(Some(2.0), Some(2.0)), rules);
    assert_eq!(
        stopped(&r, "r0").as_deref(),
        Some(status::ALLOC_RECONNECTED)
    );
    assert!(stopped(&r, "c0").is_none());
    assert_eq!(r.stop.len(), 1);
    // 1.4.2 counts the reconnect as ignored, it writes nothing.
    assert!(r.reconnect_updates.is_empty());
    assert_eq!(r.desired_tg_updates["web"].reconnect, 0);

    // A strictly better replacement wins.
    let r = run(over_count(Some(1.0), Some(3.0)), rules);
    assert_eq!(stopped(&r, "c0").as_deref(), Some(status::ALLOC_NOT_NEEDED));
    assert!(stopped(&r, "r0").is_none());

    // Without both scores nothing is compared: the highest name index goes.
    let r = run(over_count(None, Some(3.0)), rules);
    assert_eq!(stopped(&r, "b0").as_deref(), Some(status::ALLOC_NOT_NEEDED));
    assert_eq!(r.stop.len(), 1);

    // 1.4.3 - 1.5.3: the kept original's reconnect is written to the plan.
    let rules = ReconcilerRules::V1_4_3;
    let mut input = over_count(Some(2.0), Some(2.0));
    input["allocs"][0] = alloc(
        "c0",
        0,
        "n-c",
        "running",
        json!({"NextAllocation": "r0", "NodeScore": 2.0,
               "AllocStates": [{"Field": "ClientStatus", "Value": "unknown", "Time": "2026-01-01T11:59:00Z"}]}),
    );
    let r = run(input, rules);
    assert_eq!(
        stopped(&r, "r0").as_deref(),
        Some(status::ALLOC_RECONNECTED)
    );
    assert_eq!(r.reconnect_updates.len(), 1);
    assert_eq!(decision(&r, "c0").decision, Decision::Reconnect);
}

#[test]
fn before_16609_a_failed_reconnect_is_stopped_and_replaced() {
    let mut input = over_count(Some(2.0), Some(2.0));
    input["allocs"][0]["ClientStatus"] = json!("failed");
    input["allocs"][1] = alloc("r0", 0, "n-a", "complete", json!({"DesiredStatus": "stop"}));
    let r = run(input, ReconcilerRules::V1_4_2);
    let stop = r
        .stop
        .iter()
        .find(|s| s.alloc.id == "c0")
        .expect("c0 stopped");
    assert_eq!(stop.client_status, Some(ClientStatus::Failed));
    assert_eq!(stop.status_description, status::ALLOC_RESCHEDULED);
    assert_eq!(r.place.len(), 1, "the failed reconnect does not count");
}

/// #12680: the node is back, the client has not synced yet: c0 is still
/// `unknown` and has no reconnect marker of any kind.
fn unknown_before_sync() -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(0, 1),
        "allocs": [alloc("c0", 0, "n-a", "unknown", json!({}))]
    })
}

#[test]
fn before_1_7_every_unknown_alloc_that_should_run_is_ignored() {
    // <= 1.6: ignored whatever its marker, so its name is placed again.
    let old = run(unknown_before_sync(), ReconcilerRules::V1_4_2);
    assert_eq!(decision(&old, "c0").set, AllocCategory::Ignore);
    assert_eq!(old.place.len(), 1);
    assert_eq!(old.place[0].name, "j.web[0]");

    // 1.7 - 1.11.1: untainted and counted, nothing placed.
    let rules = ReconcilerRules {
        unknown_on_untainted_node: UnknownOnUntaintedNode::Untainted,
        ..ReconcilerRules::V1_4_2
    };
    let r = run(unknown_before_sync(), rules);
    assert_eq!(decision(&r, "c0").set, AllocCategory::Untainted);
    assert!(r.place.is_empty());

    // On a disconnected node too (<= 1.6 had no "already unknown" rule).
    let mut input = unknown_before_sync();
    input["tainted_nodes"] = json!({"n-a": {"ID": "n-a", "Status": "disconnected"}});
    let r = run(input, ReconcilerRules::V1_4_2);
    assert_eq!(decision(&r, "c0").set, AllocCategory::Ignore);
}

#[test]
fn profiles_map_to_the_reconciler_rules_of_their_release() {
    let rules = |v: Version| reconciler_rules(&Rules::for_version(v), v);
    for (v, want) in [
        (Version(1, 3, 0), ReconnectReconciliation::InComputeStop),
        (Version(1, 3, 13), ReconnectReconciliation::InComputeStop),
        (Version(1, 3, 14), ReconnectReconciliation::First),
        (Version(1, 4, 8), ReconnectReconciliation::InComputeStop),
        (Version(1, 4, 9), ReconnectReconciliation::First),
        (Version(1, 5, 3), ReconnectReconciliation::InComputeStop),
        (Version(1, 5, 4), ReconnectReconciliation::First),
        (Version::LATEST, ReconnectReconciliation::First),
    ] {
        assert_eq!(rules(v).reconnect_reconciliation, want, "{v}");
    }
    for (v, want) in [
        (Version(1, 6, 0), UnknownOnUntaintedNode::Ignore),
        (Version(1, 7, 0), UnknownOnUntaintedNode::Untainted),
        (Version(1, 11, 1), UnknownOnUntaintedNode::Untainted),
        (Version(1, 11, 2), UnknownOnUntaintedNode::Reconnecting),
        (Version(2, 0, 0), UnknownOnUntaintedNode::Reconnecting),
    ] {
        assert_eq!(rules(v).unknown_on_untainted_node, want, "{v}");
    }
    assert_eq!(rules(Version::LATEST), ReconcilerRules::HEAD);
    for (v, want) in [
        (Version(1, 11, 1), NodeRules::V1_11_0),
        (Version(1, 11, 2), NodeRules::V1_11_2),
        (Version(1, 11, 3), NodeRules::V2_0_0),
        (Version(2, 0, 5), NodeRules::V2_0_0),
        (Version::LATEST, NodeRules::HEAD),
    ] {
        assert_eq!(node_rules(v), want, "{v}");
    }
}

/// c0 reconnects with no `NextAllocation`; s0 runs its name, placed later
/// without a link to it (as #12680's node-update eval did), and b0 runs.
fn unlinked_same_name() -> Value {
    json!({
        "now": NOW, "eval_id": "eval-1", "job": job(0, 2),
        "allocs": [
            reconnected("c0", 0, "n-c", json!({"CreateIndex": 10, "NodeScore": 2.0})),
            alloc("s0", 0, "n-a", "running", json!({"CreateIndex": 20, "NodeScore": 2.0})),
            alloc("b0", 1, "n-b", "running", json!({"CreateIndex": 10, "NodeScore": 1.0})),
        ]
    })
}

#[test]
fn the_reconnecting_picker_finds_replacements_as_each_version_did() {
    let with = |lookup| ReconcilerRules {
        reconnect_reconciliation: ReconnectReconciliation::First,
        replacement_lookup: lookup,
        ..ReconcilerRules::V1_4_2
    };
    // #16609 (1.5.4 – 1.6.2): any newer alloc of the same name is a
    // replacement, so the picker weighs s0 against c0 and keeps the original.
    let same_name = run(unlinked_same_name(), with(ReplacementLookup::SameNameNewer));
    assert_eq!(
        stopped(&same_name, "s0").as_deref(),
        Some(status::ALLOC_RECONNECTED)
    );
    assert!(stopped(&same_name, "c0").is_none());
    // #18701 and #24165: only the NextAllocation link (or chain) counts, so
    // s0 is no replacement of c0 and is not stopped as one.
    for lookup in [
        ReplacementLookup::NextAllocation,
        ReplacementLookup::NextAllocationChain,
    ] {
        let r = run(unlinked_same_name(), with(lookup));
        assert_ne!(
            stopped(&r, "s0").as_deref(),
            Some(status::ALLOC_RECONNECTED),
            "{lookup:?}"
        );
    }
    // The profiles: the backports and the boundaries of each form.
    let lookup = |v: &str| {
        let v = Version::parse(v).expect("version");
        reconciler_rules(&Rules::for_version(v), v).replacement_lookup
    };
    for (v, want) in [
        ("1.3.14", ReplacementLookup::SameNameNewer),
        ("1.4.13", ReplacementLookup::SameNameNewer),
        ("1.4.14", ReplacementLookup::NextAllocation),
        ("1.5.4", ReplacementLookup::SameNameNewer),
        ("1.5.10", ReplacementLookup::NextAllocation),
        ("1.6.2", ReplacementLookup::SameNameNewer),
        ("1.6.3", ReplacementLookup::NextAllocation),
        ("1.9.0", ReplacementLookup::NextAllocation),
        ("1.9.1", ReplacementLookup::NextAllocationChain),
        ("latest", ReplacementLookup::NextAllocationChain),
    ] {
        assert_eq!(lookup(v), want, "{v}");
    }
}
