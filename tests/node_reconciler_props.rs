//! Property tests of the node reconciler, ported from Nomad's
//! `scheduler/reconciler/reconcile_node_prop_test.go`
//! (`TestNodeReconciler_PropTest`, generator `genNodeReconciler` and the
//! helpers it shares with `reconcile_cluster_prop_test.go`), with rapid
//! replaced by proptest.
//!
//! Two differences from the Go test, both deliberate:
//! - Go records placements under the label "placed" but checks "place",
//!   so its placement bound never fires; here it is checked.
//! - Go's generator builds a terminal-alloc index but does not hand it to
//!   `Compute`; the ported safety properties run that way, and the extra
//!   properties below run again with the index.
//!
//! Every case also runs under each release's `NodeRules`.

use nomad_playground::model::{
    AllocState, Allocation, ClientStatus, Deployment, DeploymentState, DeploymentStatus,
    DesiredStatus, DisconnectStrategy, DrainStrategy, Duration, Job, JobType, Node, NodeStatus,
    ReconcileStrategy, RescheduleEvent, ReschedulePolicy, RescheduleTracker, SchedulingEligibility,
    TaskGroup, Time, UpdateStrategy,
};
use nomad_playground::reconciler::node::{
    NodeReconcileResult, NodeReconciler, NodeRule, NodeRules, NodeSet, TerminalByNodeByName,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// `maxAllocs` of the Go generators.
const MAX_ALLOCS: u32 = 30;

/// 2026-01-01T12:00:00Z stands for Go's `time.Now()` in the generator.
const NOW: Time = Time(1_767_268_800_000_000_000);

const RULES: [NodeRules; 7] = [
    NodeRules::HEAD,
    NodeRules::V2_0_0,
    NodeRules::V1_11_2,
    NodeRules::V1_11_0,
    NodeRules::V1_10_0,
    NodeRules::V1_4_3,
    NodeRules::V1_4_2,
];

#[derive(Debug, Clone)]
struct GroupSpec {
    count: u32,
    max_parallel_seed: u32,
    canary_seed: u32,
    auto_revert: bool,
    auto_promote: bool,
    lost_after_set: bool,
    replace: bool,
    unlimited: bool,
}

#[derive(Debug, Clone)]
struct AllocSpec {
    client_status: usize,
    desired_status: usize,
    has_disconnect: bool,
    unknown_minutes_ago: i64,
    group_seed: usize,
    reschedule_events: usize,
}

#[derive(Debug, Clone)]
struct NodeSpec {
    status: usize,
    draining: bool,
    is_old: bool,
    wrong_dc: bool,
    /// Not in Go's generator: a node that is not ready is listed as ready
    /// anyway (a stale view, as `TestDiffSystemAllocs` builds one).
    listed_ready_anyway: bool,
    alloc: AllocSpec,
}

#[derive(Debug, Clone)]
struct InputSpec {
    sysbatch: bool,
    groups: Vec<GroupSpec>,
    job_stopped: bool,
    nodes: Vec<NodeSpec>,
    empty_nodes: Vec<(usize, bool)>,
    deployment: Option<(usize, Vec<bool>)>,
}

/// `weightedBool(pct)`: `IntRange(0, 100) <= pct`.
fn weighted(pct: u32) -> impl Strategy<Value = bool> {
    (0u32..=100).prop_map(move |i| i <= pct)
}

fn group_spec() -> impl Strategy<Value = GroupSpec> {
    (
        0..=MAX_ALLOCS,
        any::<u32>(),
        any::<u32>(),
        any::<bool>(),
        any::<bool>(),
        weighted(50),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(count, mp, canary, auto_revert, auto_promote, no_lost_after, replace, unlimited)| {
                GroupSpec {
                    count,
                    max_parallel_seed: mp,
                    canary_seed: canary,
                    auto_revert,
                    auto_promote,
                    lost_after_set: !no_lost_after,
                    replace,
                    unlimited,
                }
            },
        )
}

fn alloc_spec() -> impl Strategy<Value = AllocSpec> {
    (
        0usize..6,
        0usize..3,
        weighted(40),
        0i64..=5,
        any::<usize>(),
        0usize..=3,
    )
        .prop_map(
            |(
                client_status,
                desired_status,
                has_disconnect,
                unknown_minutes_ago,
                group_seed,
                events,
            )| {
                AllocSpec {
                    client_status,
                    desired_status,
                    has_disconnect,
                    unknown_minutes_ago,
                    group_seed,
                    reschedule_events: events,
                }
            },
        )
}

/// `genNode`: ready (three chances in five), down or disconnected; a ready
/// node drains with weight 30.
fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        0usize..5,
        weighted(30),
        weighted(30),
        weighted(20),
        weighted(10),
        alloc_spec(),
    )
        .prop_map(
            |(status, draining, is_old, wrong_dc, listed_ready_anyway, alloc)| NodeSpec {
                status,
                draining,
                is_old,
                wrong_dc,
                listed_ready_anyway,
                alloc,
            },
        )
}

fn input_spec() -> impl Strategy<Value = InputSpec> {
    (
        any::<bool>(),
        prop::collection::vec(group_spec(), 1..=3),
        weighted(30),
        prop::collection::vec(node_spec(), 0..=30),
        prop::collection::vec((0usize..5, weighted(30)), 0..=5),
        prop::option::of((0usize..6, prop::collection::vec(any::<bool>(), 3))),
    )
        .prop_map(
            |(sysbatch, groups, job_stopped, nodes, empty_nodes, deployment)| InputSpec {
                sysbatch,
                groups,
                job_stopped,
                nodes,
                empty_nodes,
                deployment,
            },
        )
}

/// Nomad's `idGenerator`: unique IDs and names that are not a fuzzing dimension.
#[derive(Default)]
struct IdGenerator {
    index: u64,
}

impl IdGenerator {
    fn next_name(&mut self) -> String {
        self.index += 1;
        format!("name-{}", self.index)
    }
    fn next_id(&mut self) -> String {
        self.index += 1;
        format!("00000000-0000-0000-0000-{:012x}", self.index)
    }
}

/// The generated input (`nodeReconcilerInput`), plus the terminal index Go
/// builds but does not pass on.
struct Input {
    job: Job,
    ready_nodes: Vec<Node>,
    not_ready_nodes: BTreeSet<String>,
    tainted_nodes: BTreeMap<String, Option<Node>>,
    live: Vec<Allocation>,
    terminal: TerminalByNodeByName,
    deployment: Option<Deployment>,
}

fn build_node(ids: &mut IdGenerator, status: usize, draining: bool) -> Node {
    let status = match status {
        0..=2 => NodeStatus::Ready,
        3 => NodeStatus::Down,
        _ => NodeStatus::Disconnected,
    };
    let drain_strategy = (status == NodeStatus::Ready && draining).then(DrainStrategy::default);
    Node {
        id: ids.next_id(),
        status,
        drain_strategy,
        scheduling_eligibility: SchedulingEligibility::Eligible,
        ..Node::default()
    }
}

fn build(spec: &InputSpec) -> Input {
    let mut ids = IdGenerator::default();
    // `genNode` draws every node before the job, as Go does.
    let nodes: Vec<Node> = spec
        .nodes
        .iter()
        .map(|n| build_node(&mut ids, n.status, n.draining))
        .collect();
    let empty: Vec<Node> = spec
        .empty_nodes
        .iter()
        .map(|&(status, draining)| build_node(&mut ids, status, draining))
        .collect();

    let task_groups = spec
        .groups
        .iter()
        .map(|g| {
            let max_parallel = g.max_parallel_seed % (g.count + 1);
            TaskGroup {
                name: ids.next_name(),
                count: g.count,
                update: Some(UpdateStrategy {
                    max_parallel,
                    canary: g.canary_seed % (max_parallel + 1),
                    auto_revert: g.auto_revert,
                    auto_promote: g.auto_promote,
                    ..UpdateStrategy::default()
                }),
                disconnect: Some(DisconnectStrategy {
                    lost_after: Duration::from_nanos(if g.lost_after_set { 300 } else { 0 }),
                    replace: Some(g.replace),
                    reconcile: ReconcileStrategy::BestScore,
                    stop_on_client_after: None,
                }),
                reschedule_policy: Some(ReschedulePolicy {
                    attempts: 3,
                    interval: Duration::from_hours(1),
                    delay: Duration::from_secs(90),
                    delay_function: nomad_playground::model::DelayFunction::Constant,
                    max_delay: Duration::from_hours(1),
                    unlimited: g.unlimited,
                }),
                ephemeral_disk: Some(Default::default()),
                ..TaskGroup::default()
            }
        })
        .collect::<Vec<_>>();
    let job = Job {
        id: "jobID".into(),
        name: "jobID".into(),
        job_type: if spec.sysbatch {
            JobType::SysBatch
        } else {
            JobType::System
        },
        task_groups,
        version: 3,
        stop: spec.job_stopped,
        create_index: 1000,
        job_modify_index: 1000,
        ..Job::default()
    };
    let old_job = Job {
        version: job.version - 1,
        job_modify_index: 100,
        create_index: 100,
        ..job.clone()
    };
    let (job_arc, old_arc) = (Rc::new(job.clone()), Rc::new(old_job));

    let mut input = Input {
        job: job.clone(),
        ready_nodes: Vec::new(),
        not_ready_nodes: BTreeSet::new(),
        tainted_nodes: BTreeMap::new(),
        live: Vec::new(),
        terminal: TerminalByNodeByName::new(),
        deployment: None,
    };
    for (node, node_spec) in nodes.iter().zip(&spec.nodes) {
        let alloc_job = if node_spec.is_old { &old_arc } else { &job_arc };
        let mut alloc = build_alloc(&mut ids, &node_spec.alloc, alloc_job, &node.id);
        alloc.name = format!("{}.{}[0]", job.id, alloc.task_group);

        if node_spec.is_old && node_spec.wrong_dc {
            input.not_ready_nodes.insert(node.id.clone());
        } else if node.ready() {
            input.ready_nodes.push(node.clone());
        } else {
            input.not_ready_nodes.insert(node.id.clone());
            if node.status == NodeStatus::Down || node.draining() {
                input
                    .tainted_nodes
                    .insert(node.id.clone(), Some(node.clone()));
                // Go sets this through the pointer it already stored.
                alloc.desired_transition.migrate = Some(true);
            }
            if node.status == NodeStatus::Disconnected {
                input
                    .tainted_nodes
                    .insert(node.id.clone(), Some(node.clone()));
            }
            if node_spec.listed_ready_anyway {
                input.ready_nodes.push(node.clone());
            }
        }
        if alloc.terminal_status() {
            input.terminal.set(alloc);
        } else {
            input.live.push(alloc);
        }
    }
    for node in empty {
        if node.ready() {
            input.ready_nodes.push(node);
        } else {
            input.not_ready_nodes.insert(node.id.clone());
        }
    }
    input.deployment = spec
        .deployment
        .as_ref()
        .map(|(status, promoted)| build_deployment(&mut ids, &job, &input.live, *status, promoted));
    input
}

/// `genExistingAlloc`.
fn build_alloc(
    ids: &mut IdGenerator,
    spec: &AllocSpec,
    job: &Rc<Job>,
    node_id: &str,
) -> Allocation {
    let client_status = [
        ClientStatus::Pending,
        ClientStatus::Running,
        ClientStatus::Complete,
        ClientStatus::Failed,
        ClientStatus::Lost,
        ClientStatus::Unknown,
    ][spec.client_status]
        .clone();
    let desired_status = [
        DesiredStatus::Run,
        DesiredStatus::Evict,
        DesiredStatus::Stop,
    ][spec.desired_status]
        .clone();
    let alloc_states = if spec.has_disconnect {
        vec![AllocState {
            field: "ClientStatus".into(),
            value: "unknown".into(),
            time: NOW.sub_duration(Duration::from_mins(spec.unknown_minutes_ago)),
        }]
    } else {
        Vec::new()
    };
    let group = &job.task_groups[spec.group_seed % job.task_groups.len()];
    let mut alloc = Allocation {
        id: ids.next_id(),
        node_id: node_id.into(),
        job_id: job.id.clone(),
        job: Some(Rc::clone(job)),
        task_group: group.name.clone(),
        client_status,
        desired_status,
        alloc_states,
        ..Allocation::default()
    };
    if alloc.client_terminal_status() && spec.reschedule_events > 0 {
        let events = (0..spec.reschedule_events)
            .map(|i| RescheduleEvent {
                reschedule_time: NOW.sub_duration(Duration::from_mins(i as i64)),
                prev_alloc_id: ids.next_id(),
                prev_node_id: ids.next_id(),
                delay: Duration::ZERO,
            })
            .collect();
        alloc.reschedule_tracker = Some(RescheduleTracker {
            events: Some(events),
            last_reschedule: String::new(),
        });
    }
    alloc
}

/// `genDeployment` (when not nil).
fn build_deployment(
    ids: &mut IdGenerator,
    job: &Job,
    live: &[Allocation],
    status: usize,
    promoted: &[bool],
) -> Deployment {
    let mut task_groups = BTreeMap::new();
    for (index, group) in job.task_groups.iter().enumerate() {
        let update = group.update.clone().unwrap_or_default();
        let mut state = DeploymentState {
            auto_revert: update.auto_revert,
            auto_promote: update.auto_promote,
            progress_deadline: update.progress_deadline,
            promoted: promoted[index % promoted.len()],
            desired_canaries: update.canary,
            desired_total: group.count,
            ..DeploymentState::default()
        };
        for alloc in live.iter().filter(|a| a.task_group == group.name) {
            state.placed_allocs += 1;
            if alloc.client_terminal_status() {
                state.unhealthy_allocs += 1;
            } else if alloc.client_status == ClientStatus::Running {
                state.healthy_allocs += 1;
            }
            if (state.placed_canaries.len() as u32) < state.desired_canaries {
                state.placed_canaries.push(alloc.id.clone());
            }
        }
        task_groups.insert(group.name.clone(), state);
    }
    Deployment {
        id: ids.next_id(),
        job_id: job.id.clone(),
        job_version: job.version,
        job_create_index: job.create_index,
        create_index: job.create_index,
        task_groups,
        status: [
            DeploymentStatus::Running,
            DeploymentStatus::Pending,
            DeploymentStatus::Initializing,
            DeploymentStatus::Paused,
            DeploymentStatus::Failed,
            DeploymentStatus::Successful,
        ][status]
            .clone(),
        ..Deployment::default()
    }
}

fn run(input: &Input, rules: NodeRules, terminal: &TerminalByNodeByName) -> NodeReconcileResult {
    let reconciler = NodeReconciler {
        job: &input.job,
        ready_nodes: &input.ready_nodes,
        not_ready_nodes: &input.not_ready_nodes,
        tainted_nodes: &input.tainted_nodes,
        live_allocs: &input.live,
        terminal_allocs: terminal,
        deployment: input.deployment.as_ref(),
        now: NOW,
        rules,
    };
    let mut n = 0;
    reconciler.compute(&mut || {
        n += 1;
        format!("new-deployment-{n}")
    })
}

/// `collectExpectedAndResults`: per group, the expected count, the existing
/// allocs and the size of each result set.
fn per_task_group(
    input: &Input,
    result: &NodeReconcileResult,
) -> BTreeMap<String, BTreeMap<&'static str, usize>> {
    let mut groups: BTreeMap<String, BTreeMap<&'static str, usize>> = BTreeMap::new();
    for group in &input.job.task_groups {
        groups
            .entry(group.name.clone())
            .or_default()
            .insert("expect_count", group.count as usize);
    }
    for alloc in &input.live {
        let counts = groups.entry(alloc.task_group.clone()).or_default();
        *counts.entry("exist_total").or_default() += 1;
        if alloc.terminal_status() {
            *counts.entry("exist_terminal").or_default() += 1;
        }
    }
    for set in NodeSet::ALL {
        for tuple in result.set(set) {
            let group = tuple
                .task_group
                .clone()
                .or_else(|| tuple.alloc.as_ref().map(|a| a.task_group.clone()))
                .expect("one of task group or alloc is always set");
            *groups
                .entry(group)
                .or_default()
                .entry(set.as_str())
                .or_default() += 1;
        }
    }
    groups
}

/// `sharedSafetyProperties`.
fn shared_safety_properties(
    input: &Input,
    result: &NodeReconcileResult,
) -> Result<(), TestCaseError> {
    let ready = input.ready_nodes.len();
    for (group, counts) in per_task_group(input, result) {
        let get = |key: &str| counts.get(key).copied().unwrap_or(0);
        prop_assert!(
            get("place") <= get("expect_count") * ready,
            "group placements should never exceed ready nodes times count ({group}): {counts:?}"
        );
        for set in ["migrate", "ignore", "stop", "update"] {
            prop_assert!(
                get(set) <= get("exist_total"),
                "group {set} should never exceed total allocs in group ({group}): {counts:?}"
            );
        }
    }
    Ok(())
}

/// Properties beyond the Go test, with the terminal index passed in.
fn extra_properties(input: &Input, rules: NodeRules) -> Result<(), TestCaseError> {
    let result = run(input, rules, &input.terminal);

    // Each live alloc lands in exactly one set (placements aside).
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for tuple in result.nodes.values().flat_map(|d| d.iter()) {
        if tuple.set() != NodeSet::Place
            && let Some(id) = tuple.alloc_id()
            && input.live.iter().any(|a| a.id == id)
        {
            *seen.entry(id).or_default() += 1;
        }
        prop_assert_eq!(tuple.rule.set(), tuple.set());
    }
    for alloc in &input.live {
        prop_assert_eq!(
            seen.get(alloc.id.as_str()).copied(),
            Some(1),
            "alloc {}",
            alloc.id
        );
    }

    // Placements go only to ready, untainted nodes, for names missing there.
    let ready: BTreeSet<&str> = input.ready_nodes.iter().map(|n| n.id.as_str()).collect();
    let per_task_group_counts = per_task_group(input, &result);
    for tuple in result.set(NodeSet::Place) {
        prop_assert!(ready.contains(tuple.node_id.as_str()));
        prop_assert!(!input.tainted_nodes.contains_key(&tuple.node_id));
        prop_assert!(
            !input
                .live
                .iter()
                .any(|a| a.node_id == tuple.node_id && a.name == tuple.name)
        );
        prop_assert_eq!(tuple.rule, NodeRule::Missing);
    }
    for (group, counts) in &per_task_group_counts {
        let get = |key: &str| counts.get(key).copied().unwrap_or(0);
        prop_assert!(
            get("place") <= get("expect_count") * ready.len(),
            "{}: {:?}",
            group,
            counts
        );
    }

    // A stopped job places nothing, stops every live alloc and creates no deployment.
    if input.job.stop {
        prop_assert_eq!(result.count(NodeSet::Place), 0);
        prop_assert_eq!(result.count(NodeSet::Stop), input.live.len());
        prop_assert!(result.created_deployment().is_none());
    }

    // The same input gives the same result.
    prop_assert_eq!(&result, &run(input, rules, &input.terminal));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// TestNodeReconciler_PropTest/system_jobs and /sysbatch_jobs (the job
    /// type is one more drawn dimension), under every release's rules.
    #[test]
    fn test_node_reconciler_prop_test(spec in input_spec()) {
        let input = build(&spec);
        for rules in RULES {
            let result = run(&input, rules, &TerminalByNodeByName::new());
            shared_safety_properties(&input, &result)?;
            extra_properties(&input, rules)?;
        }
    }
}
