//! The deployment watcher on the leader, and the state-store writes that
//! keep a deployment's counters in step with its allocs.
//!
//! Follows Nomad's `nomad/deploymentwatcher/deployments_watcher.go` and
//! `deployment_watcher.go` (`handleAllocUpdate`, `shouldFail`,
//! `shouldFailEarly`, `getDeploymentProgressCutoff`, `doneGroups`,
//! `latestStableJob`, `createBatchedUpdate`, `autoPromoteDeployment`), and
//! `nomad/state/state_store.go` (`updateDeploymentWithAlloc`,
//! `updateDeploymentStatusImpl`, `UpdateDeploymentPromotion`,
//! `updateJobStabilityImpl`).
//!
//! Nomad runs one goroutine per active deployment, woken by blocking
//! queries. Here the watcher is a set of functions the server calls after
//! each write that touches a deployment (a plan, a client's alloc update),
//! plus one timer per deployment ([`ServerEffect::DeploymentTimer`]) for
//! the batched eval (`perJobEvalBatchPeriod`, 1 s) and the progress
//! deadline. Everything runs on the logical clock, so it is deterministic.
//! The operator's calls (promote, pause, resume, fail, set alloc health)
//! are in [`operator`].

pub mod operator;

use super::{JobRecord, Server, ServerEffect, tick_time, time_tick};
use crate::model::{
    Allocation, Deployment, DeploymentStatus, DesiredTransition, EvalStatus, Job, Time,
    deployment::description,
};
use crate::sim::queue::Tick;
use crate::sim::trace::{TraceEvent, short};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// `perJobEvalBatchPeriod`: how long the watcher batches before it
/// creates its eval.
pub const EVAL_BATCH_PERIOD: Tick = 1_000;

/// The eval trigger of the watcher's evals (`EvalTriggerDeploymentWatcher`).
pub const TRIGGER_DEPLOYMENT_WATCHER: &str = "deployment-watcher";

/// Status descriptions the watcher writes (Nomad's
/// `DeploymentStatusDescription*`).
pub mod watcher_description {
    /// Failed on unhealthy allocs.
    pub const FAILED_ALLOCATIONS: &str = "Failed due to unhealthy allocations";
    /// Failed on the progress deadline.
    pub const PROGRESS_DEADLINE: &str = "Failed due to progress deadline";

    /// `DeploymentStatusDescriptionRollback`.
    pub fn rollback(base: &str, version: u64) -> String {
        format!("{base} - rolling back to job version {version}")
    }
    /// `DeploymentStatusDescriptionRollbackNoop`.
    pub fn rollback_noop(base: &str, version: u64) -> String {
        format!(
            "{base} - not rolling back to stable job version {version} as current job has same specification"
        )
    }
    /// `DeploymentStatusDescriptionNoRollbackTarget`.
    pub fn no_rollback_target(base: &str) -> String {
        format!("{base} - no stable job version to auto revert to")
    }
}

/// The watcher's own state (what Nomad keeps in its goroutines).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatcherState {
    /// Per deployment: when its outstanding batched eval is due.
    pub batches: BTreeMap<String, Tick>,
    /// Per deployment: unhealthy allocs the batch allows to be replaced.
    pub allow_replacements: BTreeMap<String, BTreeSet<String>>,
    /// Per deployment: the armed progress deadline.
    pub deadlines: BTreeMap<String, Tick>,
    /// Deployments whose progress deadline has fired once (`deadlineHit`).
    pub deadline_hit: BTreeSet<String>,
    /// Job versions marked stable (`Job.Stable`), per job.
    pub stable: BTreeMap<String, BTreeSet<u64>>,
}

/// What `handleAllocUpdate` decided.
#[derive(Debug, Default)]
struct AllocUpdateResult {
    create_eval: bool,
    fail_deployment: bool,
    rollback: bool,
    allow_replacements: Vec<String>,
}

impl Server {
    /// `updateDeploymentWithAlloc`: counts a placement or a health change
    /// of `alloc` (about to be written over `existing`) in its deployment.
    /// Returns the deployment it changed.
    pub fn update_deployment_with_alloc(
        &mut self,
        index: u64,
        alloc: &mut Allocation,
        existing: Option<&Allocation>,
    ) -> Option<String> {
        if alloc.deployment_id.is_empty() {
            return None;
        }
        let deployment = self.state.deployments.get(&alloc.deployment_id)?;
        if !deployment.task_groups.contains_key(&alloc.task_group) {
            return None;
        }
        let existing_health =
            existing.and_then(|e| e.deployment_status.as_ref().and_then(|d| d.healthy));
        let alloc_health = alloc.deployment_status.as_ref().and_then(|d| d.healthy);
        let (mut placed, mut healthy, mut unhealthy) = (0_i64, 0_i64, 0_i64);
        match (existing, existing_health, alloc_health) {
            (None, _, _) => placed = 1,
            (Some(e), _, _) if e.deployment_id != alloc.deployment_id => placed = 1,
            (Some(_), None, Some(true)) => healthy = 1,
            (Some(_), None, Some(false)) => unhealthy = 1,
            (Some(_), Some(true), Some(false)) => {
                healthy = -1;
                unhealthy = 1;
            }
            _ => {}
        }
        if placed == 0 && healthy == 0 && unhealthy == 0 {
            return None;
        }
        if healthy + unhealthy != 0
            && let Some(status) = alloc.deployment_status.as_mut()
        {
            status.modify_index = index;
        }
        let deployment = self.state.deployments.get_mut(&alloc.deployment_id)?;
        deployment.modify_index = index;
        deployment.modify_time = alloc.modify_time;
        let state = deployment.task_groups.get_mut(&alloc.task_group)?;
        state.placed_allocs = add_signed(state.placed_allocs, placed);
        state.healthy_allocs = add_signed(state.healthy_allocs, healthy);
        state.unhealthy_allocs = add_signed(state.unhealthy_allocs, unhealthy);
        if alloc.is_canary() && !state.placed_canaries.contains(&alloc.id) {
            state.placed_canaries.push(alloc.id.clone());
        }
        let deadline = state.progress_deadline;
        if !deadline.is_zero() {
            if placed != 0 && state.require_progress_by.is_zero() {
                // From the modify time: an in-place update may move an
                // existing alloc into the deployment.
                state.require_progress_by = alloc.modify_time.add(deadline);
            } else if healthy != 0
                && let Some(status) = &alloc.deployment_status
            {
                let by = status.timestamp.add(deadline);
                if by.after(state.require_progress_by) {
                    state.require_progress_by = by;
                }
            }
        }
        Some(alloc.deployment_id.clone())
    }

    /// The deployment part of `nestedUpdateAllocFromClient`: a client may
    /// set only its alloc's health and its timestamp, taken when new; then
    /// the deployment counts it. Returns the deployment it changed.
    pub fn take_client_health(
        &mut self,
        index: u64,
        updated: &mut Allocation,
        stored: &Allocation,
        update: &super::rpc::AllocUpdate,
    ) -> Option<String> {
        let reported = update.deployment_status.as_ref()?;
        let healthy = reported.healthy?;
        match updated.deployment_status.as_mut() {
            Some(status) => {
                if status.healthy != Some(healthy) {
                    status.healthy = Some(healthy);
                    status.timestamp = reported.timestamp;
                    status.modify_index = index;
                }
            }
            None => {
                let mut status = reported.clone();
                status.modify_index = index;
                updated.deployment_status = Some(status);
            }
        }
        self.update_deployment_with_alloc(index, updated, Some(stored))
    }

    /// What the state store does after a deployment status write: a
    /// successful deployment makes its job version stable. Traces the change.
    pub fn deployment_status_written(&mut self, id: &str, out: &mut Vec<ServerEffect>) {
        let Some(deployment) = self.state.deployments.get(id) else {
            return;
        };
        out.push(ServerEffect::Trace(TraceEvent::Job {
            job: deployment.job_id.as_str().into(),
            version: deployment.job_version,
            detail: format!(
                "deployment {} {}: {}",
                short(id),
                deployment.status,
                deployment.status_description
            )
            .into(),
        }));
        if deployment.status == DeploymentStatus::Successful {
            let (job, version) = (deployment.job_id.clone(), deployment.job_version);
            self.state
                .deployment_watch
                .stable
                .entry(job.clone())
                .or_default()
                .insert(version);
            out.push(ServerEffect::Trace(TraceEvent::Job {
                job: job.into(),
                version,
                detail: format!("version {version} marked stable").into(),
            }));
        }
    }

    /// Whether a job version is stable.
    pub fn job_version_stable(&self, job: &str, version: u64) -> bool {
        self.state
            .deployment_watch
            .stable
            .get(job)
            .is_some_and(|versions| versions.contains(&version))
    }

    /// The allocs of a deployment, by ID (`AllocsByDeployment`).
    fn deployment_allocs(&self, deployment: &Deployment) -> Vec<Rc<Allocation>> {
        self.job_allocs(&deployment.job_id)
            .into_iter()
            .filter(|alloc| alloc.deployment_id == deployment.id)
            .collect()
    }

    /// The watchers of these deployments see the state after a write:
    /// `handleAllocUpdate` (fail, allow replacements, create an eval),
    /// auto-promotion, and the progress deadline timer.
    pub fn watch_deployments(
        &mut self,
        now: Tick,
        ids: &BTreeSet<String>,
        out: &mut Vec<ServerEffect>,
    ) {
        for id in ids {
            self.watch_deployment(now, id, out);
        }
    }

    fn watch_deployment(&mut self, now: Tick, id: &str, out: &mut Vec<ServerEffect>) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        if !deployment.active() {
            self.stop_watch(id);
            return;
        }
        let result = self.handle_alloc_update(now, &deployment);
        if result.fail_deployment {
            self.fail_deployment(now, id, result.rollback, out);
            return;
        }
        self.auto_promote(now, id, out);
        if result.create_eval || !result.allow_replacements.is_empty() {
            self.create_batched_update(now, id, result.allow_replacements, out);
        }
        self.arm_progress_deadline(id, out);
    }

    /// Forgets a deployment that is no longer active (its goroutine ends).
    fn stop_watch(&mut self, id: &str) {
        let watch = &mut self.state.deployment_watch;
        watch.batches.remove(id);
        watch.allow_replacements.remove(id);
        watch.deadlines.remove(id);
    }

    /// `jobEvalStatus`: the newest index a scheduler has seen for the job.
    /// A processed eval saw the state up to its processing (its modify
    /// index stands in for `SnapshotIndex`), a pending one will see it all.
    fn latest_eval_index(&self, job: &str) -> u64 {
        let mut latest = 0;
        for id in &self.state.eval_order {
            let Some(record) = self.state.evals.get(id) else {
                continue;
            };
            if record.eval.job_id != job || record.eval.status == EvalStatus::Canceled {
                continue;
            }
            let index = if record.outcome.is_some() {
                record.eval.modify_index
            } else {
                record.eval.create_index
            };
            latest = latest.max(index);
        }
        latest
    }

    /// `handleAllocUpdate`.
    fn handle_alloc_update(&self, now: Tick, deployment: &Deployment) -> AllocUpdateResult {
        let mut result = AllocUpdateResult::default();
        let latest_eval = self.latest_eval_index(&deployment.job_id);
        let job = self
            .state
            .jobs
            .get(&deployment.job_id)
            .map(|r| Rc::clone(&r.job));
        for alloc in self.deployment_allocs(deployment) {
            let Some(state) = deployment.task_groups.get(&alloc.task_group) else {
                continue;
            };
            let fail = self.should_fail_early(now, deployment, job.as_deref(), &alloc);
            if alloc.is_unhealthy()
                && !fail
                && deployment.active()
                && !alloc.desired_transition.should_reschedule()
            {
                result.allow_replacements.push(alloc.id.clone());
                continue;
            }
            if alloc.is_healthy()
                && alloc
                    .deployment_status
                    .as_ref()
                    .is_some_and(|d| d.modify_index > latest_eval)
            {
                result.create_eval = true;
            }
            if fail {
                result.rollback |= state.auto_revert;
                result.fail_deployment = true;
            }
            if result.create_eval && result.fail_deployment && result.rollback {
                break;
            }
        }
        result
    }

    /// `shouldFailEarly`: an unhealthy alloc fails the deployment at once
    /// without a progress deadline, or when it may not be rescheduled.
    fn should_fail_early(
        &self,
        now: Tick,
        deployment: &Deployment,
        job: Option<&Job>,
        alloc: &Allocation,
    ) -> bool {
        if !alloc.is_unhealthy() {
            return false;
        }
        let Some(state) = deployment.task_groups.get(&alloc.task_group) else {
            return false;
        };
        if state.progress_deadline.is_zero() {
            return true;
        }
        if deployment.active() {
            let policy = job
                .and_then(|job| job.lookup_task_group(&alloc.task_group))
                .and_then(|tg| tg.reschedule_policy.as_ref());
            let eligible = crate::model::alloc_logic::reschedule_eligible(
                alloc.reschedule_tracker.as_ref(),
                policy,
                tick_time(now),
            );
            if !eligible {
                return true;
            }
        }
        false
    }

    /// `doneGroups`: groups with enough healthy live allocs (and promoted,
    /// if they have canaries).
    fn done_groups(&self, deployment: &Deployment) -> BTreeMap<String, bool> {
        let mut healthy: BTreeMap<&str, u32> = BTreeMap::new();
        let allocs = self.deployment_allocs(deployment);
        for alloc in &allocs {
            if alloc.terminal_status() || !alloc.is_healthy() {
                continue;
            }
            *healthy.entry(alloc.task_group.as_str()).or_default() += 1;
        }
        crate::cold_sort::map_from(deployment.task_groups.iter().map(|(name, state)| {
            let done = if state.desired_canaries != 0 && !state.promoted {
                false
            } else {
                healthy.get(name.as_str()).copied().unwrap_or(0) >= state.desired_total
            };
            (name.clone(), done)
        }))
    }

    /// `getDeploymentProgressCutoff`: the earliest `RequireProgressBy` of
    /// the groups not done yet (zero: none).
    fn progress_cutoff(&self, deployment: &Deployment) -> Time {
        let done = self.done_groups(deployment);
        let mut next = Time::ZERO;
        for (name, state) in &deployment.task_groups {
            if done.get(name).copied().unwrap_or(false) || state.require_progress_by.is_zero() {
                continue;
            }
            if next.is_zero() || state.require_progress_by.before(next) {
                next = state.require_progress_by;
            }
        }
        next
    }

    /// Re-arms the progress deadline timer when the cutoff moved.
    fn arm_progress_deadline(&mut self, id: &str, out: &mut Vec<ServerEffect>) {
        let Some(deployment) = self.state.deployments.get(id) else {
            return;
        };
        let cutoff = self.progress_cutoff(deployment);
        if cutoff.is_zero() {
            // Nothing to track yet, or every group is done: the timer stops.
            self.state.deployment_watch.deadlines.remove(id);
            return;
        }
        let at = time_tick(cutoff);
        if self.state.deployment_watch.deadlines.get(id) == Some(&at) {
            return;
        }
        self.state
            .deployment_watch
            .deadlines
            .insert(id.to_string(), at);
        out.push(ServerEffect::DeploymentTimer {
            deployment: id.to_string(),
            at,
        });
    }

    /// A deployment timer fired: the batched eval is due, or the progress
    /// deadline passed.
    pub fn deployment_timer(&mut self, now: Tick, id: &str, out: &mut Vec<ServerEffect>) {
        let active = self.state.deployments.get(id).is_some_and(|d| d.active());
        if !active {
            self.stop_watch(id);
            return;
        }
        if self
            .state
            .deployment_watch
            .batches
            .get(id)
            .is_some_and(|due| *due <= now)
        {
            self.state.deployment_watch.batches.remove(id);
            self.flush_batched_update(now, id, out);
        }
        if self
            .state
            .deployment_watch
            .deadlines
            .get(id)
            .is_some_and(|at| *at <= now)
        {
            self.state.deployment_watch.deadlines.remove(id);
            self.progress_deadline_hit(now, id, out);
        }
    }

    /// The deadline timer fired: `shouldFail`, then fail (and maybe roll
    /// back) unless every group made it or (since 2.0.0) the deployment is
    /// paused.
    fn progress_deadline_hit(&mut self, now: Tick, id: &str, out: &mut Vec<ServerEffect>) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        self.state
            .deployment_watch
            .deadline_hit
            .insert(id.to_string());
        // Since #27804 (2.0.0) a paused deployment does not fail here.
        if deployment.status == DeploymentStatus::Paused && self.rules.pause_resets_progress {
            return;
        }
        let job = self
            .state
            .jobs
            .get(&deployment.job_id)
            .map(|r| Rc::clone(&r.job));
        let mut fail = false;
        let mut rollback = false;
        for (group, state) in &deployment.task_groups {
            let made_it = if state.desired_canaries > 0 && !state.promoted {
                state.healthy_allocs >= state.desired_canaries
            } else {
                state.healthy_allocs >= state.desired_total
            };
            if made_it {
                continue;
            }
            fail = true;
            let auto_revert = job
                .as_ref()
                .and_then(|job| job.lookup_task_group(group))
                .and_then(|tg| tg.update.as_ref())
                .is_some_and(|update| update.auto_revert);
            if auto_revert {
                rollback = true;
                break;
            }
        }
        if fail {
            self.fail_deployment(now, id, rollback, out);
        }
    }

    /// Marks a deployment failed, rolls the job back to its latest stable
    /// version if asked, and creates the watcher's eval
    /// (`upsertDeploymentStatusUpdate` with an eval and a job).
    fn fail_deployment(
        &mut self,
        now: Tick,
        id: &str,
        rollback: bool,
        out: &mut Vec<ServerEffect>,
    ) {
        let base = if self.state.deployment_watch.deadline_hit.contains(id) {
            watcher_description::PROGRESS_DEADLINE
        } else {
            watcher_description::FAILED_ALLOCATIONS
        };
        self.fail_deployment_as(now, id, base, rollback, true, out);
    }

    /// Marks a deployment failed with the description `base` (extended as
    /// the rollback decides; `say_no_target`: say so when there is no
    /// stable version), rolls back if asked, and creates the watcher's eval.
    pub(super) fn fail_deployment_as(
        &mut self,
        now: Tick,
        id: &str,
        base: &str,
        rollback: bool,
        say_no_target: bool,
        out: &mut Vec<ServerEffect>,
    ) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        let mut desc = base.to_string();
        let mut revert_to = None;
        if rollback {
            match self.latest_stable_version(&deployment.job_id) {
                Some(version) => {
                    if self.spec_changed(&deployment.job_id, version) {
                        desc = watcher_description::rollback(&desc, version);
                        revert_to = Some(version);
                    } else {
                        desc = watcher_description::rollback_noop(&desc, version);
                    }
                }
                None if say_no_target => desc = watcher_description::no_rollback_target(&desc),
                None => {}
            }
        }
        let index = self.bump_index();
        if let Some(stored) = self.state.deployments.get_mut(id) {
            stored.status = DeploymentStatus::Failed;
            stored.status_description = desc;
            stored.modify_index = index;
            stored.modify_time = tick_time(now);
        }
        self.deployment_status_written(id, out);
        self.stop_watch(id);
        if let Some(version) = revert_to {
            self.revert_job(now, &deployment.job_id, version, out);
        }
        self.watcher_eval(now, &deployment, out);
    }

    /// `latestStableJob`: the newest stable version of the job.
    fn latest_stable_version(&self, job: &str) -> Option<u64> {
        self.state
            .deployment_watch
            .stable
            .get(job)
            .and_then(|versions| versions.iter().next_back().copied())
    }

    /// `Job.SpecChanged` between the current job and `version`.
    fn spec_changed(&self, job: &str, version: u64) -> bool {
        let Some(record) = self.state.jobs.get(job) else {
            return false;
        };
        let current = record.specs.get(&record.job.version);
        let stable = record.specs.get(&version);
        match (current, stable) {
            (Some(current), Some(stable)) => current != stable,
            _ => false,
        }
    }

    /// Registers the spec of `version` as the job's next version, stable
    /// like the version it copies (the watcher's rollback; no eval of its
    /// own: the watcher's eval follows).
    fn revert_job(&mut self, _now: Tick, job_id: &str, version: u64, out: &mut Vec<ServerEffect>) {
        let Some(record) = self.state.jobs.get(job_id) else {
            return;
        };
        let Some(spec) = record.specs.get(&version).cloned() else {
            return;
        };
        let old = Rc::clone(&record.job);
        let index = self.bump_index();
        let mut job = super::jobs::build_job(&spec);
        job.version = old.version + 1;
        job.create_index = old.create_index;
        job.modify_index = index;
        job.job_modify_index = index;
        job.status = "running".to_string();
        let new_version = job.version;
        let job = Rc::new(job);
        let record: &mut JobRecord = match self.state.jobs.get_mut(job_id) {
            Some(record) => record,
            None => return,
        };
        record.job = Rc::clone(&job);
        record.specs.insert(new_version, spec);
        // The watcher upserts a copy of the stable job, `Stable` flag and all
        // (unlike `Job.Revert`, which clears it).
        self.state
            .deployment_watch
            .stable
            .entry(job_id.to_string())
            .or_default()
            .insert(new_version);
        out.push(ServerEffect::Trace(TraceEvent::Job {
            job: job_id.into(),
            version: new_version,
            detail: format!("reverted to the spec of stable version {version}").into(),
        }));
    }

    /// `getEval`: the watcher's eval for the job, with the deployment's ID.
    fn watcher_eval(&mut self, now: Tick, deployment: &Deployment, out: &mut Vec<ServerEffect>) {
        let Some(job) = self
            .state
            .jobs
            .get(&deployment.job_id)
            .map(|r| Rc::clone(&r.job))
        else {
            return;
        };
        let mut eval = self.pending_eval(now, &job, TRIGGER_DEPLOYMENT_WATCHER);
        // The watcher's evals run at the priority the deployment was created
        // with when it carries one.
        if deployment.eval_priority != 0 {
            eval.priority = deployment.eval_priority;
        }
        eval.deployment_id = deployment.id.clone();
        self.insert_eval(now, eval, None, out);
    }

    /// `createBatchedUpdate`: remembers the allocs to allow replacing and
    /// starts a batch unless one is outstanding.
    fn create_batched_update(
        &mut self,
        now: Tick,
        id: &str,
        allow_replacements: Vec<String>,
        out: &mut Vec<ServerEffect>,
    ) {
        let watch = &mut self.state.deployment_watch;
        if !allow_replacements.is_empty() {
            watch
                .allow_replacements
                .entry(id.to_string())
                .or_default()
                .extend(allow_replacements);
        }
        if watch.batches.contains_key(id) {
            return;
        }
        let at = now + EVAL_BATCH_PERIOD;
        watch.batches.insert(id.to_string(), at);
        out.push(ServerEffect::DeploymentTimer {
            deployment: id.to_string(),
            at,
        });
    }

    /// The batch period ended: mark the allowed replacements for
    /// rescheduling and create the eval (`createUpdate`).
    fn flush_batched_update(&mut self, now: Tick, id: &str, out: &mut Vec<ServerEffect>) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        let replacements = self
            .state
            .deployment_watch
            .allow_replacements
            .remove(id)
            .unwrap_or_default();
        if !replacements.is_empty() {
            let index = self.bump_index();
            for alloc_id in replacements {
                let Some(alloc) = self.state.allocs.get(&alloc_id).cloned() else {
                    continue;
                };
                let mut alloc = (*alloc).clone();
                alloc.desired_transition = DesiredTransition {
                    reschedule: Some(true),
                    ..alloc.desired_transition.clone()
                };
                alloc.modify_index = index;
                alloc.modify_time = tick_time(now);
                out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                    &mut self.texts,
                    &alloc,
                    "desired transition reschedule (unhealthy in the deployment)",
                )));
                self.put_alloc(alloc);
            }
        }
        self.watcher_eval(now, &deployment, out);
    }

    /// `autoPromoteDeployment`, then `UpdateDeploymentPromotion` with
    /// `All`: once every canary group auto-promotes and all its canaries
    /// are healthy, the groups are promoted and the canaries lose their
    /// canary flag.
    fn auto_promote(&mut self, now: Tick, id: &str, out: &mut Vec<ServerEffect>) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        if !deployment.has_placed_canaries() || !deployment.requires_promotion() {
            return;
        }
        let allocs = self.deployment_allocs(&deployment);
        for state in deployment.task_groups.values() {
            if state.desired_canaries < 1 {
                continue;
            }
            if !state.auto_promote || (state.placed_canaries.len() as u32) < state.desired_canaries
            {
                return;
            }
            let healthy = state
                .placed_canaries
                .iter()
                .filter(|c| allocs.iter().any(|a| a.id == **c && a.is_healthy()))
                .count() as u32;
            if healthy != state.desired_canaries {
                return;
            }
        }
        // The state store's checks: healthy live canaries per group.
        let Ok(promotable) = self.promotion_check(&deployment, None) else {
            return;
        };
        let detail = format!("deployment {} canaries promoted (auto_promote)", short(id));
        self.apply_promotion(now, id, None, promotable, detail, out);
    }

    /// `UpdateDeploymentPromotion`'s checks: the live healthy canaries of
    /// the groups promoted (`None`: all), or Nomad's error for every group
    /// short of its `DesiredCanaries`.
    pub(super) fn promotion_check(
        &self,
        deployment: &Deployment,
        groups: Option<&[String]>,
    ) -> Result<Vec<Rc<Allocation>>, Vec<String>> {
        let chosen = |group: &str| groups.is_none_or(|g| g.iter().any(|n| n == group));
        let canaries: BTreeSet<&String> = crate::cold_sort::set_from(
            deployment
                .task_groups
                .values()
                .flat_map(|s| s.placed_canaries.iter()),
        );
        let promotable: Vec<Rc<Allocation>> = self
            .deployment_allocs(deployment)
            .into_iter()
            .filter(|a| {
                canaries.contains(&a.id)
                    && chosen(&a.task_group)
                    && !a.terminal_status()
                    && a.is_healthy()
            })
            .collect();
        let mut errors = Vec::new();
        for (group, state) in &deployment.task_groups {
            if state.desired_canaries == 0 || !chosen(group) {
                continue;
            }
            let have = promotable.iter().filter(|a| a.task_group == *group).count() as u32;
            if have < state.desired_canaries {
                errors.push(operator::refusal::unhealthy_canaries(
                    group,
                    have,
                    state.desired_canaries,
                ));
            }
        }
        if errors.is_empty() {
            Ok(promotable)
        } else {
            Err(errors)
        }
    }

    /// The writes of `UpdateDeploymentPromotion`: the groups (`None`: all)
    /// are promoted with their progress deadlines restarted, the watcher's
    /// eval is created, and the promotable canaries lose their canary flag.
    pub(super) fn apply_promotion(
        &mut self,
        now: Tick,
        id: &str,
        groups: Option<&[String]>,
        promotable: Vec<Rc<Allocation>>,
        detail: String,
        out: &mut Vec<ServerEffect>,
    ) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        let chosen = |group: &str| groups.is_none_or(|g| g.iter().any(|n| n == group));
        let index = self.bump_index();
        let now_time = tick_time(now);
        let mut nodes = BTreeSet::new();
        if let Some(stored) = self.state.deployments.get_mut(id) {
            stored.modify_index = index;
            stored.modify_time = now_time;
            for (group, state) in stored.task_groups.iter_mut() {
                if !chosen(group) {
                    continue;
                }
                if !state.progress_deadline.is_zero() && !state.require_progress_by.is_zero() {
                    state.require_progress_by = now_time.add(state.progress_deadline);
                }
                state.promoted = true;
            }
            if !stored.requires_promotion() && stored.status == DeploymentStatus::Running {
                stored.status_description = description::RUNNING.to_string();
            }
            out.push(ServerEffect::Trace(TraceEvent::Job {
                job: stored.job_id.as_str().into(),
                version: stored.job_version,
                detail: detail.into(),
            }));
        }
        self.watcher_eval(now, &deployment, out);
        for alloc in promotable {
            let mut alloc = (*alloc).clone();
            if let Some(status) = alloc.deployment_status.as_mut() {
                status.canary = false;
                status.modify_index = index;
            }
            alloc.modify_index = index;
            alloc.alloc_modify_index = index;
            nodes.insert(alloc.node_id.clone());
            self.put_alloc(alloc);
        }
        for node in nodes {
            out.push(ServerEffect::AllocsChanged { node });
        }
    }
}

fn add_signed(value: u32, delta: i64) -> u32 {
    u32::try_from((i64::from(value) + delta).max(0)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AllocDeploymentStatus, DeploymentState, Duration};

    fn server_with_deployment() -> Server {
        let mut server = Server::new(
            super::super::ServerConfig::default(),
            crate::profile::Version::LATEST,
            1,
        );
        let mut groups = BTreeMap::new();
        groups.insert(
            "web".to_string(),
            DeploymentState {
                progress_deadline: Duration::from_mins(10),
                desired_total: 2,
                ..DeploymentState::default()
            },
        );
        server.state.deployments.insert(
            "d1".to_string(),
            Deployment {
                id: "d1".to_string(),
                job_id: "web".to_string(),
                task_groups: groups,
                status: DeploymentStatus::Running,
                ..Deployment::default()
            },
        );
        server
    }

    fn alloc(health: Option<bool>, at: Tick) -> Allocation {
        Allocation {
            id: "a1".to_string(),
            task_group: "web".to_string(),
            deployment_id: "d1".to_string(),
            modify_time: tick_time(at),
            deployment_status: health.map(|healthy| AllocDeploymentStatus {
                healthy: Some(healthy),
                timestamp: tick_time(at),
                ..AllocDeploymentStatus::default()
            }),
            ..Allocation::default()
        }
    }

    /// `TestStateStore_UpsertDeploymentAllocHealth`-like counting: a
    /// placement, then healthy, then healthy -> unhealthy.
    #[test]
    fn update_deployment_with_alloc_counts_placements_and_health() {
        let mut server = server_with_deployment();
        let mut placed = alloc(None, 1_000);
        assert_eq!(
            server.update_deployment_with_alloc(5, &mut placed, None),
            Some("d1".to_string())
        );
        let state = |s: &Server| s.state.deployments["d1"].task_groups["web"].clone();
        assert_eq!(state(&server).placed_allocs, 1);
        assert_eq!(
            state(&server).require_progress_by,
            tick_time(1_000).add(Duration::from_mins(10))
        );
        // The same alloc written again without health changes nothing.
        let mut same = alloc(None, 2_000);
        assert_eq!(
            server.update_deployment_with_alloc(6, &mut same, Some(&placed)),
            None
        );
        let mut healthy = alloc(Some(true), 20_000);
        server.update_deployment_with_alloc(7, &mut healthy, Some(&placed));
        assert_eq!(state(&server).healthy_allocs, 1);
        assert_eq!(
            healthy.deployment_status.as_ref().map(|d| d.modify_index),
            Some(7)
        );
        assert_eq!(
            state(&server).require_progress_by,
            tick_time(20_000).add(Duration::from_mins(10))
        );
        let mut unhealthy = alloc(Some(false), 30_000);
        server.update_deployment_with_alloc(8, &mut unhealthy, Some(&healthy));
        assert_eq!(
            (
                state(&server).healthy_allocs,
                state(&server).unhealthy_allocs
            ),
            (0, 1)
        );
    }

    #[test]
    fn rollback_descriptions_are_nomads() {
        assert_eq!(
            watcher_description::rollback(watcher_description::FAILED_ALLOCATIONS, 3),
            "Failed due to unhealthy allocations - rolling back to job version 3"
        );
        assert_eq!(
            watcher_description::no_rollback_target(watcher_description::PROGRESS_DEADLINE),
            "Failed due to progress deadline - no stable job version to auto revert to"
        );
    }
}
