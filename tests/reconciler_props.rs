//! Property tests of the cluster reconciler, ported from Nomad's
//! `scheduler/reconciler/reconcile_cluster_prop_test.go`
//! (`TestAllocReconciler_PropTest`, "batch jobs" and "service jobs"): random
//! jobs, tainted nodes, existing allocs (current and older job version) and
//! deployments; the safety properties of `sharedSafetyProperties` must hold.
//! Added here: the run is deterministic, and every input alloc gets exactly
//! one reason record.

use nomad_playground::model::{
    AllocDeploymentStatus, AllocState, Allocation, ClientStatus, Deployment, DeploymentState,
    DeploymentStatus, DesiredStatus, DisconnectStrategy, DrainStrategy, Duration, EphemeralDisk,
    Job, JobType, Node, NodeStatus, ReconcileStrategy, RescheduleEvent, ReschedulePolicy,
    RescheduleTracker, SchedulingEligibility, TaskGroup, Time, UpdateStrategy,
};
use nomad_playground::reconciler::cluster::{
    ClusterInput, ReconcileOptions, ReconcileResult, UpdateType, reconcile,
};
use nomad_playground::reconciler::reasons::AllocCategory;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::rc::Rc;

const MAX_ALLOCS: u32 = 30;

#[derive(Debug, Clone)]
struct GroupSpec {
    count: u32,
    max_parallel: u32,
    canary: u32,
    auto_revert: bool,
    auto_promote: bool,
    lost_after: bool,
    replace: bool,
    unlimited: bool,
}

fn group_spec() -> impl Strategy<Value = GroupSpec> {
    (0..=MAX_ALLOCS)
        .prop_flat_map(|count| (Just(count), 0..=count))
        .prop_flat_map(|(count, mp)| {
            (
                Just(count),
                Just(mp),
                0..=mp,
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
        })
        .prop_map(
            |(
                count,
                max_parallel,
                canary,
                auto_revert,
                auto_promote,
                lost_after,
                replace,
                unlimited,
            )| {
                GroupSpec {
                    count,
                    max_parallel,
                    canary,
                    auto_revert,
                    auto_promote,
                    lost_after,
                    replace,
                    unlimited,
                }
            },
        )
}

#[derive(Debug, Clone)]
struct AllocSpec {
    group: usize,
    client: usize,
    desired: usize,
    disconnect_mins_ago: Option<i64>,
    node: Option<usize>,
    reschedule_events: usize,
}

fn alloc_spec() -> impl Strategy<Value = AllocSpec> {
    (
        0usize..3,
        0usize..6,
        0usize..3,
        prop::option::weighted(0.4, 0i64..=5),
        prop::option::of(0usize..5),
        0usize..=3,
    )
        .prop_map(
            |(group, client, desired, disconnect_mins_ago, node, reschedule_events)| AllocSpec {
                group,
                client,
                desired,
                disconnect_mins_ago,
                node,
                reschedule_events,
            },
        )
}

#[derive(Debug, Clone)]
struct Scenario {
    batch: bool,
    stopped: bool,
    groups: Vec<GroupSpec>,
    nodes: Vec<(usize, bool)>,
    current: Vec<AllocSpec>,
    old: Vec<AllocSpec>,
    deploy_current: Option<(usize, bool)>,
    deploy_old: Option<(usize, bool)>,
    update_fn: usize,
}

fn scenario(batch: bool) -> impl Strategy<Value = Scenario> {
    (
        prop::bool::weighted(0.3),
        prop::collection::vec(group_spec(), 1..=3),
        prop::collection::vec((0usize..5, prop::bool::weighted(0.3)), 0..=5),
        prop::collection::vec(alloc_spec(), 0..=15),
        prop::collection::vec(alloc_spec(), 0..=15),
        prop::option::of((0usize..6, any::<bool>())),
        prop::option::of((0usize..6, any::<bool>())),
        0usize..3,
    )
        .prop_map(
            move |(stopped, groups, nodes, current, old, deploy_current, deploy_old, update_fn)| {
                Scenario {
                    batch,
                    stopped,
                    groups,
                    nodes,
                    current,
                    old,
                    deploy_current,
                    deploy_old,
                    update_fn,
                }
            },
        )
}

fn now() -> Time {
    Time::parse_rfc3339("2026-01-01T12:00:00Z").unwrap()
}

struct Built {
    input: ClusterInput<'static>,
    update_fn: usize,
    deployment_old: Option<Deployment>,
}

fn build(s: &Scenario) -> Built {
    let mut idx = 0u64;
    let mut next = || {
        idx += 1;
        idx
    };
    let groups: Vec<TaskGroup> = s
        .groups
        .iter()
        .map(|g| TaskGroup {
            name: format!("name-{}", next()),
            count: g.count,
            update: Some(UpdateStrategy {
                max_parallel: g.max_parallel,
                canary: g.canary,
                auto_revert: g.auto_revert,
                auto_promote: g.auto_promote,
                ..Default::default()
            }),
            disconnect: Some(DisconnectStrategy {
                lost_after: if g.lost_after {
                    Duration(300)
                } else {
                    Duration::ZERO
                },
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
            ephemeral_disk: Some(EphemeralDisk::default()),
            ..Default::default()
        })
        .collect();
    let job = Job {
        id: "jobID".into(),
        name: "jobID".into(),
        job_type: if s.batch {
            JobType::Batch
        } else {
            JobType::Service
        },
        task_groups: groups,
        version: 3,
        stop: s.stopped,
        create_index: 1000,
        job_modify_index: 1000,
        ..Default::default()
    };
    let mut old_job = job.clone();
    old_job.version -= 1;
    old_job.job_modify_index = 100;
    old_job.create_index = 100;

    let statuses = [
        NodeStatus::Ready,
        NodeStatus::Ready,
        NodeStatus::Ready,
        NodeStatus::Down,
        NodeStatus::Disconnected,
    ];
    let nodes: Vec<Node> = s
        .nodes
        .iter()
        .map(|(st, drain)| {
            let status = statuses[*st].clone();
            Node {
                id: format!("node-{}", next()),
                drain_strategy: (status == NodeStatus::Ready && *drain)
                    .then(DrainStrategy::default),
                status,
                scheduling_eligibility: SchedulingEligibility::Eligible,
                ..Default::default()
            }
        })
        .collect();

    let client = [
        ClientStatus::Pending,
        ClientStatus::Running,
        ClientStatus::Complete,
        ClientStatus::Failed,
        ClientStatus::Lost,
        ClientStatus::Unknown,
    ];
    let desired = [
        DesiredStatus::Run,
        DesiredStatus::Evict,
        DesiredStatus::Stop,
    ];
    let mut make_allocs = |specs: &[AllocSpec], job: &Rc<Job>| -> Vec<Allocation> {
        specs
            .iter()
            .map(|a| {
                let tg = &job.task_groups[a.group % job.task_groups.len()].name;
                let node_id = match a.node {
                    Some(n) if !nodes.is_empty() => nodes[n % nodes.len()].id.clone(),
                    _ => format!("node-{}", next()),
                };
                let mut alloc = Allocation {
                    id: format!("alloc-{:04}", next()),
                    name: format!("{tg}[{}]", next()),
                    node_id,
                    job_id: job.id.clone(),
                    job: Some(Rc::clone(job)),
                    task_group: tg.clone(),
                    client_status: client[a.client].clone(),
                    desired_status: desired[a.desired].clone(),
                    ..Default::default()
                };
                if let Some(mins) = a.disconnect_mins_ago {
                    alloc.alloc_states.push(AllocState {
                        field: "ClientStatus".into(),
                        value: "unknown".into(),
                        time: now().sub_duration(Duration::from_mins(mins)),
                    });
                }
                if alloc.client_terminal_status() && a.reschedule_events > 0 {
                    let events = (0..a.reschedule_events)
                        .map(|i| RescheduleEvent {
                            reschedule_time: now().sub_duration(Duration::from_mins(i as i64)),
                            prev_alloc_id: format!("prev-{}", next()),
                            prev_node_id: format!("prev-node-{}", next()),
                            delay: Duration::ZERO,
                        })
                        .collect();
                    alloc.reschedule_tracker = Some(RescheduleTracker {
                        events: Some(events),
                        ..Default::default()
                    });
                }
                alloc
            })
            .collect()
    };
    let job_arc = Rc::new(job.clone());
    let old_arc = Rc::new(old_job.clone());
    let mut current = make_allocs(&s.current, &job_arc);
    let old = make_allocs(&s.old, &old_arc);
    let mut previous = String::new();
    for (i, a) in current.iter_mut().enumerate() {
        if i % 3 == 0 {
            a.next_allocation = previous.clone();
        } else {
            previous = a.id.clone();
        }
    }

    let dstatuses = [
        DeploymentStatus::Running,
        DeploymentStatus::Pending,
        DeploymentStatus::Initializing,
        DeploymentStatus::Paused,
        DeploymentStatus::Failed,
        DeploymentStatus::Successful,
    ];
    let mut deployment =
        |spec: Option<(usize, bool)>, job: &Job, allocs: &mut [Allocation]| -> Option<Deployment> {
            let (status, promoted) = spec?;
            let id = format!("deploy-{}", next());
            let mut groups = BTreeMap::new();
            for tg in &job.task_groups {
                let u = tg.update.as_ref().unwrap();
                let mut s = DeploymentState {
                    auto_revert: u.auto_revert,
                    auto_promote: u.auto_promote,
                    promoted,
                    desired_canaries: u.canary,
                    desired_total: tg.count,
                    ..Default::default()
                };
                for a in allocs.iter_mut().filter(|a| a.task_group == tg.name) {
                    s.placed_allocs += 1;
                    if a.client_terminal_status() {
                        s.unhealthy_allocs += 1;
                    } else if a.client_status == ClientStatus::Running {
                        s.healthy_allocs += 1;
                    }
                    if (s.placed_canaries.len() as u32) < s.desired_canaries {
                        s.placed_canaries.push(a.id.clone());
                        a.deployment_status = Some(AllocDeploymentStatus {
                            canary: true,
                            ..Default::default()
                        });
                    }
                    a.deployment_id = id.clone();
                }
                groups.insert(tg.name.clone(), s);
            }
            Some(Deployment {
                id,
                job_id: job.id.clone(),
                job_version: job.version,
                job_create_index: job.create_index,
                task_groups: groups,
                status: dstatuses[status].clone(),
                create_index: job.create_index,
                ..Default::default()
            })
        };
    let mut old = old;
    let deployment_old = deployment(s.deploy_old, &old_job, &mut old);
    let deployment_current = deployment(s.deploy_current, &job, &mut current);

    let mut input = ClusterInput::new(Some(job), now());
    input.job_is_batch = s.batch;
    input.deployment_paused = deployment_current
        .as_ref()
        .is_some_and(|d| d.status == DeploymentStatus::Paused);
    input.deployment_failed = deployment_current
        .as_ref()
        .is_some_and(|d| d.status == DeploymentStatus::Failed);
    input.deployment = deployment_current;
    input.allocs = current.into_iter().chain(old).map(Rc::new).collect();
    input.eval_id = format!("eval-{}", next()).into();
    input.tainted_nodes = Rc::new(nodes.into_iter().map(|n| (n.id.clone(), Some(n))).collect());
    Built {
        input,
        update_fn: s.update_fn,
        deployment_old,
    }
}

fn run(b: &Built) -> ReconcileResult {
    let f = b.update_fn;
    let update = move |a: &Allocation, job: &Job, _: &TaskGroup| match f {
        0 => UpdateType::Destructive,
        1 => UpdateType::Ignore,
        _ => {
            let mut u = a.clone();
            u.job = Some(Rc::new(job.clone()));
            UpdateType::InPlace(Rc::new(u))
        }
    };
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("new-{n}")
    };
    reconcile(&b.input, &ReconcileOptions::default(), &update, &mut ids)
}

#[derive(Default, Debug)]
struct Counts {
    expect_count: u64,
    max_canaries: u64,
    exist_total: u64,
    exist_non_client_terminal: u64,
    exist_canary: u64,
}

fn collect_expected(input: &ClusterInput) -> BTreeMap<String, Counts> {
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    let job = input.job.as_ref().unwrap();
    for tg in &job.task_groups {
        let c = per.entry(tg.name.clone()).or_default();
        c.expect_count = tg.count as u64;
        c.max_canaries = tg.update.as_ref().map_or(0, |u| u.canary as u64);
    }
    for a in input.allocs.iter() {
        let c = per.entry(a.task_group.clone()).or_default();
        c.exist_total += 1;
        if !a.client_terminal_status() {
            c.exist_non_client_terminal += 1;
        }
        // Canaries of the current deployment (Nomad's generator marks none,
        // so its exist_canary is always 0; ours marks them).
        if a.is_canary()
            && input
                .deployment
                .as_ref()
                .is_some_and(|d| d.id == a.deployment_id)
        {
            c.exist_canary += 1;
        }
    }
    per
}

fn check(b: &Built) -> Result<(), TestCaseError> {
    let input = &b.input;
    let job = input.job.as_ref().unwrap();
    let per = collect_expected(input);
    let r = run(b);

    if job.stopped() && input.deployment.is_some() {
        prop_assert!(
            r.deployment.is_none(),
            "stopped job with a current deployment created one"
        );
    }
    if input.deployment_failed && input.deployment.is_some() {
        prop_assert!(
            r.deployment.is_none(),
            "failed deployments never create new deployments"
        );
    }
    if input.deployment.is_none() && b.deployment_old.is_none() && input.allocs.is_empty() {
        let total: u64 = job.task_groups.iter().map(|tg| tg.count as u64).sum();
        prop_assert!(
            r.place.len() as u64 <= total,
            "new job placed more than the total count"
        );
    }
    for (group, c) in &per {
        let du = r.desired_tg_updates.get(group).copied().unwrap_or_default();
        let ctx = format!("group {group}: {c:?} => {du:?}");
        if c.expect_count == 0 || job.stopped() {
            prop_assert_eq!(
                du.place,
                0,
                "no placements on stop or scale-to-zero: {}",
                ctx
            );
            prop_assert_eq!(
                du.canary,
                0,
                "no canaries on stop or scale-to-zero: {}",
                ctx
            );
            prop_assert_eq!(du.destructive_update, 0, "no destructive updates: {}", ctx);
            prop_assert_eq!(du.migrate, 0, "no migrations: {}", ctx);
            prop_assert_eq!(du.reschedule_later, 0, "no reschedule later: {}", ctx);
            prop_assert_eq!(du.preemptions, 0, "no preemptions: {}", ctx);
            continue;
        }
        prop_assert!(
            du.place <= c.expect_count,
            "placements exceed count: {}",
            ctx
        );
        prop_assert!(
            du.canary <= c.max_canaries,
            "canaries exceed expected: {}",
            ctx
        );
        // Nomad's generator marks no alloc as a canary, so there this is
        // `canary <= max_canaries`; ours does, and a stopped canary (lost,
        // migrating, failed deployment) may be replaced, so count only the
        // current deployment's canaries that stay (a successful deployment
        // stops being current, and its canaries stop being canaries) on
        // untainted nodes (a reconnecting or disconnecting canary is not
        // counted as one by Nomad either).
        let kept_canaries = input
            .allocs
            .iter()
            .filter(|a| a.task_group == *group && a.is_canary())
            .filter(|a| {
                input.deployment.as_ref().is_some_and(|d| {
                    d.id == a.deployment_id && d.status != DeploymentStatus::Successful
                })
            })
            .filter(|a| !a.terminal_status() && !r.stop.iter().any(|s| s.alloc.id == a.id))
            .filter(|a| {
                r.decisions
                    .iter(&input.allocs)
                    .any(|d| d.alloc_id() == a.id && d.set == AllocCategory::Untainted)
            })
            .count() as u64;
        prop_assert!(
            du.canary + kept_canaries <= c.max_canaries.max(kept_canaries),
            "canaries+existing canaries exceed expected ({} kept): {}",
            kept_canaries,
            ctx
        );
        prop_assert!(
            du.destructive_update <= c.expect_count,
            "destructive exceed count: {}",
            ctx
        );
        prop_assert!(
            du.canary + du.place + du.destructive_update <= c.expect_count + c.max_canaries,
            "place+canary+destructive exceed count+canaries: {}",
            ctx
        );
        prop_assert!(
            du.reconnect <= c.exist_non_client_terminal,
            "reconnects exceed live allocs: {}",
            ctx
        );
        prop_assert!(du.in_place_update <= c.exist_total, "{}", ctx);
        prop_assert!(du.destructive_update <= c.exist_total, "{}", ctx);
        prop_assert!(du.migrate <= c.exist_total, "{}", ctx);
        prop_assert!(
            du.ignore <= c.exist_total,
            "ignore exceeds existing allocs: {}",
            ctx
        );
        prop_assert!(
            du.migrate <= du.stop,
            "migrated allocs must be stopped: {}",
            ctx
        );
        prop_assert!(
            du.reschedule_later <= du.ignore + du.disconnect,
            "reschedule-later allocs are kept or disconnected: {}",
            ctx
        );
    }

    // Our own: deterministic, and one reason per distinct input alloc.
    let again = run(b);
    prop_assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap(),
        "two runs on the same input differ"
    );
    prop_assert_eq!(
        r.decisions.to_vec(&input.allocs),
        again.decisions.to_vec(&input.allocs),
        "two runs on the same input give different reasons"
    );
    let mut ids: Vec<&str> = input.allocs.iter().map(|a| a.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    let recorded: Vec<&str> = r
        .decisions
        .iter(&input.allocs)
        .map(|d| d.alloc)
        .map(|a| a.id.as_str())
        .collect();
    prop_assert_eq!(
        ids,
        recorded,
        "every input alloc has exactly one reason record"
    );
    for s in &r.stop {
        prop_assert!(
            input.allocs.iter().any(|a| a.id == s.alloc.id),
            "stop of an unknown alloc {}",
            s.alloc.id
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// `TestAllocReconciler_PropTest/batch_jobs`.
    #[test]
    fn batch_jobs(s in scenario(true)) {
        check(&build(&s))?;
    }

    /// `TestAllocReconciler_PropTest/service_jobs`.
    #[test]
    fn service_jobs(s in scenario(false)) {
        check(&build(&s))?;
    }
}
