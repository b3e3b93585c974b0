//! The client RPCs on the server: `Node.Register`, `Node.UpdateStatus`,
//! `Node.UpdateAlloc`, `Node.GetClientAllocs` and `Alloc.GetAlloc`, plus the
//! node evals a status change creates and the operator's drain and
//! eligibility calls (Nomad's `nomad/node_endpoint.go`, the FSM's
//! `applyAllocClientUpdate` and `state_store.go: nestedUpdateAllocFromClient`).

use super::rpc::{AllocUpdate, Reply, Rpc};
use super::{Server, ServerEffect, tick_time};
use crate::model::{
    ClientStatus, DesiredTransition, DrainStrategy, EvalStatus, JobType, NodeStatus,
    SchedulingEligibility,
};
use crate::profile::UpdateAllocGate;
use crate::sim::net::CallId;
use crate::sim::queue::{Seconds, Tick};
use crate::sim::rng::Rng;
use crate::sim::trace::{CallDetail, NodeName, NodeStatusChange, RpcName, TraceEvent, short};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Nomad's `nodeStatusTransitionRequiresEval`.
pub fn transition_requires_eval(new: &NodeStatus, old: &NodeStatus) -> bool {
    let init_to_ready = *old == NodeStatus::Initializing && *new == NodeStatus::Ready;
    let down_to_ready = *old == NodeStatus::Down && *new == NodeStatus::Ready;
    let disconnected_to_other =
        *old == NodeStatus::Disconnected && *new != NodeStatus::Disconnected;
    let other_to_disconnected =
        *old != NodeStatus::Disconnected && *new == NodeStatus::Disconnected;
    init_to_ready || down_to_ready || disconnected_to_other || other_to_disconnected
}

fn unresponsive(status: &NodeStatus) -> bool {
    matches!(status, NodeStatus::Down | NodeStatus::Disconnected)
}

impl Server {
    /// Handles one client call and replies (the sender's ID is borrowed,
    /// the shared copy in [`Server::texts`] the call carries: a call is
    /// not a [`super::ServerInput`], so the network's pending call is not
    /// copied, and the trace and the reply take the same copy).
    pub fn handle_call(
        &mut self,
        now: Tick,
        sender: &NodeName,
        call: CallId,
        rpc: Rpc,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) {
        let node = sender.as_str();
        let result: Result<(Reply, CallDetail), (String, bool)> = match &rpc {
            Rpc::Register { node: record } => self.register(now, record, rng, out).map(|ttl| {
                (
                    Reply::Heartbeat { ttl },
                    format!("ttl={}s", Seconds::of(ttl)).into(),
                )
            }),
            Rpc::UpdateStatus => self
                .update_node_status(now, sender, NodeStatus::Ready, "client heartbeat", rng, out)
                .map(|(status, ttl)| {
                    let ttl = ttl.unwrap_or(0);
                    // The status and the TTL as numbers (every heartbeat
                    // writes one, and the history keeps it).
                    (
                        Reply::Heartbeat { ttl },
                        CallDetail::heartbeat(&status, ttl),
                    )
                }),
            Rpc::UpdateAlloc { updates } => self
                .update_alloc(now, node, updates, out)
                .map(|detail| (Reply::Ack, detail.into())),
            Rpc::GetClientAllocs => {
                let allocs = self.node_allocs(node);
                let detail = super::rpc::allocs_text(allocs.len());
                Ok((Reply::Allocs { allocs }, detail.into()))
            }
            Rpc::GetAlloc { alloc_id } => {
                if alloc_id.len() != 36 {
                    Err((
                        "alloc lookup failed: index error: UUID must be 36 characters".to_string(),
                        false,
                    ))
                } else {
                    let alloc = self.state.allocs.get(alloc_id).cloned();
                    let detail = super::rpc::alloc_text(alloc.as_deref());
                    Ok((Reply::Alloc { alloc }, detail.into()))
                }
            }
        };
        let (reply, accepted, detail) = match result {
            Ok((reply, detail)) => (reply, true, detail),
            Err((message, node_not_found)) => (
                Reply::Error {
                    message: message.clone(),
                    node_not_found,
                },
                false,
                message.into(),
            ),
        };
        let node = sender.clone();
        out.push(ServerEffect::Trace(TraceEvent::CallHandled {
            node: node.clone(),
            call,
            rpc: RpcName::of(&rpc),
            accepted,
            detail,
        }));
        out.push(ServerEffect::Reply {
            node,
            call,
            rpc,
            reply,
        });
    }

    /// `Node.Register`.
    fn register(
        &mut self,
        now: Tick,
        record: &super::NodeRecord,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) -> Result<Tick, (String, bool)> {
        let id = record.node.id.clone();
        let index = self.bump_index();
        let original = self.state.nodes.get(&id).map(|r| r.node.status.clone());
        let mut incoming = record.clone();
        incoming.node.status = NodeStatus::Initializing;
        if let Some(existing) = self.state.nodes.get(&id) {
            if self.rules.register_keeps_status {
                incoming.node.status = existing.node.status.clone();
            }
            incoming.node.create_index = existing.node.create_index;
            incoming.node.drain_strategy = existing.node.drain_strategy.clone();
            incoming.node.scheduling_eligibility = existing.node.scheduling_eligibility.clone();
            incoming.last_missed_heartbeat_index = existing.last_missed_heartbeat_index;
            incoming.last_alloc_update_index = existing.last_alloc_update_index;
        } else {
            incoming.node.create_index = index;
        }
        incoming.node.modify_index = index;
        let new_status = incoming.node.status.clone();
        self.state.nodes.insert(id.clone(), incoming);
        self.state.node_slot(&id);
        self.node_written(&id);
        match &original {
            Some(old) if *old != new_status => {
                out.push(ServerEffect::Trace(TraceEvent::NodeStatus(Box::new(
                    NodeStatusChange {
                        node: id.as_str().into(),
                        from: old.as_str().into(),
                        to: new_status.as_str().into(),
                        reason: "node registered".into(),
                    },
                ))));
            }
            None => out.push(ServerEffect::Trace(TraceEvent::NodeStatus(Box::new(
                NodeStatusChange {
                    node: id.as_str().into(),
                    from: "none".into(),
                    to: new_status.as_str().into(),
                    reason: "node registered".into(),
                },
            )))),
            _ => {}
        }
        let needs_evals = new_status == NodeStatus::Down
            || match &original {
                None => transition_requires_eval(&new_status, &NodeStatus::Initializing),
                Some(old) => transition_requires_eval(&new_status, old),
            };
        if needs_evals {
            self.create_node_evals(now, &id, out);
        }
        if new_status == NodeStatus::Down {
            self.state.heartbeat_timers.remove(&id);
            return Ok(0);
        }
        let name = self.texts.text(&id);
        Ok(self.reset_heartbeat_timer(now, &name, rng, out))
    }

    /// `Node.UpdateStatus`, from a client (`ready`) or the heartbeater
    /// (`down` / `disconnected`), for the node `name` (the shared copy of
    /// its ID in [`Server::texts`]). Returns the node's status after the
    /// call and the TTL when the timer was reset.
    pub fn update_node_status(
        &mut self,
        now: Tick,
        name: &NodeName,
        requested: NodeStatus,
        why: &str,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) -> Result<(NodeStatus, Option<Tick>), (String, bool)> {
        let node = name.as_str();
        let Some(record) = self.state.nodes.get(node) else {
            return Err((format!("node {node} not found"), true));
        };
        let stored = record.node.status.clone();
        let mut new = requested.clone();
        // Written only when the status changes (most heartbeats keep it).
        let mut reason = std::borrow::Cow::Borrowed(why);
        if self.rules.initializing_gate {
            if stored == NodeStatus::Initializing && requested == NodeStatus::Ready {
                let has_live_allocs = self
                    .node_allocs(node)
                    .iter()
                    .any(|alloc| !alloc.terminal_status());
                let synced = record.last_alloc_update_index > record.last_missed_heartbeat_index;
                if has_live_allocs && !synced {
                    new = NodeStatus::Initializing;
                    reason = format!("{why}; allocs not synced since the missed heartbeat").into();
                }
            } else if stored == NodeStatus::Disconnected && requested == NodeStatus::Ready {
                new = NodeStatus::Initializing;
                reason = format!("{why}; reconnecting node must sync its allocs first").into();
            }
        }
        if new != stored {
            let index = self.bump_index();
            let index_gating = self.rules.index_gating;
            if let Some(record) = self.state.nodes.get_mut(node) {
                record.node.status = new.clone();
                record.node.modify_index = index;
                if index_gating {
                    if unresponsive(&new) && !unresponsive(&stored) {
                        record.last_missed_heartbeat_index = index;
                    } else if new == NodeStatus::Ready {
                        record.last_missed_heartbeat_index = 0;
                    }
                }
            }
            self.node_written(node);
            if stored == NodeStatus::Down && new == NodeStatus::Ready {
                reason = format!("{reason}; node reregistered by heartbeat").into();
            }
            out.push(ServerEffect::Trace(TraceEvent::NodeStatus(Box::new(
                NodeStatusChange {
                    node: node.into(),
                    from: stored.as_str().into(),
                    to: new.as_str().into(),
                    reason: reason.as_ref().into(),
                },
            ))));
        }
        if requested == NodeStatus::Down || transition_requires_eval(&new, &stored) {
            self.create_node_evals(now, node, out);
        }
        if new == NodeStatus::Ready && stored != NodeStatus::Ready {
            self.unblock_all(&format!("node {node} became ready"), out);
        }
        if requested == NodeStatus::Down {
            self.state.heartbeat_timers.remove(node);
            return Ok((new, None));
        }
        Ok((new, Some(self.reset_heartbeat_timer(now, name, rng, out))))
    }

    /// `createNodeEvals`: a `node-update` eval per job with allocs on the
    /// node, plus one per system job that may run there.
    pub fn create_node_evals(&mut self, now: Tick, node: &str, out: &mut Vec<ServerEffect>) {
        let Some(record) = self.state.nodes.get(node) else {
            return;
        };
        let datacenter = record.node.datacenter.clone();
        let pool = record.node.node_pool.clone();
        let skip_terminal = self.rules.node_evals_skip_terminal;
        let mut jobs: Vec<String> = Vec::new();
        for alloc in self.node_allocs(node) {
            if jobs.contains(&alloc.job_id) {
                continue;
            }
            let job_type = alloc
                .job
                .as_ref()
                .map(|job| job.job_type.clone())
                .unwrap_or(JobType::Service);
            if skip_terminal {
                let skip = match job_type {
                    JobType::Service => {
                        alloc.server_terminal_status() && alloc.client_terminal_status()
                    }
                    JobType::Batch => alloc.client_terminal_status(),
                    _ => true,
                };
                if skip {
                    continue;
                }
            }
            jobs.push(alloc.job_id.clone());
        }
        for (id, job) in &self.state.jobs {
            let job = &job.job;
            if job.job_type != JobType::System || jobs.contains(id) {
                continue;
            }
            let in_dc = job
                .datacenters
                .iter()
                .any(|dc| dc == "*" || *dc == datacenter);
            let in_pool = !self.rules.system_evals_match_pool
                || job.node_pool.is_empty()
                || job.node_pool == "all"
                || job.node_pool == pool;
            if in_dc && in_pool && !(skip_terminal && job.stop) {
                jobs.push(id.clone());
            }
        }
        for job_id in jobs {
            let job = match self.state.jobs.get(&job_id) {
                Some(record) => Rc::clone(&record.job),
                None => match self
                    .node_allocs(node)
                    .iter()
                    .find(|alloc| alloc.job_id == job_id)
                    .and_then(|alloc| alloc.job.clone())
                {
                    Some(job) => job,
                    None => continue,
                },
            };
            self.create_eval(now, &job, "node-update", node, None, "", out);
        }
    }

    /// `Node.UpdateAlloc`: the gate, the evals and the state write.
    fn update_alloc(
        &mut self,
        now: Tick,
        node: &str,
        updates: &[AllocUpdate],
        out: &mut Vec<ServerEffect>,
    ) -> Result<String, (String, bool)> {
        let Some(record) = self.state.nodes.get(node) else {
            return Err((format!("node {node} not found"), true));
        };
        let status = record.node.status.clone();
        match self.rules.update_alloc_gate {
            UpdateAllocGate::None => {}
            UpdateAllocGate::RequireReady => {
                if status != NodeStatus::Ready {
                    return Err((format!("node {node} is {status}, not ready"), false));
                }
            }
            UpdateAllocGate::RejectUnresponsive => {
                if unresponsive(&status) {
                    return Err((
                        format!(
                            "node {node} is not allowed to update allocs while in status {status}"
                        ),
                        false,
                    ));
                }
            }
        }
        let now_time = tick_time(now);
        let index = self.bump_index();
        // One eval per job per batch: job -> (trigger, job snapshot).
        let mut job_evals: BTreeMap<String, String> = BTreeMap::new();
        let mut unblock = false;
        // The detail: "<short id>=<status>" per written alloc, comma-separated.
        let mut written = String::new();
        let mut deployments = std::collections::BTreeSet::new();
        for update in updates {
            let Some(stored) = self.state.allocs.get(&update.id).cloned() else {
                continue;
            };
            let reported = ClientStatus::parse(&update.client_status);
            let job_exists = self.state.jobs.contains_key(&stored.job_id);
            let mut updated = (*stored).clone();
            updated.client_status = reported.clone();
            updated.client_description = update.client_description.clone();
            updated.task_states = (&update.task_states).into();
            updated.modify_index = index;
            updated.modify_time = now_time;
            if let Some(id) = self.take_client_health(index, &mut updated, &stored, update) {
                deployments.insert(id);
            }

            let trigger = if !job_exists {
                Some("job-deregister")
            } else if stored.client_status == ClientStatus::Unknown {
                Some("reconnect")
            } else if reported == ClientStatus::Failed
                && stored.followup_eval_id.is_empty()
                && updated.job_task_group().is_some()
                && updated.next_reschedule_time().1
            {
                Some("alloc-failure")
            } else {
                None
            };
            if let Some(trigger) = trigger {
                let entry = job_evals.entry(stored.job_id.clone()).or_default();
                if entry.is_empty() || trigger == "reconnect" {
                    *entry = trigger.to_string();
                }
            }

            if self.rules.cancel_followup_on_reconnect
                && stored.needs_to_reconnect()
                && !stored.followup_eval_id.is_empty()
                && matches!(
                    reported,
                    ClientStatus::Running | ClientStatus::Complete | ClientStatus::Failed
                )
            {
                let followup = stored.followup_eval_id.clone();
                // The job's allocs read in place (not copied out).
                let job_allocs = self.state.allocs_by_job.get(&stored.job_id);
                let shared = job_allocs.is_some_and(|allocs| {
                    allocs.values().any(|other| {
                        other.followup_eval_id == followup
                            && other.id != stored.id
                            && !other.terminal_status()
                    })
                });
                if !shared
                    && self
                        .state
                        .evals
                        .get(&followup)
                        .is_some_and(|r| r.eval.status == EvalStatus::Pending)
                {
                    self.cancel_eval(now, &followup, "alloc reconnected", out);
                }
                updated.followup_eval_id.clear();
            }
            if reported.is_terminal() {
                unblock = true;
            }
            if stored.client_status != reported {
                out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                    &mut self.texts,
                    &stored,
                    [
                        "client ",
                        stored.client_status.as_str(),
                        " -> ",
                        reported.as_str(),
                    ]
                    .concat(),
                )));
            }
            if !written.is_empty() {
                written.push(',');
            }
            written.push_str(short(&stored.id));
            written.push('=');
            written.push_str(reported.as_str());
            self.put_alloc(updated);
        }
        if self.rules.index_gating
            && let Some(record) = self.state.nodes.get_mut(node)
        {
            record.last_alloc_update_index = index;
        }
        for (job_id, trigger) in job_evals {
            let job = match self.state.jobs.get(&job_id) {
                Some(record) => Rc::clone(&record.job),
                None => Rc::new(crate::model::Job {
                    id: job_id.clone(),
                    priority: 50,
                    job_type: JobType::Service,
                    ..crate::model::Job::default()
                }),
            };
            self.create_eval(now, &job, &trigger, "", None, "", out);
        }
        if unblock {
            self.unblock_all("an alloc finished", out);
        }
        self.watch_deployments(now, &deployments, out);
        Ok(written)
    }

    /// Starts or cancels a drain: the node becomes ineligible and its
    /// allocs are marked for migration (the drainer's job, done at once).
    pub(super) fn drain_node(
        &mut self,
        now: Tick,
        node: &str,
        enable: bool,
        out: &mut Vec<ServerEffect>,
    ) {
        let index = self.bump_index();
        let Some(record) = self.state.nodes.get_mut(node) else {
            return;
        };
        if enable {
            record.node.drain_strategy = Some(DrainStrategy::default());
            record.node.scheduling_eligibility = SchedulingEligibility::Ineligible;
        } else {
            record.node.drain_strategy = None;
            record.node.scheduling_eligibility = SchedulingEligibility::Eligible;
        }
        record.node.modify_index = index;
        self.node_written(node);
        out.push(ServerEffect::Trace(TraceEvent::NodeFlags {
            node: node.into(),
            detail: if enable {
                "drain started, ineligible".to_string()
            } else {
                "drain cancelled, eligible".to_string()
            }
            .into(),
        }));
        if !enable {
            self.unblock_all(&format!("node {node} became eligible"), out);
            return;
        }
        let mut jobs = Vec::new();
        for alloc in self.node_allocs(node) {
            let system = alloc
                .job
                .as_ref()
                .is_some_and(|job| matches!(job.job_type, JobType::System | JobType::SysBatch));
            if alloc.terminal_status() || system {
                continue;
            }
            let mut updated = (*alloc).clone();
            updated.desired_transition = DesiredTransition {
                migrate: Some(true),
                ..updated.desired_transition.clone()
            };
            updated.modify_index = index;
            updated.alloc_modify_index = index;
            if !jobs.contains(&alloc.job_id) {
                jobs.push(alloc.job_id.clone());
            }
            self.put_alloc(updated);
        }
        for job_id in jobs {
            if let Some(job) = self.state.jobs.get(&job_id).map(|r| Rc::clone(&r.job)) {
                self.create_eval(now, &job, "node-drain", node, None, "", out);
            }
        }
    }

    /// Sets a node's scheduling eligibility.
    pub(super) fn set_eligibility(
        &mut self,
        _now: Tick,
        node: &str,
        eligible: bool,
        out: &mut Vec<ServerEffect>,
    ) {
        let index = self.bump_index();
        let Some(record) = self.state.nodes.get_mut(node) else {
            return;
        };
        record.node.scheduling_eligibility = if eligible {
            SchedulingEligibility::Eligible
        } else {
            SchedulingEligibility::Ineligible
        };
        record.node.modify_index = index;
        self.node_written(node);
        out.push(ServerEffect::Trace(TraceEvent::NodeFlags {
            node: node.into(),
            detail: if eligible { "eligible" } else { "ineligible" }
                .to_string()
                .into(),
        }));
        if eligible {
            self.unblock_all(&format!("node {node} became eligible"), out);
        }
    }
}
