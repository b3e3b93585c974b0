//! The deployment paused / failed state the cluster reconciler computes
//! from the current deployment. The first six rows port Nomad's
//! `TestReconciler_ComputeDeploymentPaused`
//! (`scheduler/reconciler/reconcile_cluster_test.go`); the rows after them
//! cover the other deployment statuses.
//!
//! Our job model has no `Multiregion`, `Periodic` or `ParameterizedJob`
//! block: in the Go test they only decide whether the job-register RPC made
//! an initializing deployment (a multiregion job that uses deployments,
//! i.e. a service job), so a row here states that directly as the
//! deployment passed in.

use nomad_playground::model::{
    Deployment, DeploymentStatus, Job, JobType, TaskGroup, Time, UpdateStrategy,
};
use nomad_playground::reconciler::cluster::{
    ClusterInput, ReconcileOptions, UpdateType, reconcile,
};

struct Case {
    name: &'static str,
    job_type: JobType,
    /// The status of the deployment the register RPC made, if it made one.
    deployment: Option<DeploymentStatus>,
    paused: bool,
    failed: bool,
}

fn job(job_type: JobType) -> Job {
    let service = job_type == JobType::Service;
    Job {
        id: "example".into(),
        name: "example".into(),
        job_type,
        version: 1,
        create_index: 100,
        job_modify_index: 100,
        task_groups: vec![TaskGroup {
            name: "web".into(),
            count: 10,
            update: service.then(|| UpdateStrategy {
                max_parallel: 1,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn run(case: &Case) -> nomad_playground::reconciler::cluster::ReconcileResult {
    let job = job(case.job_type.clone());
    let deployment = case.deployment.clone().map(|status| Deployment {
        id: "d1".into(),
        job_id: job.id.clone(),
        job_version: job.version,
        job_create_index: job.create_index,
        job_modify_index: job.modify_index,
        job_spec_modify_index: job.job_modify_index,
        is_multiregion: true,
        status,
        ..Default::default()
    });
    let now = Time::parse_rfc3339("2026-01-01T00:00:00Z").expect("time");
    let mut input = ClusterInput::new(Some(job), now);
    // As in the Go test: `JobIsBatch` is false for every row.
    input.job_is_batch = false;
    input.deployment = deployment;
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("id-{n}")
    };
    reconcile(
        &input,
        &ReconcileOptions::default(),
        &|_, _, _| UpdateType::Ignore,
        &mut ids,
    )
}

#[test]
fn compute_deployment_paused() {
    use DeploymentStatus as S;
    let cases = [
        Case {
            name: "single region service is not paused",
            job_type: JobType::Service,
            deployment: None,
            paused: false,
            failed: false,
        },
        Case {
            name: "multiregion service is paused",
            job_type: JobType::Service,
            deployment: Some(S::Initializing),
            paused: true,
            failed: false,
        },
        Case {
            name: "single region batch job is not paused",
            job_type: JobType::Batch,
            deployment: None,
            paused: false,
            failed: false,
        },
        Case {
            // The Go row is named multiregion but sets isMultiregion false.
            name: "multiregion batch job is not paused",
            job_type: JobType::Batch,
            deployment: None,
            paused: false,
            failed: false,
        },
        Case {
            // Batch jobs do not use deployments: no deployment is made.
            name: "multiregion parameterized batch is not paused",
            job_type: JobType::Batch,
            deployment: None,
            paused: false,
            failed: false,
        },
        Case {
            name: "multiregion periodic batch is not paused",
            job_type: JobType::Batch,
            deployment: None,
            paused: false,
            failed: false,
        },
        // Not in the Go test: the other statuses.
        Case {
            name: "pending deployment is paused",
            job_type: JobType::Service,
            deployment: Some(S::Pending),
            paused: true,
            failed: false,
        },
        Case {
            name: "paused deployment is paused",
            job_type: JobType::Service,
            deployment: Some(S::Paused),
            paused: true,
            failed: false,
        },
        Case {
            name: "running deployment is neither",
            job_type: JobType::Service,
            deployment: Some(S::Running),
            paused: false,
            failed: false,
        },
        Case {
            name: "failed deployment is failed",
            job_type: JobType::Service,
            deployment: Some(S::Failed),
            paused: false,
            failed: true,
        },
    ];
    for case in &cases {
        let r = run(case);
        assert_eq!(r.deployment_paused, case.paused, "{}: paused", case.name);
        assert_eq!(r.deployment_failed, case.failed, "{}: failed", case.name);
        // A paused or failed deployment holds every placement back.
        let expected_place = if case.paused || case.failed { 0 } else { 10 };
        assert_eq!(r.place.len(), expected_place, "{}: placements", case.name);
    }
}
