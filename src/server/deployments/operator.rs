//! Operator calls on a deployment: promote, pause, resume, fail, unblock
//! and set alloc health (a scenario's deployment actions).
//!
//! Follows Nomad's `nomad/deployment_endpoint.go` (the checks before the
//! watcher is called), `nomad/deploymentwatcher/deployment_watcher.go`
//! (`PromoteDeployment`, `PauseDeployment`, `FailDeployment`,
//! `setAllocHealth`, `handleRollbackValidity`; `UnblockDeployment` is a
//! no-op outside multiregion, `multiregion_ce.go`) and
//! `nomad/state/state_store.go` (`UpdateDeploymentPromotion`,
//! `updateDeploymentStatusImpl`, `UpdateDeploymentAllocHealth`), and the
//! CLI's `command/deployment_*.go` and `command/job_promote.go` (a job's
//! latest deployment).
//!
//! Each call is checked first; a refused call changes nothing and is traced
//! with Nomad's error text. An accepted call writes what Nomad's Raft apply
//! writes, creates the `deployment-watcher` eval Nomad creates (none for a
//! pause or an unblock), then the watcher sees the change.

use super::super::{Server, ServerEffect, tick_time};
use super::watcher_description;
use crate::model::{AllocDeploymentStatus, DeploymentStatus, deployment::description};
use crate::sim::queue::Tick;
use crate::sim::trace::{TraceEvent, short};
use std::collections::BTreeSet;

/// One operator call on a deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeploymentCall {
    /// `Deployment.Promote`: the groups named, or all (`None`).
    Promote {
        /// Groups (`None`: `All`).
        groups: Option<Vec<String>>,
    },
    /// `Deployment.Pause`: pause (`true`) or resume (`false`).
    Pause {
        /// Pause or resume.
        pause: bool,
    },
    /// `Deployment.Fail`.
    Fail,
    /// `Deployment.Unblock`.
    Unblock,
    /// `Deployment.SetAllocHealth`, by alloc ID.
    SetAllocHealth {
        /// Allocs to mark healthy.
        healthy: Vec<String>,
        /// Allocs to mark unhealthy.
        unhealthy: Vec<String>,
    },
}

impl DeploymentCall {
    /// The RPC's name.
    pub fn rpc(&self) -> &'static str {
        match self {
            DeploymentCall::Promote { .. } => "Deployment.Promote",
            DeploymentCall::Pause { .. } => "Deployment.Pause",
            DeploymentCall::Fail => "Deployment.Fail",
            DeploymentCall::Unblock => "Deployment.Unblock",
            DeploymentCall::SetAllocHealth { .. } => "Deployment.SetAllocHealth",
        }
    }
}

/// Nomad's error texts for refused calls (`structs/errors.go` and the
/// endpoint and state store errors).
pub mod refusal {
    /// No deployment with that ID.
    pub const NOT_FOUND: &str = "deployment not found";
    /// `ErrDeploymentTerminalNoPromote`.
    pub const TERMINAL_NO_PROMOTE: &str = "can't promote terminal deployment";
    /// `ErrDeploymentTerminalNoPause`.
    pub const TERMINAL_NO_PAUSE: &str = "can't pause terminal deployment";
    /// `ErrDeploymentTerminalNoResume`.
    pub const TERMINAL_NO_RESUME: &str = "can't resume terminal deployment";
    /// `ErrDeploymentTerminalNoFail`.
    pub const TERMINAL_NO_FAIL: &str = "can't fail terminal deployment";
    /// `ErrDeploymentTerminalNoUnblock`.
    pub const TERMINAL_NO_UNBLOCK: &str = "can't unblock terminal deployment";
    /// `ErrDeploymentTerminalNoSetHealth`.
    pub const TERMINAL_NO_SET_HEALTH: &str =
        "can't set health of allocations for a terminal deployment";
    /// `SetAllocHealth` without allocs.
    pub const NO_ALLOCS: &str = "must specify at least one healthy/unhealthy allocation ID";

    /// The promotion check of one group short of healthy canaries.
    pub fn unhealthy_canaries(group: &str, have: u32, need: u32) -> String {
        format!("Task group {group:?} has {have}/{need} healthy allocations")
    }

    /// `SetAllocHealth` names an alloc the state store does not have.
    pub fn unknown_alloc(id: &str) -> String {
        format!("unknown alloc {id:?}")
    }

    /// `SetAllocHealth` names an alloc of another deployment.
    pub fn not_in_deployment(id: &str, deployment: &str) -> String {
        format!("alloc {id:?} is not part of deployment {deployment:?}")
    }

    /// Several errors at once (Nomad's `multierror`, on one line).
    pub fn many(errors: &[String]) -> String {
        let what = if errors.len() == 1 { "error" } else { "errors" };
        format!(
            "{} {what} occurred: {}",
            errors.len(),
            errors
                .iter()
                .map(|e| format!("* {e}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    }
}

/// Status descriptions the operator calls write (Nomad's
/// `DeploymentStatusDescription*`).
pub mod operator_description {
    /// `DeploymentStatusDescriptionPaused`.
    pub const PAUSED: &str = "Deployment is paused";
    /// `DeploymentStatusDescriptionFailedByUser`.
    pub const FAILED_BY_USER: &str = "Deployment marked as failed";
}

impl Server {
    /// Resolves a deployment reference: `job` (the job's latest
    /// deployment, as `nomad job promote` finds it), `job#n` (its n-th
    /// deployment, from 0), or a deployment ID or ID prefix (8+ characters).
    pub fn resolve_deployment(&self, reference: &str) -> Option<String> {
        let deployments = &self.state.deployments;
        if deployments.contains_key(reference) {
            return Some(reference.to_string());
        }
        let (job, ordinal) = match reference.split_once('#') {
            Some((job, n)) => (job, Some(n.parse::<usize>().ok()?)),
            None => (reference, None),
        };
        let mut of_job: Vec<_> = deployments.values().filter(|d| d.job_id == job).collect();
        if !of_job.is_empty() {
            crate::cold_sort::sort_by_key(&mut of_job, |d| d.create_index);
            let found = match ordinal {
                Some(n) => of_job.get(n),
                None => of_job.last(),
            };
            return found.map(|d| d.id.clone());
        }
        if reference.len() >= 8 {
            let mut matches = deployments.keys().filter(|id| id.starts_with(reference));
            if let (Some(id), None) = (matches.next(), matches.next()) {
                return Some(id.clone());
            }
        }
        None
    }

    /// Handles an operator call on deployment `id`: checks it as Nomad's
    /// endpoint, watcher and state store do, traces the outcome, and on
    /// success writes it and lets the watcher see it.
    pub fn deployment_call(
        &mut self,
        now: Tick,
        id: &str,
        call: DeploymentCall,
        out: &mut Vec<ServerEffect>,
    ) {
        let rpc = call.rpc().to_string();
        if let Err(reason) = self.check_deployment_call(id, &call) {
            out.push(ServerEffect::Trace(TraceEvent::Operator {
                rpc: rpc.into(),
                accepted: false,
                detail: reason.into(),
            }));
            return;
        }
        out.push(ServerEffect::Trace(TraceEvent::Operator {
            rpc: rpc.into(),
            accepted: true,
            detail: match call {
                DeploymentCall::Pause { pause: false } => {
                    format!("deployment {} resume", short(id))
                }
                _ => format!("deployment {}", short(id)),
            }
            .into(),
        }));
        match call {
            DeploymentCall::Promote { groups } => self.operator_promote(now, id, groups, out),
            DeploymentCall::Pause { pause } => self.operator_pause(now, id, pause, out),
            DeploymentCall::Fail => {
                // `FailDeployment`: roll back if any group has auto_revert.
                let rollback = self
                    .state
                    .deployments
                    .get(id)
                    .is_some_and(|d| d.task_groups.values().any(|s| s.auto_revert));
                self.fail_deployment_as(
                    now,
                    id,
                    operator_description::FAILED_BY_USER,
                    rollback,
                    true,
                    out,
                );
            }
            // Multiregion only: nothing happens in a single region.
            DeploymentCall::Unblock => {}
            DeploymentCall::SetAllocHealth { healthy, unhealthy } => {
                self.operator_set_alloc_health(now, id, &healthy, &unhealthy, out)
            }
        }
    }

    /// The checks, in Nomad's order: the endpoint's (arguments, the
    /// deployment exists and is active), then the state store's.
    fn check_deployment_call(&self, id: &str, call: &DeploymentCall) -> Result<(), String> {
        if let DeploymentCall::SetAllocHealth { healthy, unhealthy } = call
            && healthy.is_empty()
            && unhealthy.is_empty()
        {
            return Err(refusal::NO_ALLOCS.to_string());
        }
        let Some(deployment) = self.state.deployments.get(id) else {
            return Err(refusal::NOT_FOUND.to_string());
        };
        if !deployment.active() {
            let text = match call {
                DeploymentCall::Promote { .. } => refusal::TERMINAL_NO_PROMOTE,
                DeploymentCall::Pause { pause: true } => refusal::TERMINAL_NO_PAUSE,
                DeploymentCall::Pause { pause: false } => refusal::TERMINAL_NO_RESUME,
                DeploymentCall::Fail => refusal::TERMINAL_NO_FAIL,
                DeploymentCall::Unblock => refusal::TERMINAL_NO_UNBLOCK,
                DeploymentCall::SetAllocHealth { .. } => refusal::TERMINAL_NO_SET_HEALTH,
            };
            return Err(text.to_string());
        }
        match call {
            DeploymentCall::Promote { groups } => self
                .promotion_check(deployment, groups.as_deref())
                .map(|_| ())
                .map_err(|errors| refusal::many(&errors)),
            DeploymentCall::SetAllocHealth { healthy, unhealthy } => {
                for alloc in healthy.iter().chain(unhealthy) {
                    match self.state.allocs.get(alloc) {
                        None => return Err(refusal::unknown_alloc(alloc)),
                        Some(a) if a.deployment_id != id => {
                            return Err(refusal::not_in_deployment(alloc, id));
                        }
                        Some(_) => {}
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `PromoteDeployment` with `UpdateDeploymentPromotion`.
    fn operator_promote(
        &mut self,
        now: Tick,
        id: &str,
        groups: Option<Vec<String>>,
        out: &mut Vec<ServerEffect>,
    ) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        let Ok(promotable) = self.promotion_check(&deployment, groups.as_deref()) else {
            return;
        };
        let detail = match &groups {
            None => format!("deployment {} canaries promoted", short(id)),
            Some(groups) => format!(
                "deployment {} canaries promoted (groups {})",
                short(id),
                groups.join(", ")
            ),
        };
        self.apply_promotion(now, id, groups.as_deref(), promotable, detail, out);
        self.watch_deployments(now, &BTreeSet::from([id.to_string()]), out);
    }

    /// `PauseDeployment` with `updateDeploymentStatusImpl`: paused, or
    /// running again with an eval; either way (since 2.0.0) every group's
    /// `RequireProgressBy` restarts from now.
    fn operator_pause(&mut self, now: Tick, id: &str, pause: bool, out: &mut Vec<ServerEffect>) {
        let index = self.bump_index();
        let now_time = tick_time(now);
        let Some(stored) = self.state.deployments.get_mut(id) else {
            return;
        };
        let (status, desc) = if pause {
            (DeploymentStatus::Paused, operator_description::PAUSED)
        } else {
            (DeploymentStatus::Running, description::RUNNING)
        };
        stored.status = status;
        stored.status_description = desc.to_string();
        stored.modify_index = index;
        stored.modify_time = now_time;
        // #27804 (2.0.0): the progress deadlines restart from now.
        if self.rules.pause_resets_progress {
            for state in stored.task_groups.values_mut() {
                if !state.progress_deadline.is_zero() {
                    state.require_progress_by = now_time.add(state.progress_deadline);
                }
            }
        }
        let deployment = stored.clone();
        self.deployment_status_written(id, out);
        if !pause {
            self.watcher_eval(now, &deployment, out);
        }
        // The watcher sees the deployment change: a new progress cutoff.
        self.arm_progress_deadline(id, out);
    }

    /// `setAllocHealth` with `UpdateDeploymentAllocHealth`: the health is
    /// set and counted; any unhealthy alloc fails the deployment (rolling
    /// back when its group has auto_revert and a stable version differs);
    /// an eval is created either way.
    fn operator_set_alloc_health(
        &mut self,
        now: Tick,
        id: &str,
        healthy: &[String],
        unhealthy: &[String],
        out: &mut Vec<ServerEffect>,
    ) {
        let Some(deployment) = self.state.deployments.get(id).cloned() else {
            return;
        };
        // The watcher decides on the failure before the write.
        let rollback = unhealthy.iter().any(|alloc| {
            self.state
                .allocs
                .get(alloc)
                .and_then(|a| deployment.task_groups.get(&a.task_group))
                .is_some_and(|s| s.auto_revert)
        });
        let index = self.bump_index();
        let now_time = tick_time(now);
        let mut nodes = BTreeSet::new();
        let marks = healthy
            .iter()
            .map(|a| (a, true))
            .chain(unhealthy.iter().map(|a| (a, false)));
        for (alloc_id, health) in marks {
            let Some(old) = self.state.allocs.get(alloc_id).cloned() else {
                continue;
            };
            let mut alloc = (*old).clone();
            let status = alloc
                .deployment_status
                .get_or_insert_with(AllocDeploymentStatus::default);
            status.healthy = Some(health);
            status.timestamp = now_time;
            status.modify_index = index;
            alloc.modify_time = now_time;
            alloc.modify_index = index;
            self.update_deployment_with_alloc(index, &mut alloc, Some(&old));
            out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                &mut self.texts,
                &alloc,
                format!(
                    "deployment health set {} by the operator",
                    if health { "healthy" } else { "unhealthy" }
                ),
            )));
            nodes.insert(alloc.node_id.clone());
            self.put_alloc(alloc);
        }
        if unhealthy.is_empty() {
            self.watcher_eval(now, &deployment, out);
        } else {
            self.fail_deployment_as(
                now,
                id,
                watcher_description::FAILED_ALLOCATIONS,
                rollback,
                false,
                out,
            );
        }
        for node in nodes {
            out.push(ServerEffect::AllocsChanged { node });
        }
        // The watcher sees the allocs change.
        self.watch_deployments(now, &BTreeSet::from([id.to_string()]), out);
    }
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn refusal_texts_are_nomads() {
        assert_eq!(
            refusal::unhealthy_canaries("web", 0, 1),
            "Task group \"web\" has 0/1 healthy allocations"
        );
        assert_eq!(
            refusal::many(&[refusal::unhealthy_canaries("web", 0, 1)]),
            "1 error occurred: * Task group \"web\" has 0/1 healthy allocations"
        );
        assert_eq!(
            refusal::not_in_deployment("a1", "d1"),
            "alloc \"a1\" is not part of deployment \"d1\""
        );
    }
}
