//! Table tests of the alloc filters, ported from Nomad's
//! `scheduler/reconciler/filters_test.go`
//! (`TestAllocSet_classifyAllocs_ClassificationRules`,
//! `TestReconciler_filterServerTerminalAllocs`) and `allocs_test.go`
//! (`TestReconcile_shouldFilter`).

use nomad_playground::model::{
    AllocDeploymentStatus, AllocState, Allocation, ClientStatus, DesiredStatus, DesiredTransition,
    DisconnectStrategy, Duration, Job, JobType, Node, NodeStatus, RescheduleTracker, TaskGroup,
    TaskState, Time,
};
use nomad_playground::reconciler::alloc_set::AllocSet;
use nomad_playground::reconciler::filters::{
    EvalClock, FilterContext, classify_alloc, filter_server_terminal_allocs, should_filter,
};
use nomad_playground::reconciler::reasons::AllocCategory;
use nomad_playground::reconciler::rules::ReconcilerRules;
use std::collections::BTreeMap;
use std::rc::Rc;

fn now() -> Time {
    Time::parse_rfc3339("2026-01-01T12:00:00Z").unwrap()
}

fn job(lost_after: Duration, replace: bool, job_type: JobType) -> Rc<Job> {
    Rc::new(Job {
        id: "my-job".into(),
        job_type,
        task_groups: vec![TaskGroup {
            name: "web".into(),
            count: 10,
            disconnect: Some(DisconnectStrategy {
                lost_after,
                replace: Some(replace),
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    })
}

fn make_alloc(id: &str, node: &str, client: ClientStatus, desired: DesiredStatus) -> Allocation {
    Allocation {
        id: id.into(),
        name: "my-job.web[0]".into(),
        node_id: node.into(),
        job_id: "my-job".into(),
        task_group: "web".into(),
        job: Some(job(Duration::from_mins(5), true, JobType::Service)),
        client_status: client,
        desired_status: desired,
        ..Default::default()
    }
}

fn unknown_state() -> Vec<AllocState> {
    vec![AllocState {
        field: "ClientStatus".into(),
        value: "unknown".into(),
        time: now().sub_duration(Duration::from_secs(10)),
    }]
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
        ("ready".to_string(), node("ready", NodeStatus::Ready)),
        (
            "disconnected".to_string(),
            node("disconnected", NodeStatus::Disconnected),
        ),
        ("down".to_string(), node("down", NodeStatus::Down)),
        (
            "initializing".to_string(),
            node("initializing", NodeStatus::Initializing),
        ),
        ("gc".to_string(), None),
    ])
}

/// `TestAllocSet_classifyAllocs_ClassificationRules`.
#[test]
fn classification_rules() {
    use AllocCategory::*;
    use ClientStatus as C;
    use DesiredStatus as D;
    let with = |mut a: Allocation, f: &dyn Fn(&mut Allocation)| {
        f(&mut a);
        a
    };
    let cases: Vec<(&str, Allocation, AllocCategory)> = vec![
        (
            "failed reconnect run",
            with(make_alloc("c1", "ready", C::Failed, D::Run), &|a| {
                a.alloc_states = unknown_state()
            }),
            Reconnecting,
        ),
        (
            "terminal server status ignored",
            make_alloc("c2", "ready", C::Running, D::Stop),
            Ignore,
        ),
        (
            "terminal canary migrate",
            with(make_alloc("c3", "ready", C::Complete, D::Run), &|a| {
                a.deployment_status = Some(AllocDeploymentStatus {
                    canary: true,
                    ..Default::default()
                });
                a.desired_transition = DesiredTransition {
                    migrate: Some(true),
                    ..Default::default()
                };
            }),
            Migrate,
        ),
        (
            "terminal untainted",
            make_alloc("c4", "ready", C::Complete, D::Run),
            Untainted,
        ),
        (
            "expired alloc",
            with(make_alloc("c5", "ready", C::Unknown, D::Run), &|a| {
                a.job = Some(job(Duration::from_secs(1), true, JobType::Service));
                a.alloc_states = unknown_state();
            }),
            Expiring,
        ),
        (
            "failed reconnect stop ignored",
            with(make_alloc("c6", "ready", C::Failed, D::Stop), &|a| {
                a.alloc_states = unknown_state()
            }),
            Ignore,
        ),
        (
            "disconnected unknown becomes untainted",
            make_alloc("c7", "disconnected", C::Unknown, D::Run),
            Untainted,
        ),
        (
            "disconnected pending lost",
            make_alloc("c8", "disconnected", C::Pending, D::Run),
            Lost,
        ),
        (
            "disconnected zero timeout lost",
            with(make_alloc("c9", "disconnected", C::Running, D::Run), &|a| {
                a.job = None
            }),
            Lost,
        ),
        (
            "disconnected grace period",
            make_alloc("c10", "disconnected", C::Running, D::Run),
            Disconnecting,
        ),
        (
            "migrate flag",
            with(make_alloc("c11", "ready", C::Pending, D::Run), &|a| {
                a.desired_transition = DesiredTransition {
                    migrate: Some(true),
                    ..Default::default()
                };
            }),
            Migrate,
        ),
        (
            "untainted reconnecting via ready node",
            with(make_alloc("c12", "ready", C::Running, D::Run), &|a| {
                a.alloc_states = unknown_state()
            }),
            Reconnecting,
        ),
        (
            "untainted on non tainted node",
            make_alloc("c13", "missing", C::Running, D::Run),
            Untainted,
        ),
        (
            "gc node lost",
            make_alloc("c14", "gc", C::Running, D::Run),
            Lost,
        ),
        (
            "terminal node unknown no replace",
            with(make_alloc("c15", "down", C::Unknown, D::Run), &|a| {
                a.job = Some(job(Duration::from_mins(5), false, JobType::Service));
            }),
            Untainted,
        ),
        (
            "terminal node running no replace",
            with(make_alloc("c16", "down", C::Running, D::Run), &|a| {
                a.job = Some(job(Duration::from_mins(5), false, JobType::Service));
            }),
            Disconnecting,
        ),
        (
            "terminal node default lost",
            make_alloc("c17", "down", C::Pending, D::Run),
            Lost,
        ),
        (
            "other tainted node defaults to untainted",
            make_alloc("c18", "initializing", C::Pending, D::Run),
            Untainted,
        ),
    ];
    let tainted = nodes();
    let rules = ReconcilerRules::default();
    let cx = FilterContext {
        tainted_nodes: &tainted,
        clock: &EvalClock::new(now(), ""),
        rules: &rules,
    };
    for (name, alloc, want) in cases {
        let (got, rule) = classify_alloc(&alloc, &cx);
        assert_eq!(got, want, "{name} (rule {rule:?})");
    }
}

/// `TestReconciler_filterServerTerminalAllocs`.
#[test]
fn filter_server_terminal() {
    let make = |i: usize, desired: DesiredStatus, job_type: JobType| {
        Rc::new(Allocation {
            id: format!("a{i}"),
            job: Some(job(Duration::ZERO, true, job_type)),
            desired_status: desired,
            client_status: ClientStatus::Pending,
            ..Default::default()
        })
    };
    let base: AllocSet = (0..5)
        .map(|i| make(i, DesiredStatus::Run, JobType::Service))
        .collect();
    let (kept, _) = filter_server_terminal_allocs(&base);
    assert_eq!(kept, base, "none");
    for desired in [DesiredStatus::Stop, DesiredStatus::Evict] {
        let mut set = base.clone();
        set.insert(make(9, desired.clone(), JobType::Service));
        let (kept, dropped) = filter_server_terminal_allocs(&set);
        assert_eq!((kept.len(), dropped.len()), (5, 1), "with {desired}");
        let mut set = base.clone();
        set.insert(make(9, desired.clone(), JobType::Batch));
        let (kept, _) = filter_server_terminal_allocs(&set);
        assert_eq!(kept.len(), 6, "with {desired} batch");
    }
}

/// One row: description, batch, task failed, desired, client, tracker,
/// want untainted, want ignore.
type ShouldFilterCase = (
    &'static str,
    bool,
    bool,
    DesiredStatus,
    ClientStatus,
    Option<RescheduleTracker>,
    bool,
    bool,
);

/// `TestReconcile_shouldFilter`.
#[test]
fn should_filter_table() {
    use ClientStatus as C;
    use DesiredStatus as D;
    let failed_to_place = || {
        Some(RescheduleTracker {
            events: Some(vec![]),
            last_reschedule: "no placement".into(),
        })
    };
    let cases: Vec<ShouldFilterCase> = vec![
        (
            "batch running",
            true,
            false,
            D::Run,
            C::Running,
            None,
            true,
            false,
        ),
        (
            "batch stopped success",
            true,
            false,
            D::Stop,
            C::Running,
            None,
            true,
            false,
        ),
        (
            "batch stopped failed",
            true,
            true,
            D::Stop,
            C::Complete,
            None,
            false,
            true,
        ),
        (
            "batch evicted",
            true,
            false,
            D::Evict,
            C::Complete,
            None,
            false,
            true,
        ),
        (
            "batch failed",
            true,
            false,
            D::Run,
            C::Failed,
            None,
            false,
            false,
        ),
        (
            "batch lost",
            true,
            false,
            D::Stop,
            C::Lost,
            None,
            true,
            false,
        ),
        (
            "batch last reschedule failed",
            false,
            true,
            D::Stop,
            C::Failed,
            failed_to_place(),
            false,
            false,
        ),
        (
            "service running",
            false,
            false,
            D::Run,
            C::Running,
            None,
            false,
            false,
        ),
        (
            "service stopped",
            false,
            false,
            D::Stop,
            C::Complete,
            None,
            false,
            true,
        ),
        (
            "service evicted",
            false,
            false,
            D::Evict,
            C::Complete,
            None,
            false,
            true,
        ),
        (
            "service client complete",
            false,
            false,
            D::Run,
            C::Complete,
            None,
            false,
            true,
        ),
        (
            "service client reschedule failed",
            false,
            true,
            D::Stop,
            C::Failed,
            failed_to_place(),
            false,
            false,
        ),
    ];
    for (name, batch, failed, desired, client, rt, untainted, ignore) in cases {
        let alloc = Allocation {
            desired_status: desired,
            client_status: client,
            reschedule_tracker: rt,
            task_states: BTreeMap::from([(
                "task".to_string(),
                TaskState {
                    state: "dead".into(),
                    failed,
                    ..Default::default()
                },
            )])
            .into(),
            ..Default::default()
        };
        assert_eq!(should_filter(&alloc, batch), (untainted, ignore), "{name}");
    }
}

/// `TestAllocSet_filterByRescheduleable`.
#[test]
fn filter_by_rescheduleable_table() {
    use nomad_playground::model::{DelayFunction, RescheduleEvent, ReschedulePolicy};
    use nomad_playground::reconciler::filters::{
        EvalClock, RescheduleContext, filter_by_rescheduleable,
    };

    let make_job = |group: &str, policy: ReschedulePolicy, job_type: JobType| {
        Rc::new(Job {
            id: "my-job".into(),
            job_type,
            task_groups: vec![TaskGroup {
                name: group.into(),
                reschedule_policy: Some(policy),
                ..Default::default()
            }],
            ..Default::default()
        })
    };
    let no_reschedule = ReschedulePolicy {
        attempts: 0,
        unlimited: false,
        ..Default::default()
    };
    let reschedule = ReschedulePolicy {
        attempts: 2,
        interval: Duration::from_hours(1),
        delay: Duration::ZERO,
        delay_function: DelayFunction::Constant,
        max_delay: Duration(-1),
        unlimited: false,
    };
    let rt = RescheduleTracker {
        events: Some(vec![RescheduleEvent {
            reschedule_time: now().sub_duration(Duration::from_hours(24)),
            prev_alloc_id: "p".into(),
            prev_node_id: "pn".into(),
            delay: Duration::ZERO,
        }]),
        last_reschedule: String::new(),
    };
    let dead = |failed: bool, finished: Time| {
        BTreeMap::from([(
            "task".to_string(),
            TaskState {
                state: "dead".into(),
                failed,
                finished_at: finished,
                ..Default::default()
            },
        )])
    };

    // (name, batch, disconnecting, alloc (built for the job type), want untainted, want now)
    type Case = (
        &'static str,
        bool,
        bool,
        Box<dyn Fn(JobType) -> Allocation>,
        Vec<&'static str>,
        Vec<&'static str>,
    );
    let nr = no_reschedule.clone();
    let r1 = reschedule.clone();
    let rt1 = rt.clone();
    let base = move |id: &str, client: ClientStatus, job: Rc<Job>, group: &str| Allocation {
        id: id.into(),
        client_status: client,
        job: Some(job),
        task_group: group.into(),
        ..Default::default()
    };
    let cases: Vec<Case> = vec![
        (
            "batch disconnecting allocation no reschedule",
            true,
            true,
            {
                let nr = nr.clone();
                Box::new(move |t| {
                    base(
                        "untainted1",
                        ClientStatus::Running,
                        make_job("noRescheduleTG", nr.clone(), t),
                        "noRescheduleTG",
                    )
                })
            },
            vec!["untainted1"],
            vec![],
        ),
        (
            "batch ignore unknown disconnecting allocs",
            true,
            true,
            {
                let r = r1.clone();
                Box::new(move |t| {
                    base(
                        "disconnecting1",
                        ClientStatus::Unknown,
                        make_job("rescheduleTG", r.clone(), t),
                        "",
                    )
                })
            },
            vec![],
            vec![],
        ),
        (
            "batch disconnecting allocation reschedule",
            true,
            true,
            {
                let (r, rt) = (r1.clone(), rt1.clone());
                Box::new(move |t| Allocation {
                    reschedule_tracker: Some(rt.clone()),
                    ..base(
                        "rescheduleNow1",
                        ClientStatus::Running,
                        make_job("rescheduleTG", r.clone(), t),
                        "rescheduleTG",
                    )
                })
            },
            vec![],
            vec!["rescheduleNow1"],
        ),
        (
            "batch successfully complete should not reschedule",
            true,
            false,
            {
                let (r, rt) = (r1.clone(), rt1.clone());
                Box::new(move |t| Allocation {
                    reschedule_tracker: Some(rt.clone()),
                    task_states: dead(false, Time::ZERO).into(),
                    ..base(
                        "batchComplete1",
                        ClientStatus::Complete,
                        make_job("rescheduleTG", r.clone(), t),
                        "rescheduleTG",
                    )
                })
            },
            vec!["batchComplete1"],
            vec![],
        ),
        (
            "batch successfully complete with desired transition reschedule",
            true,
            false,
            {
                let r = r1.clone();
                Box::new(move |t| Allocation {
                    desired_transition: DesiredTransition {
                        reschedule: Some(true),
                        ..Default::default()
                    },
                    modify_time: Time::from_unix_nanos(1_767_268_800),
                    task_states: dead(false, now()).into(),
                    ..base(
                        "batchCompleteReschedule",
                        ClientStatus::Running,
                        make_job("rescheduleTG", r.clone(), t),
                        "rescheduleTG",
                    )
                })
            },
            vec![],
            vec!["batchCompleteReschedule"],
        ),
        (
            "service disconnecting allocation no reschedule",
            false,
            true,
            {
                let nr = nr.clone();
                Box::new(move |t| {
                    base(
                        "untainted1",
                        ClientStatus::Running,
                        make_job("noRescheduleTG", nr.clone(), t),
                        "noRescheduleTG",
                    )
                })
            },
            vec!["untainted1"],
            vec![],
        ),
        (
            "service disconnecting allocation reschedule",
            false,
            true,
            {
                let (r, rt) = (r1.clone(), rt1.clone());
                Box::new(move |t| Allocation {
                    reschedule_tracker: Some(rt.clone()),
                    ..base(
                        "rescheduleNow1",
                        ClientStatus::Running,
                        make_job("rescheduleTG", r.clone(), t),
                        "rescheduleTG",
                    )
                })
            },
            vec![],
            vec!["rescheduleNow1"],
        ),
        (
            "service ignore unknown disconnecting allocs",
            false,
            true,
            {
                let r = r1.clone();
                Box::new(move |t| {
                    base(
                        "disconnecting1",
                        ClientStatus::Unknown,
                        make_job("rescheduleTG", r.clone(), t),
                        "",
                    )
                })
            },
            vec![],
            vec![],
        ),
        (
            "service previously rescheduled alloc should not reschedule",
            false,
            false,
            {
                let r = r1.clone();
                Box::new(move |t| Allocation {
                    next_allocation: "next".into(),
                    ..base(
                        "failed1",
                        ClientStatus::Failed,
                        make_job("rescheduleTG", r.clone(), t),
                        "rescheduleTG",
                    )
                })
            },
            vec![],
            vec![],
        ),
        (
            "service complete should be ignored",
            false,
            false,
            {
                let r = r1.clone();
                Box::new(move |t| Allocation {
                    desired_status: DesiredStatus::Stop,
                    ..base(
                        "complete1",
                        ClientStatus::Complete,
                        make_job("rescheduleTG", r.clone(), t),
                        "rescheduleTG",
                    )
                })
            },
            vec![],
            vec![],
        ),
        (
            "service running allocation no reschedule",
            true,
            false,
            {
                let nr = nr.clone();
                Box::new(move |t| {
                    base(
                        "untainted1",
                        ClientStatus::Running,
                        make_job("noRescheduleTG", nr.clone(), t),
                        "noRescheduleTG",
                    )
                })
            },
            vec!["untainted1"],
            vec![],
        ),
    ];
    let rules = ReconcilerRules::default();
    for (name, batch, disconnecting, make, want_untainted, want_now) in cases {
        let job_type = if batch {
            JobType::Batch
        } else {
            JobType::Service
        };
        let set: AllocSet = std::iter::once(Rc::new(make(job_type))).collect();
        let cx = RescheduleContext {
            is_batch: batch,
            clock: &EvalClock::new(now(), "evailID"),
            deployment: None,
            rules: &rules,
        };
        let split = filter_by_rescheduleable(&set, disconnecting, &cx);
        assert_eq!(
            split
                .untainted
                .ids()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            want_untainted,
            "{name}: untainted"
        );
        assert_eq!(
            split.now.ids().map(String::as_str).collect::<Vec<_>>(),
            want_now,
            "{name}: now"
        );
        assert!(split.later.is_empty(), "{name}: later");
    }
}
