//! Jobs on the server: turning a scenario job spec into Nomad's `Job`
//! (with Nomad's defaults), registering new versions, reverting to an old
//! one (`Job.Revert`) and stopping jobs. Each registration (a revert is
//! one) creates a `job-register` eval, a stop a `job-deregister` eval
//! (Nomad's `nomad/job_endpoint.go`).

use super::{JobRecord, Server, ServerEffect};
use crate::model::{
    DelayFunction, DisconnectStrategy, Duration, EphemeralDisk, Job, JobType, ReconcileStrategy,
    ReschedulePolicy, Task, TaskGroup, UpdateStrategy,
};
use crate::scenario::format::{GroupSpec, JobSpec};
use crate::sim::queue::Tick;
use crate::sim::trace::TraceEvent;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Nomad's default reschedule policy for a job type.
pub fn default_reschedule(job_type: &JobType) -> Option<ReschedulePolicy> {
    match job_type {
        JobType::Service => Some(ReschedulePolicy {
            attempts: 0,
            interval: Duration::ZERO,
            delay: Duration::from_secs(30),
            delay_function: DelayFunction::Exponential,
            max_delay: Duration::from_hours(1),
            unlimited: true,
        }),
        JobType::Batch => Some(ReschedulePolicy {
            attempts: 1,
            interval: Duration::from_hours(24),
            delay: Duration::from_secs(5),
            delay_function: DelayFunction::Constant,
            max_delay: Duration::ZERO,
            unlimited: false,
        }),
        _ => None,
    }
}

/// The tasks of a group spec (one task named after the group by default).
pub fn group_tasks(group: &GroupSpec) -> Vec<crate::scenario::format::TaskSpec> {
    group.tasks.clone().unwrap_or_else(|| {
        vec![crate::scenario::format::TaskSpec {
            name: group.name.clone(),
            leader: None,
            config: None,
            kill_timeout: None,
        }]
    })
}

/// Builds Nomad's task group from a spec.
fn task_group(job_type: &JobType, group: &GroupSpec) -> TaskGroup {
    let reschedule = match &group.reschedule {
        None => default_reschedule(job_type),
        Some(spec) => {
            let default = default_reschedule(job_type).unwrap_or_default();
            Some(ReschedulePolicy {
                attempts: spec.attempts.unwrap_or(default.attempts),
                interval: spec.interval.map_or(default.interval, |d| d.nanos()),
                delay: spec.delay.map_or(default.delay, |d| d.nanos()),
                delay_function: spec
                    .delay_function
                    .as_deref()
                    .map_or(default.delay_function, DelayFunction::parse),
                max_delay: spec.max_delay.map_or(default.max_delay, |d| d.nanos()),
                unlimited: spec.unlimited.unwrap_or(default.unlimited),
            })
        }
    };
    let disconnect = group.disconnect.as_ref().map(|spec| DisconnectStrategy {
        lost_after: spec.lost_after.map_or(Duration::ZERO, |d| d.nanos()),
        // Nomad canonicalises `replace` to true when the block exists.
        replace: Some(spec.replace.unwrap_or(true)),
        reconcile: spec
            .reconcile
            .as_deref()
            .map_or(ReconcileStrategy::BestScore, ReconcileStrategy::parse),
        stop_on_client_after: spec.stop_on_client_after.map(|d| d.nanos()),
    });
    let update = group.update.as_ref().map(|spec| UpdateStrategy {
        stagger: Duration::from_secs(30),
        max_parallel: spec.max_parallel.unwrap_or(1),
        // `checks` runs as `task_states` on the client (no service checks).
        health_check: spec
            .health_check
            .as_deref()
            .unwrap_or("task_states")
            .to_string(),
        min_healthy_time: spec
            .min_healthy_time
            .map_or(Duration::from_secs(10), |d| d.nanos()),
        healthy_deadline: spec
            .healthy_deadline
            .map_or(Duration::from_mins(5), |d| d.nanos()),
        progress_deadline: spec
            .progress_deadline
            .map_or(Duration::from_mins(10), |d| d.nanos()),
        auto_revert: spec.auto_revert.unwrap_or(false),
        auto_promote: spec.auto_promote.unwrap_or(false),
        canary: spec.canary.unwrap_or(0),
    });
    TaskGroup {
        name: group.name.clone(),
        count: group.count.unwrap_or(1),
        update,
        reschedule_policy: reschedule,
        disconnect,
        max_client_disconnect: group.max_client_disconnect.map(|d| d.nanos()),
        stop_after_client_disconnect: group.stop_after_client_disconnect.map(|d| d.nanos()),
        prevent_reschedule_on_lost: group.prevent_reschedule_on_lost.unwrap_or(false),
        ephemeral_disk: group.ephemeral_disk.as_ref().map(|disk| EphemeralDisk {
            sticky: disk.sticky,
            migrate: disk.migrate,
            size_mb: disk.size_mb.unwrap_or(300),
        }),
        tasks: group_tasks(group)
            .iter()
            .map(|task| Task {
                name: task.name.clone(),
                leader: task.leader.unwrap_or(false),
                kill_timeout: task
                    .kill_timeout
                    .map_or(Duration::from_secs(5), |d| d.nanos()),
            })
            .collect(),
    }
}

/// Builds Nomad's job from a spec (indexes and version left at 0).
pub fn build_job(spec: &JobSpec) -> Job {
    let job_type = JobType::parse(spec.job_type.as_deref().unwrap_or("service"));
    Job {
        id: spec.id.clone(),
        name: spec.id.clone(),
        namespace: "default".to_string(),
        job_type: job_type.clone(),
        priority: spec.priority.unwrap_or(50),
        datacenters: spec
            .datacenters
            .clone()
            .unwrap_or_else(|| vec!["dc1".to_string()]),
        node_pool: spec
            .node_pool
            .clone()
            .unwrap_or_else(|| "default".to_string()),
        version: 0,
        stop: false,
        status: "pending".to_string(),
        create_index: 0,
        modify_index: 0,
        job_modify_index: 0,
        task_groups: spec
            .groups
            .iter()
            .map(|group| task_group(&job_type, group))
            .collect(),
    }
}

/// Whether two specs of a group differ in their tasks (a destructive update).
pub fn tasks_differ(old: &GroupSpec, new: &GroupSpec) -> bool {
    group_tasks(old) != group_tasks(new) || old.cpu != new.cpu || old.memory_mb != new.memory_mb
}

impl Server {
    /// Registers a job or a new version of it, and creates its eval.
    pub(super) fn register_job(&mut self, now: Tick, spec: JobSpec, out: &mut Vec<ServerEffect>) {
        self.register_version(now, spec, false, out);
    }

    /// `Job.Register` of `spec`, stopped or not: a new version unless the
    /// job is unchanged, then the `job-register` eval.
    fn register_version(
        &mut self,
        now: Tick,
        spec: JobSpec,
        stop: bool,
        out: &mut Vec<ServerEffect>,
    ) {
        let mut job = build_job(&spec);
        job.stop = stop;
        let index = self.bump_index();
        let detail;
        match self.state.jobs.get(&spec.id) {
            Some(existing) => {
                let old = &existing.job;
                let unchanged = old.stop == stop
                    && existing
                        .specs
                        .get(&old.version)
                        .is_some_and(|old_spec| **old_spec == spec);
                if unchanged {
                    out.push(ServerEffect::Trace(TraceEvent::Job {
                        job: spec.id.as_str().into(),
                        version: old.version,
                        detail: "registered unchanged".into(),
                    }));
                    let job = (**old).clone();
                    self.create_eval(now, &job, "job-register", "", None, "", out);
                    return;
                }
                job.version = old.version + 1;
                job.create_index = old.create_index;
                detail = format!("updated to version {}", job.version);
            }
            None => {
                job.create_index = index;
                detail = "registered".to_string();
            }
        }
        job.modify_index = index;
        job.job_modify_index = index;
        job.status = if stop { "dead" } else { "running" }.to_string();
        let version = job.version;
        let job = Rc::new(job);
        let record = self
            .state
            .jobs
            .entry(spec.id.clone())
            .or_insert_with(|| JobRecord {
                job: Rc::clone(&job),
                specs: BTreeMap::new(),
                stopped_versions: BTreeSet::new(),
            });
        record.job = Rc::clone(&job);
        record.specs.insert(version, Rc::new(spec.clone()));
        if stop {
            record.stopped_versions.insert(version);
        }
        out.push(ServerEffect::Trace(TraceEvent::Job {
            job: spec.id.as_str().into(),
            version,
            detail: if stop {
                format!("{detail}, stopped")
            } else {
                detail
            }
            .into(),
        }));
        self.create_eval(now, &job, "job-register", "", None, "", out);
    }

    /// The operator's `Job.Revert`: checked as Nomad's endpoint checks it,
    /// then the spec of `version` goes through `Job.Register` (a new
    /// version, not stable, and a `job-register` eval). A refused call
    /// changes nothing and is traced with Nomad's error text.
    pub(super) fn revert_job_call(
        &mut self,
        now: Tick,
        job_id: &str,
        version: u64,
        enforce_prior_version: Option<u64>,
        out: &mut Vec<ServerEffect>,
    ) {
        let checked = match self.state.jobs.get(job_id) {
            None => Err(format!("job {job_id:?} not found")),
            Some(record) if record.job.version == version => {
                Err("can't revert to current version".to_string())
            }
            Some(record) => match record.specs.get(&version) {
                None => Err(format!(
                    "job {job_id:?} in namespace {:?} at version {version} not found",
                    record.job.namespace
                )),
                Some(_) if enforce_prior_version.is_some_and(|v| v != record.job.version) => {
                    Err(format!(
                        "Current job has version {}; enforcing version {}",
                        record.job.version,
                        enforce_prior_version.unwrap_or_default()
                    ))
                }
                Some(spec) => Ok((
                    JobSpec::clone(spec),
                    record.stopped_versions.contains(&version),
                )),
            },
        };
        let (accepted, detail) = match &checked {
            Ok(_) => (
                true,
                format!("reverting {job_id} to the spec of version {version}"),
            ),
            Err(refusal) => (false, refusal.clone()),
        };
        out.push(ServerEffect::Trace(TraceEvent::Operator {
            rpc: "Job.Revert".into(),
            accepted,
            detail: detail.into(),
        }));
        // A stopped version is registered stopped, as Nomad copies `Stop`
        // with the rest of the job.
        if let Ok((spec, stop)) = checked {
            self.register_version(now, spec, stop, out);
        }
    }

    /// Stops a job and creates its deregister eval. Like Nomad's
    /// deregister (without purge), it writes a stopped copy of the job as a
    /// new version, so that `Job.Revert` can start it again.
    pub(super) fn stop_job(&mut self, now: Tick, job_id: &str, out: &mut Vec<ServerEffect>) {
        let index = self.bump_index();
        let Some(record) = self.state.jobs.get_mut(job_id) else {
            return;
        };
        let mut job = (*record.job).clone();
        job.stop = true;
        job.version += 1;
        job.modify_index = index;
        job.job_modify_index = index;
        job.status = "dead".to_string();
        let job = Rc::new(job);
        if let Some(spec) = record.spec(record.job.version).cloned() {
            record.specs.insert(job.version, spec);
        }
        record.stopped_versions.insert(job.version);
        record.job = Rc::clone(&job);
        out.push(ServerEffect::Trace(TraceEvent::Job {
            job: job_id.into(),
            version: job.version,
            detail: "stopped".into(),
        }));
        self.create_eval(now, &job, "job-deregister", "", None, "", out);
    }
}
