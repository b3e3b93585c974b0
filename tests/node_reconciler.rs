//! Table tests of the node reconciler (system and sysbatch jobs), ported
//! from Nomad's `scheduler/reconciler/reconcile_node_test.go` (the cases not
//! already among the `node--*` conformance fixtures) and, as
//! reconciler-level cases, from `scheduler/scheduler_system_test.go`
//! `TestSystemSched_NodeDisconnected`. Each case keeps its Go name. The last
//! section checks the version switches of `NodeRules`.

use nomad_playground::model::{
    AllocState, Allocation, ClientStatus, Deployment, DeploymentState, DeploymentStatus,
    DesiredStatus, DisconnectStrategy, DrainStrategy, Duration, Job, JobType, Node, NodeStatus,
    SchedulingEligibility, TaskEvent, TaskGroup, TaskState, Time, UpdateStrategy,
};
use nomad_playground::reconciler::node::{
    NodeReconcileResult, NodeReconciler, NodeRule, NodeRules, NodeSchedulerView, NodeSet,
    TerminalByNodeByName,
};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

// ---------------------------------------------------------------------------
// Builders (the parts of Nomad's `mock` package these tests need)

/// 2026-01-01T12:00:00Z.
const NOW: Time = Time(1_767_268_800_000_000_000);

fn ago(d: Duration) -> Time {
    NOW.sub_duration(d)
}

/// `mock.SystemJob()`: ID `mock-system`, Name `my-job`, group `web` count 1.
fn system_job() -> Job {
    Job {
        id: "mock-system".into(),
        name: "my-job".into(),
        namespace: "default".into(),
        job_type: JobType::System,
        priority: 100,
        datacenters: vec!["dc1".into()],
        create_index: 42,
        modify_index: 99,
        job_modify_index: 99,
        task_groups: vec![group("web")],
        ..Job::default()
    }
}

/// `mock.SystemBatchJob()`: ID `mock-sysbatch`, Name `my-sysbatch`, group `pinger`.
fn sysbatch_job() -> Job {
    Job {
        id: "mock-sysbatch".into(),
        name: "my-sysbatch".into(),
        job_type: JobType::SysBatch,
        task_groups: vec![group("pinger")],
        ..system_job()
    }
}

fn group(name: &str) -> TaskGroup {
    TaskGroup {
        name: name.into(),
        count: 1,
        ..TaskGroup::default()
    }
}

/// `structs.DefaultUpdateStrategy` (max_parallel 1, progress deadline 10m).
fn default_update() -> UpdateStrategy {
    UpdateStrategy {
        max_parallel: 1,
        stagger: Duration::from_secs(30),
        min_healthy_time: Duration::from_secs(10),
        healthy_deadline: Duration::from_mins(5),
        progress_deadline: Duration::from_mins(10),
        health_check: "checks".into(),
        ..UpdateStrategy::default()
    }
}

/// The job one `JobModifyIndex` older, as the Go tests make it.
fn older(job: &Job) -> Job {
    Job {
        job_modify_index: job.job_modify_index - 1,
        ..job.clone()
    }
}

fn node(id: &str, status: NodeStatus) -> Node {
    Node {
        id: id.into(),
        datacenter: "dc1".into(),
        status,
        scheduling_eligibility: SchedulingEligibility::Eligible,
        ..Node::default()
    }
}

/// `mock.DrainNode()`: ready, draining, ineligible.
fn drain_node(id: &str) -> Node {
    Node {
        drain_strategy: Some(DrainStrategy::default()),
        scheduling_eligibility: SchedulingEligibility::Ineligible,
        ..node(id, NodeStatus::Ready)
    }
}

fn alloc(id: &str, node_id: &str, name: &str, job: &Job) -> Allocation {
    let group = name
        .rsplit_once('.')
        .and_then(|(_, rest)| rest.split_once('['))
        .map_or("", |(group, _)| group);
    Allocation {
        id: id.into(),
        name: name.into(),
        node_id: node_id.into(),
        job_id: job.id.clone(),
        job: Some(Rc::new(job.clone())),
        task_group: group.into(),
        client_status: ClientStatus::Pending,
        desired_status: DesiredStatus::Run,
        ..Allocation::default()
    }
}

fn client_state(value: &str, time: Time) -> AllocState {
    AllocState {
        field: "ClientStatus".into(),
        value: value.into(),
        time,
    }
}

/// The input of one run, owned.
struct Case {
    job: Job,
    ready: Vec<Node>,
    not_ready: BTreeSet<String>,
    tainted: BTreeMap<String, Option<Node>>,
    live: Vec<Allocation>,
    terminal: TerminalByNodeByName,
    deployment: Option<Deployment>,
    rules: NodeRules,
}

impl Case {
    fn new(job: Job) -> Self {
        Case {
            job,
            ready: Vec::new(),
            not_ready: BTreeSet::new(),
            tainted: BTreeMap::new(),
            live: Vec::new(),
            terminal: TerminalByNodeByName::new(),
            deployment: None,
            rules: NodeRules::default(),
        }
    }

    fn reconciler(&self) -> NodeReconciler<'_> {
        NodeReconciler {
            job: &self.job,
            ready_nodes: &self.ready,
            not_ready_nodes: &self.not_ready,
            tainted_nodes: &self.tainted,
            live_allocs: &self.live,
            terminal_allocs: &self.terminal,
            deployment: self.deployment.as_ref(),
            now: NOW,
            rules: self.rules,
        }
    }

    /// `Compute`.
    fn compute(&self) -> NodeReconcileResult {
        let mut n = 0;
        self.reconciler().compute(&mut || {
            n += 1;
            format!("new-deployment-{n}")
        })
    }

    /// `computeForNode` for one node.
    fn compute_for_node(&self, node_id: &str) -> NodeReconcileResult {
        self.reconciler()
            .compute_for_node(node_id, &mut || "new-deployment".to_string())
    }
}

/// Go's `diffResultCount`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    place: usize,
    update: usize,
    migrate: usize,
    stop: usize,
    ignore: usize,
    lost: usize,
    disconnecting: usize,
    reconnecting: usize,
}

fn counts(result: &NodeReconcileResult) -> Counts {
    Counts {
        place: result.count(NodeSet::Place),
        update: result.count(NodeSet::Update),
        migrate: result.count(NodeSet::Migrate),
        stop: result.count(NodeSet::Stop),
        ignore: result.count(NodeSet::Ignore),
        lost: result.count(NodeSet::Lost),
        disconnecting: result.count(NodeSet::Disconnecting),
        reconnecting: result.count(NodeSet::Reconnecting),
    }
}

/// The rule applied to an existing alloc (exactly one entry expected).
fn rule_of(result: &NodeReconcileResult, alloc_id: &str) -> NodeRule {
    let entries = result.explain(alloc_id);
    assert_eq!(entries.len(), 1, "entries for {alloc_id}: {entries:?}");
    entries[0].rule
}

// ---------------------------------------------------------------------------
// reconcile_node_test.go

/// TestDiffSystemAllocs: a higher-level test of diffs across several nodes.
#[test]
fn test_diff_system_allocs() {
    let mut job = system_job();
    job.task_groups.push(group("other"));
    let old = older(&job);

    let mut case = Case::new(job.clone());
    // Every node is passed as ready, the drain and dead ones included.
    case.ready = ["foo", "bar", "baz", "has-term", "drain", "dead"]
        .into_iter()
        .map(|id| Node {
            id: id.into(),
            ..Node::default()
        })
        .collect();
    case.tainted
        .insert("dead".into(), Some(node("dead", NodeStatus::Down)));
    case.tainted
        .insert("drain".into(), Some(drain_node("drain")));

    let mut migrating = alloc("a-drain", "drain", "my-job.web[0]", &old);
    migrating.desired_transition.migrate = Some(true);
    case.live = vec![
        alloc("a-baz", "baz", "my-job.web[0]", &old),
        alloc("a-bar", "bar", "my-job.web[0]", &job),
        migrating,
        alloc("a-dead", "dead", "my-job.web[0]", &old),
    ];
    let terminal = alloc("t-has-term", "has-term", "my-job.web[0]", &job);
    case.terminal.set(terminal.clone());

    let result = case.compute();
    assert_eq!(
        counts(&result),
        Counts {
            update: 1,
            ignore: 1,
            migrate: 1,
            lost: 1,
            place: 6,
            ..Counts::default()
        }
    );
    assert_eq!(rule_of(&result, "a-baz"), NodeRule::JobChanged);
    assert_eq!(rule_of(&result, "a-bar"), NodeRule::UpToDate);
    assert_eq!(rule_of(&result, "a-drain"), NodeRule::MigrateTransition);
    assert_eq!(rule_of(&result, "a-dead"), NodeRule::NodeDown);

    // The placement replacing the terminal alloc is annotated with it.
    let on_has_term: Vec<_> = result
        .set(NodeSet::Place)
        .filter(|t| t.node_id == "has-term")
        .collect();
    assert_eq!(on_has_term.len(), 2);
    for tuple in on_has_term {
        let expected = (tuple.task_group.as_deref() == Some("web")).then(|| terminal.clone());
        assert_eq!(tuple.alloc, expected, "{}", tuple.name);
    }
    let place_nodes: Vec<&str> = result
        .set(NodeSet::Place)
        .map(|t| t.node_id.as_str())
        .collect();
    assert_eq!(
        place_nodes,
        ["bar", "baz", "foo", "foo", "has-term", "has-term"]
    );
}

/// The `TestNodeDeployments` setup: `web` without and `other` with the
/// default update block; a live `my-job.web[0]` on foo, bar and baz, where
/// baz runs Nomad 1.8.20.
fn node_deployments_setup() -> (Job, Vec<Node>, Vec<Allocation>) {
    let mut job = system_job();
    job.job_modify_index = 0;
    job.task_groups.push(TaskGroup {
        update: Some(default_update()),
        ..group("other")
    });
    let mut nodes: Vec<Node> = ["foo", "bar", "baz"]
        .into_iter()
        .map(|id| Node {
            id: id.into(),
            ..Node::default()
        })
        .collect();
    nodes[2]
        .attributes
        .insert("nomad.version".into(), "1.8.20+ent".into());
    let allocs = nodes
        .iter()
        .map(|n| alloc(&format!("a-{}", n.id), &n.id, "my-job.web[0]", &job))
        .collect();
    (job, nodes, allocs)
}

/// TestNodeDeployments/existing_successful_deployment_for_the_current_job_version_should_not_return_a_deployment.
/// The Go case asserts nothing; derived by tracing reconcile_node.go: the
/// successful deployment is retired, and since it was for this very job
/// version no new one is made.
#[test]
fn test_node_deployments_existing_successful_deployment() {
    let (job, nodes, allocs) = node_deployments_setup();
    let mut case = Case::new(job.clone());
    case.ready = nodes[0..1].to_vec();
    case.live = allocs;
    let successful = Deployment {
        id: "d-ok".into(),
        job_create_index: job.create_index,
        job_version: job.version,
        status: DeploymentStatus::Successful,
        ..Deployment::default()
    };
    case.deployment = Some(successful.clone());

    let result = case.compute();
    assert_eq!(result.deployment_current, None);
    assert!(!result.deployment_created);
    assert_eq!(result.deployment_old, Some(successful));
    assert!(result.deployment_updates.is_empty());
    assert_eq!(
        counts(&result),
        Counts {
            place: 1,
            ignore: 1,
            stop: 2,
            ..Counts::default()
        }
    );
    assert_eq!(rule_of(&result, "a-foo"), NodeRule::UpToDate);
    assert_eq!(rule_of(&result, "a-bar"), NodeRule::NodeNotTargeted);
}

/// TestNodeDeployments/existing_running_deployment_should_remain_untouched.
#[test]
fn test_node_deployments_existing_running_deployment_untouched() {
    let (job, nodes, allocs) = node_deployments_setup();
    let mut case = Case::new(job.clone());
    case.ready = nodes;
    case.live = allocs;
    let running = Deployment {
        id: "d-run".into(),
        job_id: job.id.clone(),
        job_create_index: job.create_index,
        job_version: job.version,
        status: DeploymentStatus::Running,
        status_description: "Deployment is running".into(),
        task_groups: BTreeMap::from([
            (
                "web".to_string(),
                DeploymentState {
                    auto_revert: true,
                    progress_deadline: Duration::from_mins(1),
                    ..DeploymentState::default()
                },
            ),
            (
                "other".to_string(),
                DeploymentState {
                    auto_promote: true,
                    ..DeploymentState::default()
                },
            ),
        ]),
        ..Deployment::default()
    };
    case.deployment = Some(running.clone());

    let result = case.compute();
    // Kept as it was, although baz is an old node: the check only guards
    // new deployments.
    assert_eq!(result.deployment_current, Some(running));
    assert!(!result.deployment_created);
    assert!(result.deployment_updates.is_empty());
    assert_eq!(
        counts(&result),
        Counts {
            place: 3,
            ignore: 3,
            ..Counts::default()
        }
    );
}

/// TestNodeDeployments/no_existing_deployment_for_a_new_job_that_needs_one_should_result_in_a_new_deployment.
#[test]
fn test_node_deployments_new_job_needs_deployment() {
    let (job, nodes, allocs) = node_deployments_setup();
    let new_job = Job {
        name: "new-job".into(),
        version: 100,
        create_index: 1000,
        ..job
    };
    let mut case = Case::new(new_job.clone());
    case.ready = nodes[0..1].to_vec();
    case.live = allocs;

    let result = case.compute();
    let created = result.created_deployment().expect("a new deployment");
    assert_eq!(created.status, DeploymentStatus::Running);
    assert_eq!(created.job_version, 100);
    assert_eq!(created.job_create_index, 1000);
    assert_eq!(created.create_time, NOW);
    assert_eq!(created.task_groups.keys().collect::<Vec<_>>(), ["other"]);
    assert_eq!(
        created.task_groups["other"].progress_deadline,
        Duration::from_mins(10)
    );
    assert_eq!(result.deployment_updates.len(), 1);
    assert_eq!(
        result.deployment_updates[0].status_description,
        "Deployment is running"
    );
    assert_eq!(
        counts(&result),
        Counts {
            place: 2,
            stop: 3,
            ..Counts::default()
        }
    );
}

/// TestNodeDeployments with canaries (not a Go sub-case; derived from
/// `computeForNode`): an update of a group with canaries is a canary update
/// while the deployment has not promoted the group, and not once it has.
#[test]
fn canary_updates_follow_the_deployment_state() {
    let mut job = system_job();
    job.task_groups[0].update = Some(UpdateStrategy {
        canary: 50,
        ..default_update()
    });
    let mut case = Case::new(job.clone());
    case.ready = vec![node("n1", NodeStatus::Ready)];
    case.live = vec![alloc("a1", "n1", "my-job.web[0]", &older(&job))];
    let mut deployment = Deployment {
        id: "d1".into(),
        job_version: job.version,
        job_create_index: job.create_index,
        status: DeploymentStatus::Running,
        task_groups: BTreeMap::from([("web".to_string(), DeploymentState::default())]),
        ..Deployment::default()
    };
    case.deployment = Some(deployment.clone());
    let result = case.compute();
    let update: Vec<_> = result.set(NodeSet::Update).collect();
    assert_eq!(update.len(), 1);
    assert!(update[0].canary);

    deployment.task_groups.get_mut("web").expect("web").promoted = true;
    case.deployment = Some(deployment);
    let result = case.compute();
    assert!(result.set(NodeSet::Update).all(|t| !t.canary));
}

/// COMPAT(1.11.0) (derived from `Compute`): a new deployment is dropped when
/// some alloc of this very version is already up to date, but its
/// "Deployment is running" update stays in the list.
#[test]
fn new_deployment_dropped_when_same_version_allocs_exist() {
    let (job, nodes, _) = node_deployments_setup();
    let mut case = Case::new(job.clone());
    case.ready = nodes[0..2].to_vec();
    // foo runs other[0] of this version (ignored); bar has nothing.
    case.live = vec![alloc("a-foo", "foo", "my-job.other[0]", &job)];
    let result = case.compute();
    assert_eq!(result.deployment_current, None);
    assert!(!result.deployment_created);
    assert_eq!(result.deployment_updates.len(), 1);
    assert!(result.deployment_notes.iter().any(|n| matches!(
        n,
        nomad_playground::reconciler::node::DeploymentNote::DroppedSameVersionAllocs { .. }
    )));
}

// ---------------------------------------------------------------------------
// scheduler_system_test.go TestSystemSched_NodeDisconnected, at the
// reconciler: one node, one job (system or sysbatch, disconnect lost_after
// 5s), at most one alloc; the scheduler's inputs are built from that state
// as `computeJobAllocs` does (`NodeSchedulerView`), and the plan the Go test
// expects is read back as reconciler sets.

struct DisconnectCase {
    name: &'static str,
    sysbatch: bool,
    exists: bool,
    required: bool,
    migrate: bool,
    draining: bool,
    targeted: bool,
    modify_job: bool,
    previous_terminal: bool,
    node_status: NodeStatus,
    client_status: ClientStatus,
    desired_status: DesiredStatus,
    alloc_states: &'static str,
    successful_tasks: bool,
    expect: Counts,
    expect_rule: Option<NodeRule>,
}

const BASE: DisconnectCase = DisconnectCase {
    name: "",
    sysbatch: false,
    exists: true,
    required: true,
    migrate: false,
    draining: false,
    targeted: true,
    modify_job: false,
    previous_terminal: false,
    node_status: NodeStatus::Ready,
    client_status: ClientStatus::Running,
    desired_status: DesiredStatus::Run,
    alloc_states: "none",
    successful_tasks: false,
    expect: Counts {
        place: 0,
        update: 0,
        migrate: 0,
        stop: 0,
        ignore: 0,
        lost: 0,
        disconnecting: 0,
        reconnecting: 0,
    },
    expect_rule: None,
};

const fn only(mut counts: Counts, set: NodeSet) -> Counts {
    match set {
        NodeSet::Place => counts.place = 1,
        NodeSet::Update => counts.update = 1,
        NodeSet::Migrate => counts.migrate = 1,
        NodeSet::Stop => counts.stop = 1,
        NodeSet::Ignore => counts.ignore = 1,
        NodeSet::Lost => counts.lost = 1,
        NodeSet::Disconnecting => counts.disconnecting = 1,
        NodeSet::Reconnecting => counts.reconnecting = 1,
    }
    counts
}

const fn one(set: NodeSet) -> Counts {
    only(BASE.expect, set)
}

fn disconnect_cases() -> Vec<DisconnectCase> {
    use NodeSet as S;
    vec![
        DisconnectCase {
            name: "system-running-disconnect",
            node_status: NodeStatus::Disconnected,
            expect: one(S::Disconnecting),
            expect_rule: Some(NodeRule::NodeDisconnected),
            ..BASE
        },
        DisconnectCase {
            name: "system-running-reconnect",
            alloc_states: "reconnected",
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::UpToDate),
            ..BASE
        },
        DisconnectCase {
            name: "system-unknown-expired",
            node_status: NodeStatus::Disconnected,
            client_status: ClientStatus::Unknown,
            alloc_states: "expired",
            expect: one(S::Lost),
            expect_rule: Some(NodeRule::Expired),
            ..BASE
        },
        DisconnectCase {
            name: "system-migrate",
            sysbatch: true,
            migrate: true,
            draining: true,
            expect: one(S::Migrate),
            expect_rule: Some(NodeRule::MigrateTransition),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-running-unknown",
            sysbatch: true,
            node_status: NodeStatus::Disconnected,
            expect: one(S::Disconnecting),
            expect_rule: Some(NodeRule::NodeDisconnected),
            ..BASE
        },
        DisconnectCase {
            name: "system-ignore-unknown",
            node_status: NodeStatus::Disconnected,
            client_status: ClientStatus::Unknown,
            alloc_states: "unknown",
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::UnknownAwaitingReconnect),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-ignore-unknown",
            sysbatch: true,
            node_status: NodeStatus::Disconnected,
            client_status: ClientStatus::Unknown,
            alloc_states: "unknown",
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::UnknownAwaitingReconnect),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-ignore-complete-disconnected",
            sysbatch: true,
            node_status: NodeStatus::Disconnected,
            client_status: ClientStatus::Complete,
            alloc_states: "unknown",
            // The alloc is terminal and its node not ready: the node is
            // not even visited.
            expect: BASE.expect,
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-running-reconnect",
            sysbatch: true,
            alloc_states: "reconnected",
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::UpToDate),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-failed-reconnect",
            sysbatch: true,
            client_status: ClientStatus::Failed,
            alloc_states: "reconnected",
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::TerminalSysbatchDone),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-complete-reconnect",
            sysbatch: true,
            client_status: ClientStatus::Complete,
            alloc_states: "reconnected",
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::TerminalSysbatchDone),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-unknown-expired",
            sysbatch: true,
            client_status: ClientStatus::Unknown,
            alloc_states: "expired",
            expect: one(S::Lost),
            expect_rule: Some(NodeRule::Expired),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-migrate",
            sysbatch: true,
            node_status: NodeStatus::Down,
            migrate: true,
            draining: true,
            expect: one(S::Migrate),
            expect_rule: Some(NodeRule::MigrateTransition),
            ..BASE
        },
        DisconnectCase {
            name: "system-stopped",
            sysbatch: true,
            required: false,
            node_status: NodeStatus::Down,
            expect: one(S::Stop),
            expect_rule: Some(NodeRule::NotRequired),
            ..BASE
        },
        DisconnectCase {
            name: "system-lost",
            node_status: NodeStatus::Down,
            expect: one(S::Lost),
            expect_rule: Some(NodeRule::NodeDown),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-lost",
            sysbatch: true,
            node_status: NodeStatus::Down,
            expect: one(S::Lost),
            expect_rule: Some(NodeRule::NodeDown),
            ..BASE
        },
        DisconnectCase {
            name: "system-node-draining",
            draining: true,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::NotReadyNode),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-node-draining",
            sysbatch: true,
            draining: true,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::NotReadyNode),
            ..BASE
        },
        DisconnectCase {
            name: "system-node-down-complete",
            node_status: NodeStatus::Down,
            client_status: ClientStatus::Complete,
            expect: BASE.expect,
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-node-down-complete",
            sysbatch: true,
            node_status: NodeStatus::Down,
            client_status: ClientStatus::Complete,
            expect: BASE.expect,
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-ignore-terminal",
            sysbatch: true,
            desired_status: DesiredStatus::Evict,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::TerminalSysbatchDone),
            ..BASE
        },
        DisconnectCase {
            name: "system-ignore-ineligible",
            node_status: NodeStatus::Disconnected,
            client_status: ClientStatus::Pending,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::TaintedNodeNotDown),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-ignore-ineligible",
            sysbatch: true,
            node_status: NodeStatus::Disconnected,
            client_status: ClientStatus::Pending,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::TaintedNodeNotDown),
            ..BASE
        },
        DisconnectCase {
            name: "system-stop-not-targeted",
            targeted: false,
            expect: one(S::Stop),
            expect_rule: Some(NodeRule::NodeNotTargeted),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-stop-not-targeted",
            sysbatch: true,
            targeted: false,
            expect: one(S::Stop),
            expect_rule: Some(NodeRule::NodeNotTargeted),
            ..BASE
        },
        DisconnectCase {
            name: "system-update-job-version",
            modify_job: true,
            expect: one(S::Update),
            expect_rule: Some(NodeRule::JobChanged),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-update-job-version",
            sysbatch: true,
            modify_job: true,
            expect: one(S::Update),
            expect_rule: Some(NodeRule::JobChanged),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-ignore-successful-tainted",
            sysbatch: true,
            node_status: NodeStatus::Down,
            successful_tasks: true,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::SysbatchFinishedOnTaintedNode),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-annotate-when-not-existing",
            sysbatch: true,
            exists: false,
            expect: one(S::Place),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-update-modified-terminal-when-not-existing",
            sysbatch: true,
            exists: false,
            modify_job: true,
            previous_terminal: true,
            expect: one(S::Update),
            expect_rule: Some(NodeRule::TerminalSysbatchJobChanged),
            ..BASE
        },
        DisconnectCase {
            name: "sysbatch-ignore-unmodified-terminal-when-not-existing",
            sysbatch: true,
            exists: false,
            previous_terminal: true,
            expect: one(S::Ignore),
            expect_rule: Some(NodeRule::TerminalSysbatchDone),
            ..BASE
        },
    ]
}

/// TestSystemSched_NodeDisconnected, every sub-case.
#[test]
fn test_system_sched_node_disconnected() {
    for tc in disconnect_cases() {
        let mut the_node = node("n1", tc.node_status.clone());
        if tc.draining {
            the_node.scheduling_eligibility = SchedulingEligibility::Ineligible;
        }
        let mut job = if tc.sysbatch {
            sysbatch_job()
        } else {
            system_job()
        };
        job.task_groups[0].disconnect = Some(DisconnectStrategy {
            lost_after: Duration::from_secs(5),
            ..DisconnectStrategy::default()
        });
        job.task_groups[0].tasks = vec![Default::default()];
        if !tc.targeted {
            job.datacenters = vec!["not-targeted".into()];
        }
        let name = format!("{}.{}[0]", job.name, job.task_groups[0].name);
        let mut the_alloc = alloc("a1", "n1", &name, &job);
        the_alloc.client_status = tc.client_status.clone();
        the_alloc.desired_status = tc.desired_status.clone();
        the_alloc.desired_transition.migrate = Some(tc.migrate);
        the_alloc.alloc_states = match tc.alloc_states {
            "unknown" => vec![client_state("unknown", NOW)],
            "expired" => vec![client_state("unknown", ago(Duration::from_secs(60)))],
            "reconnected" => vec![
                client_state("unknown", ago(Duration::from_secs(60))),
                client_state("running", NOW),
            ],
            _ => Vec::new(),
        };
        if tc.successful_tasks {
            the_alloc.task_states = BTreeMap::from([(
                "web".to_string(),
                TaskState {
                    state: "dead".into(),
                    ..TaskState::default()
                },
            )])
            .into();
        }

        let mut allocs = Vec::new();
        if tc.exists {
            allocs.push(the_alloc.clone());
        }
        if !tc.required {
            job.stop = true;
        }
        if tc.modify_job {
            // The job is registered again with a changed spec.
            job.job_modify_index += 10;
        }
        if tc.previous_terminal {
            let mut previous = the_alloc.clone();
            let mut previous_job = (**previous.job.as_ref().expect("job")).clone();
            if tc.modify_job {
                previous_job.job_modify_index = job.job_modify_index - 1;
            }
            previous.job = Some(Rc::new(previous_job));
            previous.client_status = ClientStatus::Complete;
            previous.desired_status = DesiredStatus::Run;
            allocs.push(previous);
        }

        let view = NodeSchedulerView::build(&job, std::slice::from_ref(&the_node), &allocs);
        let case = Case {
            job,
            ready: view.ready_nodes,
            not_ready: view.not_ready_nodes,
            tainted: view.tainted_nodes,
            live: view.live_allocs,
            terminal: view.terminal_allocs,
            deployment: None,
            rules: NodeRules::default(),
        };
        let result = case.compute();
        assert_eq!(counts(&result), tc.expect, "{}", tc.name);
        if let Some(rule) = tc.expect_rule {
            let rules: Vec<NodeRule> = result.flatten().iter().map(|t| t.rule).collect();
            assert_eq!(rules, [rule], "{}", tc.name);
        }
        // The disconnecting copy is what the plan writes: unknown, with an
        // unknown alloc state at `now`.
        for tuple in result.set(NodeSet::Disconnecting) {
            let copy = tuple.alloc.as_ref().expect("alloc");
            assert_eq!(copy.client_status, ClientStatus::Unknown, "{}", tc.name);
            assert_eq!(
                copy.alloc_states.last(),
                Some(&client_state("unknown", NOW))
            );
            assert_eq!(
                copy.client_description,
                "alloc is unknown since its node is disconnected"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Reconnecting allocs and the version switches (NodeRules)

fn disconnect_job(lost_after: Option<Duration>) -> Job {
    let mut job = system_job();
    job.task_groups[0].disconnect = lost_after.map(|lost_after| DisconnectStrategy {
        lost_after,
        ..DisconnectStrategy::default()
    });
    job
}

/// A running alloc on a ready node whose last client-status state is
/// `unknown`: reconnecting at HEAD, returned as a copy recording `running`.
#[test]
fn reconnecting_copy_records_the_reported_status() {
    let job = disconnect_job(Some(Duration::from_hours(1)));
    let mut case = Case::new(job.clone());
    case.ready = vec![node("n1", NodeStatus::Ready)];
    let mut back = alloc("a1", "n1", "my-job.web[0]", &job);
    back.client_status = ClientStatus::Running;
    back.alloc_states = vec![client_state("unknown", ago(Duration::from_mins(1)))];
    case.live = vec![back.clone()];

    let result = case.compute();
    let tuples: Vec<_> = result.set(NodeSet::Reconnecting).collect();
    assert_eq!(tuples.len(), 1);
    let copy = tuples[0].alloc.as_ref().expect("alloc");
    assert_eq!(copy.alloc_states.len(), 2);
    assert_eq!(copy.alloc_states[1], client_state("running", NOW));
    assert_eq!(tuples[0].rule, NodeRule::Reconnected);

    // ≤ 1.4.2: the alloc-state marker did not exist; a `Reconnected` task
    // event marks the reconnect, and the alloc comes back unchanged.
    case.rules = NodeRules::V1_4_2;
    case.job.task_groups[0].max_client_disconnect = Some(Duration::from_hours(1));
    let mut legacy = back.clone();
    legacy.job = Some(Rc::new(case.job.clone()));
    legacy.alloc_states.clear();
    legacy.task_states = BTreeMap::from([(
        "web".to_string(),
        TaskState {
            state: "running".into(),
            events: vec![TaskEvent {
                event_type: "Reconnected".into(),
                time: ago(Duration::from_secs(5)),
                ..TaskEvent::default()
            }],
            ..TaskState::default()
        },
    )])
    .into();
    case.live = vec![legacy.clone()];
    let result = case.compute();
    let tuples: Vec<_> = result.set(NodeSet::Reconnecting).collect();
    assert_eq!(tuples.len(), 1);
    assert_eq!(tuples[0].alloc.as_ref(), Some(&legacy));
}

/// Before 1.11.2 / 2.0.0 (PR #27265) the disconnect rules needed lost_after
/// on the group: without it a running alloc on a disconnected node was
/// ignored, not marked unknown.
#[test]
fn lost_after_gate_before_1_11_2() {
    for (lost_after, rules, expected) in [
        (None, NodeRules::HEAD, NodeRule::NodeDisconnected),
        (None, NodeRules::V1_11_2, NodeRule::NodeDisconnected),
        (None, NodeRules::V1_11_0, NodeRule::TaintedNodeNotDown),
        (None, NodeRules::V1_10_0, NodeRule::TaintedNodeNotDown),
        (
            Some(Duration::from_mins(5)),
            NodeRules::V1_10_0,
            NodeRule::NodeDisconnected,
        ),
        (
            Some(Duration::from_mins(5)),
            NodeRules::V1_11_0,
            NodeRule::NodeDisconnected,
        ),
    ] {
        let job = disconnect_job(lost_after);
        let mut case = Case::new(job.clone());
        case.rules = rules;
        case.tainted
            .insert("n1".into(), Some(node("n1", NodeStatus::Disconnected)));
        let mut running = alloc("a1", "n1", "my-job.web[0]", &job);
        running.client_status = ClientStatus::Running;
        case.live = vec![running];
        let result = case.compute();
        assert_eq!(rule_of(&result, "a1"), expected, "{lost_after:?} {rules:?}");
    }
}

/// An unknown alloc on a disconnected node: ignored while it may reconnect,
/// lost once lost_after has passed since it went unknown.
#[test]
fn unknown_allocs_expire_after_lost_after() {
    let job = disconnect_job(Some(Duration::from_mins(10)));
    for (went_unknown, expected) in [
        (Duration::from_mins(9), NodeRule::UnknownAwaitingReconnect),
        (Duration::from_mins(10), NodeRule::Expired),
    ] {
        let mut case = Case::new(job.clone());
        case.tainted
            .insert("n1".into(), Some(node("n1", NodeStatus::Disconnected)));
        let mut unknown = alloc("a1", "n1", "my-job.web[0]", &job);
        unknown.client_status = ClientStatus::Unknown;
        unknown.alloc_states = vec![client_state("unknown", ago(went_unknown))];
        case.live = vec![unknown];
        let result = case.compute();
        assert_eq!(rule_of(&result, "a1"), expected, "{went_unknown}");
    }
}

/// A node garbage-collected while holding an alloc: lost.
#[test]
fn alloc_on_gone_node_is_lost() {
    let job = system_job();
    let mut case = Case::new(job.clone());
    case.tainted.insert("gone".into(), None);
    case.live = vec![alloc("a1", "gone", "my-job.web[0]", &job)];
    let result = case.compute();
    assert_eq!(rule_of(&result, "a1"), NodeRule::NodeGone);
    assert_eq!(counts(&result).place, 0);
}

/// 1.11.0 made allocs on not-ready nodes stop when the job changed; before,
/// they were always ignored.
#[test]
fn outdated_alloc_on_not_ready_node() {
    let job = system_job();
    for (rules, expected) in [
        (NodeRules::HEAD, NodeRule::NotReadyNodeJobChanged),
        (NodeRules::V1_10_0, NodeRule::NotReadyNode),
    ] {
        let mut case = Case::new(job.clone());
        case.rules = rules;
        case.not_ready.insert("n1".into());
        case.live = vec![alloc("a1", "n1", "my-job.web[0]", &older(&job))];
        let result = case.compute();
        assert_eq!(rule_of(&result, "a1"), expected);
    }
}

/// Before 1.11.0 system jobs had no deployments; before 1.11.3 an old node
/// did not stop a new one.
#[test]
fn deployment_switches() {
    let (job, nodes, _) = node_deployments_setup();
    let new_job = Job {
        name: "new-job".into(),
        version: 100,
        create_index: 1000,
        ..job
    };
    let run = |rules: NodeRules| {
        let mut case = Case::new(new_job.clone());
        case.ready = nodes.clone();
        case.rules = rules;
        case.compute()
    };
    assert!(run(NodeRules::HEAD).created_deployment().is_none());
    assert!(run(NodeRules::V2_0_0).created_deployment().is_none());
    assert!(run(NodeRules::V1_11_2).created_deployment().is_some());
    assert!(run(NodeRules::V1_11_0).created_deployment().is_some());
    let before = run(NodeRules::V1_10_0);
    assert!(before.deployment_current.is_none());
    assert!(before.deployment_updates.is_empty());
    assert_eq!(counts(&before).place, 6);
}

/// Nodes are visited in ID order and the result does not depend on the
/// order of the input lists.
#[test]
fn result_does_not_depend_on_input_order() {
    let mut job = system_job();
    job.task_groups.push(group("other"));
    let mut case = Case::new(job.clone());
    case.ready = ["c", "a", "b"]
        .into_iter()
        .map(|id| node(id, NodeStatus::Ready))
        .collect();
    case.live = vec![
        alloc("a-c", "c", "my-job.web[0]", &job),
        alloc("a-a", "a", "my-job.web[0]", &older(&job)),
        alloc("a-x", "x", "my-job.web[0]", &job),
    ];
    let first = case.compute();
    case.ready.reverse();
    case.live.reverse();
    let second = case.compute();
    assert_eq!(first, second);
    assert_eq!(
        first.nodes.keys().map(String::as_str).collect::<Vec<_>>(),
        ["a", "b", "c", "x"]
    );
}

/// `compute_for_node` looks only at the allocs of that node.
#[test]
fn compute_for_node_uses_that_nodes_allocs() {
    let job = system_job();
    let mut case = Case::new(job.clone());
    case.ready = vec![node("n1", NodeStatus::Ready), node("n2", NodeStatus::Ready)];
    case.live = vec![alloc("a2", "n2", "my-job.web[0]", &job)];
    let result = case.compute_for_node("n1");
    assert_eq!(
        counts(&result),
        Counts {
            place: 1,
            ..Counts::default()
        }
    );
    assert_eq!(result.nodes.keys().collect::<Vec<_>>(), ["n1"]);
}

/// Issue #14925 for system jobs (docs/nomad-semantics.md §6.2): in ≤ 1.4.2
/// the sticky `Reconnected` task event keeps a reconnected alloc in
/// `reconnecting` at every eval, so a job update never reaches it; from
/// 1.4.3 the persisted alloc state ends the reconnect and the update applies.
#[test]
fn issue_14925_reconnected_alloc_misses_job_update_before_1_4_3() {
    let mut job = system_job();
    job.task_groups[0].max_client_disconnect = Some(Duration::from_hours(1));
    let mut case = Case::new(job.clone());
    case.ready = vec![node("n1", NodeStatus::Ready)];
    let mut reconnected = alloc("a1", "n1", "my-job.web[0]", &older(&job));
    reconnected.client_status = ClientStatus::Running;
    // Both markers: the client's task event and the server's alloc states
    // (unknown, then the running mark a 1.4.3 server stores on reconnect).
    reconnected.task_states = BTreeMap::from([(
        "web".to_string(),
        TaskState {
            state: "running".into(),
            events: vec![TaskEvent {
                event_type: "Reconnected".into(),
                time: ago(Duration::from_mins(5)),
                ..TaskEvent::default()
            }],
            ..TaskState::default()
        },
    )])
    .into();
    reconnected.alloc_states = vec![
        client_state("unknown", ago(Duration::from_mins(10))),
        client_state("running", ago(Duration::from_mins(5))),
    ];
    case.live = vec![reconnected];

    case.rules = NodeRules::V1_4_2;
    assert_eq!(rule_of(&case.compute(), "a1"), NodeRule::Reconnected);
    case.rules = NodeRules::V1_4_3;
    assert_eq!(rule_of(&case.compute(), "a1"), NodeRule::JobChanged);
}

/// Each entry explains itself in one line.
#[test]
fn entries_describe_themselves() {
    let job = system_job();
    let mut case = Case::new(job.clone());
    case.ready = vec![node("n1", NodeStatus::Ready)];
    case.live = vec![alloc("a2", "n2", "my-job.web[0]", &job)];
    let lines: Vec<String> = case
        .compute()
        .flatten()
        .iter()
        .map(|t| t.describe())
        .collect();
    assert_eq!(
        lines,
        [
            "place my-job.web[0] on n1: missing on an eligible node",
            "stop my-job.web[0] (a2) on n2: node no longer targeted",
        ]
    );
}
