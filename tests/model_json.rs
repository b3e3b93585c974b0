//! The model reads Nomad HTTP API JSON: unknown fields are ignored, absent
//! fields take Go's zero value, unknown status values are kept, integer and
//! RFC 3339 times both parse, and what is written reads back the same.

use nomad_playground::model::{
    Allocation, ClientStatus, Deployment, DeploymentStatus, DesiredStatus, Duration, Job, JobType,
    Node, NodeStatus, ReconcileStrategy, Time,
};

const ALLOC: &str = r#"{
  "ID": "5456bd7a-9fc0-c0dd-6131-cbee77f57577",
  "EvalID": "e1", "Name": "example.cache[0]", "Namespace": "default",
  "NodeID": "fb2170a8", "NodeName": "node-1", "JobID": "example", "TaskGroup": "cache",
  "AllocatedResources": {"Tasks": {"redis": {"Cpu": {"CpuShares": 500}}}},
  "DesiredStatus": "run", "DesiredDescription": "",
  "DesiredTransition": {"Migrate": null, "Reschedule": true, "ForceReschedule": null},
  "ClientStatus": "running", "ClientDescription": "Tasks are running",
  "TaskStates": {"redis": {"State": "running", "Failed": false, "Restarts": 1,
      "LastRestart": "2026-01-01T11:00:00.123456789Z", "StartedAt": "2026-01-01T10:00:00Z",
      "FinishedAt": null, "Events": [{"Type": "Started", "Time": 1767261600000000000, "Details": {}}],
      "TaskHandle": null}},
  "AllocStates": [{"Field": "ClientStatus", "Value": "unknown", "Time": "2026-01-01T11:30:00+01:00"}],
  "DeploymentStatus": {"Healthy": true, "Timestamp": "2026-01-01T10:00:10Z", "Canary": false, "ModifyIndex": 12},
  "RescheduleTracker": {"Events": null, "LastReschedule": "ok"},
  "NetworkStatus": {"InterfaceName": "", "Address": ""},
  "FollowupEvalID": "", "PreemptedAllocations": null,
  "CreateIndex": 10, "ModifyIndex": 12, "AllocModifyIndex": 11,
  "CreateTime": 1767261590000000000, "ModifyTime": 1767265200000000000,
  "SomeFieldFromNomad3": {"nested": [1, 2, 3]}
}"#;

#[test]
fn api_allocation_reads() {
    let a: Allocation = serde_json::from_str(ALLOC).expect("reads");
    assert_eq!(a.client_status, ClientStatus::Running);
    assert_eq!(a.desired_status, DesiredStatus::Run);
    assert_eq!(a.desired_transition.reschedule, Some(true));
    assert_eq!(a.desired_transition.migrate, None);
    assert_eq!(a.task_states["redis"].restarts, 1);
    assert!(
        a.task_states["redis"].finished_at.is_zero(),
        "null time is Go's zero time"
    );
    assert_eq!(
        a.alloc_states[0].time,
        Time::parse_rfc3339("2026-01-01T10:30:00Z").unwrap()
    );
    assert_eq!(
        a.create_time,
        Time::from_unix_nanos(1_767_261_590_000_000_000)
    );
    assert_eq!(
        a.reschedule_tracker.as_ref().map(|t| t.events.is_none()),
        Some(true)
    );
    assert!(a.preempted_allocations.is_empty(), "null list is empty");
    assert!(a.needs_to_reconnect());
    assert_eq!(a.name_index(), 0);
}

#[test]
fn absent_fields_take_zero_values() {
    let a: Allocation = serde_json::from_str(r#"{"ID": "a"}"#).expect("reads");
    assert_eq!(a.client_status, ClientStatus::Other(String::new()));
    assert_eq!(
        a.create_time,
        Time::UNIX_EPOCH,
        "integer times default to the epoch"
    );
    assert!(a.job.is_none());
    assert!(a.deployment_status.is_none());
    let n: Node = serde_json::from_str(r#"{"ID": "n"}"#).expect("reads");
    assert!(!n.ready());
    let j: Job =
        serde_json::from_str(r#"{"ID": "j", "TaskGroups": [{"Name": "g"}]}"#).expect("reads");
    let tg = &j.task_groups[0];
    assert_eq!(tg.count, 0);
    assert!(tg.replace(false), "no disconnect block: replace");
    assert_eq!(tg.reconcile_strategy(), ReconcileStrategy::BestScore);
    assert_eq!(tg.lost_after(true), Duration::ZERO);
}

#[test]
fn unknown_statuses_are_kept_not_errors() {
    let a: Allocation = serde_json::from_str(
        r#"{"ID": "a", "ClientStatus": "hibernating", "DesiredStatus": "pause"}"#,
    )
    .expect("reads");
    assert_eq!(a.client_status, ClientStatus::Other("hibernating".into()));
    assert!(!a.client_terminal_status());
    let back = serde_json::to_value(&a).unwrap();
    assert_eq!(back["ClientStatus"], "hibernating");
    assert_eq!(back["DesiredStatus"], "pause");
    let n: Node = serde_json::from_str(r#"{"ID": "n", "Status": "quarantined"}"#).expect("reads");
    assert_eq!(n.status, NodeStatus::Other("quarantined".into()));
    let d: Deployment = serde_json::from_str(r#"{"ID": "d", "Status": "rolling"}"#).expect("reads");
    assert_eq!(d.status, DeploymentStatus::Other("rolling".into()));
    assert!(!d.active());
    let j: Job = serde_json::from_str(r#"{"ID": "j", "Type": "service"}"#).expect("reads");
    assert_eq!(j.job_type, JobType::Service);
}

#[test]
fn written_json_reads_back_the_same() {
    let a: Allocation = serde_json::from_str(ALLOC).expect("reads");
    let text = serde_json::to_string(&a).unwrap();
    let b: Allocation = serde_json::from_str(&text).expect("reads back");
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["CreateTime"], 1_767_261_590_000_000_000i64,
        "integer time stays an integer"
    );
    assert_eq!(
        v["TaskStates"]["redis"]["LastRestart"],
        "2026-01-01T11:00:00.123456789Z"
    );
    assert_eq!(
        v["AllocStates"][0]["Time"], "2026-01-01T10:30:00Z",
        "written in UTC"
    );
}

#[test]
fn bad_values_are_errors_not_panics() {
    for bad in [
        r#"{"ID": "a", "CreateIndex": -1}"#,
        r#"{"ID": "a", "AllocStates": [{"Field": "ClientStatus", "Value": "unknown", "Time": "noon"}]}"#,
        r#"{"ID": "a", "TaskStates": {"t": {"StartedAt": 5}}}"#,
        r#"{"ID": "a", "CreateTime": "2026-01-01T00:00:00Z"}"#,
    ] {
        assert!(serde_json::from_str::<Allocation>(bad).is_err(), "{bad}");
    }
}
