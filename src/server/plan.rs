//! Plans and the plan applier (Nomad's `structs.Plan`, `nomad/plan_apply.go:
//! evaluateNodePlan` and `state_store.go: upsertAllocsImpl`).
//!
//! A plan lists, per node, the allocs to stop, the allocs to write (new
//! ones and full updates of existing ones) and the allocs to evict. The
//! applier accepts or rejects each node's part by the node's status; a
//! rejected node loses both its stops and its writes, the other nodes
//! commit (a partial commit), and the scheduler retries.

use super::{Server, ServerEffect, tick_time};
use crate::model::{
    Allocation, ClientStatus, Deployment, DeploymentStatusUpdate, DesiredStatus, NodeStatus,
};
use crate::reconciler::cluster::ReconnectUpdate;
use crate::sim::queue::Tick;
use crate::sim::trace::{SharedText, TraceEvent, short};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// A stop in a plan (the normalized form: only what Nomad keeps).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanStop {
    /// Alloc ID.
    pub alloc_id: String,
    /// `DesiredDescription`.
    pub description: String,
    /// Client status to write (`lost`), if any.
    pub client_status: Option<ClientStatus>,
    /// Follow-up eval to attach.
    pub followup_eval_id: String,
}

/// An alloc a plan writes: a whole alloc (new, or an updated copy), or a
/// reconnect update of a stored alloc, which the plan keeps as the alloc
/// read and the mark to add: the updated alloc is built only when the
/// applier commits its node (a plan refused on an initializing node,
/// retried, copies nothing).
#[derive(Debug, Clone, PartialEq)]
pub enum PlanAlloc {
    /// The alloc to write.
    Whole(Rc<Allocation>),
    /// The alloc with its reconnect mark appended.
    Reconnect(ReconnectUpdate),
}

impl PlanAlloc {
    /// The alloc as the applier's checks and the plan's description read
    /// it: the alloc to write, but for a reconnect update the alloc before
    /// the update, which differs only in the alloc states the mark appends.
    pub fn read(&self) -> &Allocation {
        match self {
            PlanAlloc::Whole(alloc) => alloc,
            PlanAlloc::Reconnect(update) => &update.alloc,
        }
    }

    /// The alloc to write (taken from the plan where it holds the only
    /// reference, else copied).
    pub fn into_alloc(self) -> Allocation {
        match self {
            PlanAlloc::Whole(alloc) => Rc::unwrap_or_clone(alloc),
            PlanAlloc::Reconnect(update) => update.to_alloc(),
        }
    }
}

/// A scheduler's plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Stops per node.
    pub node_update: BTreeMap<String, Vec<PlanStop>>,
    /// Allocs to write per node (new or updated, full objects shared with
    /// the reconciler's result where it hands them over unchanged, or
    /// reconnect updates built on commit).
    pub node_allocation: BTreeMap<String, Vec<PlanAlloc>>,
    /// Evictions per node (alloc ID, preempting alloc ID).
    pub node_preemptions: BTreeMap<String, Vec<(String, String)>>,
    /// A deployment to create or update.
    pub deployment: Option<Deployment>,
    /// Deployment status changes.
    pub deployment_updates: Vec<DeploymentStatusUpdate>,
}

impl Plan {
    /// Whether the plan changes nothing.
    pub fn is_noop(&self) -> bool {
        self.node_update.is_empty()
            && self.node_allocation.is_empty()
            && self.node_preemptions.is_empty()
            && self.deployment.is_none()
            && self.deployment_updates.is_empty()
    }

    /// Adds a stop.
    pub fn stop(
        &mut self,
        alloc: &Allocation,
        description: &str,
        client_status: Option<ClientStatus>,
        followup: &str,
    ) {
        self.node_update
            .entry(alloc.node_id.clone())
            .or_default()
            .push(PlanStop {
                alloc_id: alloc.id.clone(),
                description: description.to_string(),
                client_status,
                followup_eval_id: followup.to_string(),
            });
    }

    /// Adds an alloc to write.
    pub fn write(&mut self, alloc: Allocation) {
        self.write_shared(Rc::new(alloc));
    }

    /// Adds an alloc to write, shared.
    pub fn write_shared(&mut self, alloc: Rc<Allocation>) {
        self.write_entry(PlanAlloc::Whole(alloc));
    }

    /// Adds a reconnect update (its alloc built on commit).
    pub fn write_reconnect(&mut self, update: ReconnectUpdate) {
        self.write_entry(PlanAlloc::Reconnect(update));
    }

    fn write_entry(&mut self, entry: PlanAlloc) {
        use std::collections::btree_map::Entry;
        // Most nodes get one write per plan: a new node's list is made
        // with room for just it (pushing onto an empty list would make
        // room for four).
        match self.node_allocation.entry(entry.read().node_id.clone()) {
            Entry::Vacant(slot) => {
                slot.insert(vec![entry]);
            }
            Entry::Occupied(mut slot) => slot.get_mut().push(entry),
        }
    }

    /// Each node's part of the plan, in node order, each node once: the
    /// three maps walked together (no lookup per node).
    pub(super) fn parts(&self) -> impl Iterator<Item = NodePart<'_>> {
        let mut stops = self.node_update.iter().peekable();
        let mut writes = self.node_allocation.iter().peekable();
        let mut evictions = self.node_preemptions.iter().peekable();
        std::iter::from_fn(move || {
            // Most plans only write: while the other two maps have no
            // node left, the next node is the next write's (no comparison).
            if stops.peek().is_none() && evictions.peek().is_none() {
                let (node, allocs) = writes.next()?;
                return Some(NodePart {
                    node,
                    stops: &[],
                    allocs,
                    preemptions: &[],
                });
            }
            let node = [
                stops.peek().map(|(node, _)| *node),
                writes.peek().map(|(node, _)| *node),
                evictions.peek().map(|(node, _)| *node),
            ]
            .into_iter()
            .flatten()
            .min()?;
            Some(NodePart {
                node,
                stops: next_of(&mut stops, node),
                allocs: next_of(&mut writes, node),
                preemptions: next_of(&mut evictions, node),
            })
        })
    }

    /// [`Plan::parts`] with each node's writes to take (`None` where the
    /// node has none): the applier walks the plan once more to commit the
    /// nodes it accepted (no lookup, no copy of a node's ID per node).
    fn parts_mut(&mut self) -> impl Iterator<Item = NodePartMut<'_>> {
        let mut stops = self.node_update.iter().peekable();
        let mut writes = self.node_allocation.iter_mut().peekable();
        let mut evictions = self.node_preemptions.iter().peekable();
        std::iter::from_fn(move || {
            // As in `parts`: a plan that only writes needs no comparison.
            if stops.peek().is_none() && evictions.peek().is_none() {
                let (node, allocs) = writes.next()?;
                return Some(NodePartMut {
                    node,
                    stops: &[],
                    allocs: Some(allocs),
                    preemptions: &[],
                });
            }
            let node = [
                stops.peek().map(|(node, _)| *node),
                writes.peek().map(|(node, _)| *node),
                evictions.peek().map(|(node, _)| *node),
            ]
            .into_iter()
            .flatten()
            .min()?;
            Some(NodePartMut {
                node,
                stops: next_of(&mut stops, node),
                allocs: writes
                    .next_if(|(key, _)| same_node(key, node))
                    .map(|(_, list)| list),
                preemptions: next_of(&mut evictions, node),
            })
        })
    }

    /// One line per node for the trace.
    pub fn describe(&self, server: &Server) -> Vec<SharedText> {
        use std::fmt::Write as _;
        // Most plans only write (one line per node they write to).
        let mut lines = Vec::with_capacity(self.node_allocation.len());
        // Each line is written into one buffer, part by part, then copied
        // once into its shared text.
        let mut line = String::with_capacity(64);
        for NodePart {
            node,
            stops,
            allocs,
            preemptions,
        } in self.parts()
        {
            line.clear();
            line.push_str(node);
            line.push_str(": ");
            let mut first = true;
            let mut part = |line: &mut String| {
                if !first {
                    line.push_str(", ");
                }
                first = false;
            };
            for stop in stops {
                part(&mut line);
                line.push_str("stop ");
                if let Some(alloc) = server.state.allocs.get(&stop.alloc_id) {
                    line.push_str(&alloc.name);
                }
                line.push('(');
                line.push_str(short(&stop.alloc_id));
                line.push(')');
                if let Some(status) = &stop.client_status {
                    let _ = write!(line, " as {status}");
                }
            }
            for entry in allocs {
                let alloc = entry.read();
                // A reconnect update's alloc is a stored alloc as the
                // scheduler read it (not looked up again).
                let stored = match entry {
                    PlanAlloc::Reconnect(_) => {
                        debug_assert!(server.state.allocs.contains_key(&alloc.id));
                        true
                    }
                    PlanAlloc::Whole(_) => server.state.allocs.contains_key(&alloc.id),
                };
                let verb = if stored {
                    if alloc.client_status == ClientStatus::Unknown {
                        "mark-unknown"
                    } else {
                        "update"
                    }
                } else {
                    "place"
                };
                part(&mut line);
                line.push_str(verb);
                line.push(' ');
                line.push_str(&alloc.name);
                line.push('(');
                line.push_str(short(&alloc.id));
                line.push(')');
            }
            for (alloc, _) in preemptions {
                part(&mut line);
                line.push_str("evict ");
                line.push_str(short(alloc));
            }
            lines.push(SharedText::from(line.as_str()));
        }
        lines
    }
}

/// One node's part of a plan ([`Plan::parts`]): its stops, writes and
/// evictions (empty where the plan has none).
pub(super) struct NodePart<'a> {
    /// The node's ID.
    pub node: &'a String,
    /// Its stops.
    pub stops: &'a [PlanStop],
    /// Its writes.
    pub allocs: &'a [PlanAlloc],
    /// Its evictions (alloc ID, preempting alloc ID).
    pub preemptions: &'a [(String, String)],
}

/// [`NodePart`] with the node's writes to take.
struct NodePartMut<'a> {
    /// The node's ID.
    node: &'a String,
    /// Its stops.
    stops: &'a [PlanStop],
    /// Its writes, if it has any.
    allocs: Option<&'a mut Vec<PlanAlloc>>,
    /// Its evictions (alloc ID, preempting alloc ID).
    preemptions: &'a [(String, String)],
}

/// Whether the key `key` of a plan's map is `node`, the smallest of the
/// keys next in the three maps: mostly that very key (one map has the
/// node), else compared.
fn same_node(key: &String, node: &String) -> bool {
    std::ptr::eq(key, node) || key == node
}

/// The list of `node` in a map walked in node order, if it is next there.
fn next_of<'a, V>(
    entries: &mut std::iter::Peekable<std::collections::btree_map::Iter<'a, String, Vec<V>>>,
    node: &String,
) -> &'a [V] {
    entries
        .next_if(|(key, _)| same_node(key, node))
        .map_or(&[], |(_, list)| list)
}

/// The trace detail of a placed alloc: "placed v<version>", then
/// ", replaces <short ID>" and ", preempts <short IDs>" where they apply
/// (written into one buffer: most plans that commit place allocs).
fn placed_detail(alloc: &Allocation) -> String {
    let mut detail = String::with_capacity(48);
    detail.push_str("placed v");
    super::push_decimal(&mut detail, alloc.job_version());
    if !alloc.previous_allocation.is_empty() {
        detail.push_str(", replaces ");
        detail.push_str(short(&alloc.previous_allocation));
    }
    for (n, id) in alloc.preempted_allocations.iter().enumerate() {
        detail.push_str(if n == 0 { ", preempts " } else { "," });
        detail.push_str(short(id));
    }
    detail
}

/// The trace detail of a stop: "desired stop", ", client <status>" where
/// it sets one, and its description in parentheses (one buffer).
fn stop_detail(stop: &PlanStop) -> String {
    let status = stop.client_status.as_ref().map(ClientStatus::as_str);
    let mut detail =
        String::with_capacity(24 + status.map_or(0, str::len) + stop.description.len());
    detail.push_str("desired stop");
    if let Some(status) = status {
        detail.push_str(", client ");
        detail.push_str(status);
    }
    detail.push_str(" (");
    detail.push_str(&stop.description);
    detail.push(')');
    detail
}

/// What applying a plan did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApplyResult {
    /// How many nodes' parts were rejected.
    pub rejected: usize,
    /// Allocs written.
    pub written: usize,
}

impl Server {
    /// `evaluateNodePlan`: whether a node's part of the plan may commit
    /// (the reasons are fixed texts: a refused plan is retried, and its
    /// rejections are many).
    fn node_plan_ok(&self, part: &NodePart<'_>) -> Result<(), Cow<'static, str>> {
        let (node, planned) = (part.node, part.allocs);
        if planned.is_empty() {
            return Ok(());
        }
        // What the checks read of an entry is the same before and after a
        // reconnect update.
        let entries = || planned.iter().map(PlanAlloc::read);
        let Some(record) = self.state.nodes.get(node) else {
            return Err(Cow::Borrowed("node does not exist"));
        };
        match record.node.status {
            NodeStatus::Disconnected => {
                if entries().all(|a| a.client_status == ClientStatus::Unknown) {
                    Ok(())
                } else {
                    Err(Cow::Borrowed(
                        "node is disconnected and contains invalid updates",
                    ))
                }
            }
            NodeStatus::Down => {
                let honour = self.honour_legacy();
                if self.rules.plan_down_accepts_lost
                    && entries().all(|a| {
                        a.client_status == ClientStatus::Lost
                            || (a.client_status == ClientStatus::Unknown
                                && !a.replace_on_disconnect(honour))
                    })
                {
                    Ok(())
                } else {
                    Err(Cow::Borrowed("node is down and contains invalid updates"))
                }
            }
            NodeStatus::Ready => {
                let only_updates = planned.iter().all(|entry| match entry {
                    // A reconnect update's alloc is the stored alloc as the
                    // scheduler read it (the plan is checked before anything
                    // is written), not looked up again.
                    PlanAlloc::Reconnect(update) => {
                        debug_assert!(
                            self.state
                                .allocs
                                .get(&update.alloc.id)
                                .is_some_and(|stored| Rc::ptr_eq(stored, &update.alloc)),
                            "a reconnect update's alloc is not the stored one"
                        );
                        !update.alloc.terminal_status()
                    }
                    PlanAlloc::Whole(alloc) => self
                        .state
                        .allocs
                        .get(&alloc.id)
                        .is_some_and(|existing| !existing.terminal_status()),
                });
                if only_updates {
                    return Ok(());
                }
                if !record.node.ready() {
                    return Err(Cow::Borrowed("node is not eligible"));
                }
                // Resource fit: live allocs, minus the plan's stops and
                // evictions, plus the plan's writes. The live allocs' sum is
                // the node's accounted usage; the plan's stops, evictions
                // and rewrites of live allocs on the node come off it.
                // The IDs taken off, each once (a plan may stop and rewrite
                // the same alloc). A lone write, the usual part, takes
                // nothing off: it got here because its alloc is not stored
                // live (a reconnect update's alloc is the stored one).
                let lone =
                    part.stops.is_empty() && part.preemptions.is_empty() && planned.len() == 1;
                let taken: BTreeSet<&String> = if lone {
                    BTreeSet::new()
                } else {
                    crate::cold_sort::set_from(
                        part.stops
                            .iter()
                            .map(|s| &s.alloc_id)
                            .chain(part.preemptions.iter().map(|(id, _)| id))
                            .chain(entries().map(|a| &a.id)),
                    )
                };
                let (mut cpu, mut mem) = self
                    .state
                    .node_usage
                    .get_by_id(node)
                    .copied()
                    .unwrap_or((0, 0));
                for id in &taken {
                    if let Some(alloc) = self.state.allocs.get(id.as_str())
                        && alloc.node_id == *node
                        && !alloc.terminal_status()
                    {
                        let (c, m) = self.alloc_resources(alloc);
                        cpu = cpu.saturating_sub(c);
                        mem = mem.saturating_sub(m);
                    }
                }
                debug_assert_eq!(
                    (cpu, mem),
                    self.node_allocs(node)
                        .iter()
                        .filter(|a| !a.terminal_status() && !taken.contains(&a.id))
                        .map(|a| self.alloc_resources(a))
                        .fold((0, 0), |(c, m), (ac, am)| (c + ac, m + am)),
                    "the node's accounted usage disagrees with its allocs"
                );
                for alloc in entries() {
                    if alloc.terminal_status() {
                        continue;
                    }
                    let (c, m) = self.alloc_resources(alloc);
                    cpu += c;
                    mem += m;
                }
                if cpu > record.cpu || mem > record.memory_mb {
                    Err(Cow::Borrowed("resources exhausted"))
                } else {
                    Ok(())
                }
            }
            NodeStatus::Initializing => Err(Cow::Borrowed(
                "node is not ready for placements (status initializing)",
            )),
            _ => Err(Cow::Owned(format!(
                "node is not ready for placements (status {})",
                record.node.status
            ))),
        }
    }

    /// The (cpu, memory) an alloc asks for, from its job version's spec.
    pub fn alloc_resources(&self, alloc: &Allocation) -> (u64, u64) {
        let Some(record) = self.state.jobs.get(&alloc.job_id) else {
            return (0, 0);
        };
        let Some(spec) = record.spec(alloc.job_version()) else {
            return (0, 0);
        };
        spec.groups
            .iter()
            .find(|g| g.name == alloc.task_group)
            .map_or((0, 0), super::scheduler::group_need)
    }

    /// The applier's reasons for refusing each node of `plan`, in the
    /// plan's node order ([`Plan::parts`]), when it refuses every one;
    /// `None` when it would commit any node's part.
    pub(super) fn refuses_whole(&self, plan: &Plan) -> Option<Vec<Cow<'static, str>>> {
        plan.parts()
            .map(|part| self.node_plan_ok(&part).err())
            .collect()
    }

    /// Traces the refusal of a node's part (with its reason).
    fn refuse_node(&mut self, node: &str, reason: Cow<'static, str>, out: &mut Vec<ServerEffect>) {
        let reason = match reason {
            Cow::Borrowed(fixed) => self.texts.fixed(fixed),
            Cow::Owned(text) => self.texts.text(&text),
        };
        out.push(ServerEffect::Trace(TraceEvent::PlanRejected {
            node: self.texts.text(node),
            reason,
        }));
    }

    /// Applies a plan every node of which the applier refuses, with no
    /// deployment change ([`Server::refuses_whole`] gave the reasons, in
    /// the plan's node order): what [`Server::apply_plan`] does with it
    /// (the refusals are traced, and the commit of nothing takes an index).
    pub(super) fn apply_refused(
        &mut self,
        plan: &Plan,
        reasons: &[Cow<'static, str>],
        out: &mut Vec<ServerEffect>,
    ) -> ApplyResult {
        for (part, reason) in plan.parts().zip(reasons) {
            // (A fixed reason's copy is a pointer's.)
            self.refuse_node(part.node, reason.clone(), out);
        }
        self.bump_index();
        ApplyResult {
            rejected: reasons.len(),
            written: 0,
        }
    }

    /// Applies a plan: checks each node, writes what commits. The allocs
    /// written are taken out of the plan (moved into the state where the
    /// plan holds the only reference), so an accepted node's list in
    /// `plan.node_allocation` is left empty: a plan that wrote nothing is
    /// left whole.
    pub fn apply_plan(
        &mut self,
        now: Tick,
        eval_id: &str,
        plan: &mut Plan,
        out: &mut Vec<ServerEffect>,
    ) -> ApplyResult {
        let mut result = ApplyResult::default();
        // The refusals are traced in node order, before anything is written
        // (the verdicts are in the plan's node order, [`Plan::parts`]).
        let mut accepted = Vec::with_capacity(
            plan.node_allocation.len() + plan.node_update.len() + plan.node_preemptions.len(),
        );
        for part in plan.parts() {
            match self.node_plan_ok(&part) {
                Ok(()) => accepted.push(true),
                Err(reason) => {
                    self.refuse_node(part.node, reason, out);
                    result.rejected += 1;
                    accepted.push(false);
                }
            }
        }
        let index = self.bump_index();
        let now_time = tick_time(now);
        if let Some(deployment) = &plan.deployment {
            let mut deployment = deployment.clone();
            if deployment.create_index == 0 {
                deployment.create_index = index;
            }
            deployment.modify_index = index;
            self.state
                .deployments
                .insert(deployment.id.clone(), deployment);
        }
        // Deployments the watcher looks at after the write.
        let mut watched: BTreeSet<String> = plan.deployment.iter().map(|d| d.id.clone()).collect();
        for update in &plan.deployment_updates {
            if let Some(deployment) = self.state.deployments.get_mut(&update.deployment_id) {
                deployment.status = update.status.clone();
                deployment.status_description = update.status_description.clone();
                deployment.modify_index = index;
                self.deployment_status_written(&update.deployment_id, out);
                watched.insert(update.deployment_id.clone());
            }
        }
        let mut preempting_jobs: Vec<String> = Vec::new();
        for (part, accepted) in plan.parts_mut().zip(accepted) {
            if !accepted {
                continue;
            }
            let NodePartMut {
                node,
                stops,
                allocs,
                preemptions,
            } = part;
            let mut touched = false;
            // Stops are denormalized from the state before the plan (one
            // entry per stop, in the plan's order).
            let before: Vec<Option<Rc<Allocation>>> = stops
                .iter()
                .map(|s| self.state.allocs.get(&s.alloc_id).cloned())
                .collect();
            let mut planned_allocs = allocs.map(std::mem::take).unwrap_or_default();
            // Updates first, then stops, then evictions, as Nomad's state
            // store does since 2.0.0: a stop wins over an update of the same
            // alloc. (Up to 1.11 the update was written last; the reconcilers
            // of those versions never asked for both.)
            let phases: [u8; 3] = [0, 1, 2];
            for phase in phases {
                match phase {
                    0 => {
                        for planned in std::mem::take(&mut planned_allocs) {
                            let mut alloc = planned.into_alloc();
                            alloc.modify_index = index;
                            alloc.alloc_modify_index = index;
                            alloc.modify_time = now_time;
                            let existing = self.state.allocs.get(&alloc.id).cloned();
                            match &existing {
                                Some(existing) => {
                                    alloc.task_states = existing.task_states.clone();
                                    if !matches!(
                                        alloc.client_status,
                                        ClientStatus::Lost | ClientStatus::Unknown
                                    ) {
                                        alloc.client_status = existing.client_status.clone();
                                        alloc.client_description =
                                            existing.client_description.clone();
                                    }
                                    let detail = if alloc.client_status == ClientStatus::Unknown
                                        && existing.client_status != ClientStatus::Unknown
                                    {
                                        "client unknown (node disconnected)".to_string()
                                    } else if alloc.alloc_states.len() > existing.alloc_states.len()
                                    {
                                        let state = alloc
                                            .alloc_states
                                            .last()
                                            .map_or("", |s| s.value.as_str());
                                        let mut detail = String::with_capacity(24 + state.len());
                                        detail.push_str("alloc state ");
                                        detail.push_str(state);
                                        detail.push_str(" appended");
                                        detail
                                    } else if alloc.job_version() != existing.job_version() {
                                        format!("updated in place to v{}", alloc.job_version())
                                    } else {
                                        "updated".to_string()
                                    };
                                    out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                                        &mut self.texts,
                                        &alloc,
                                        detail,
                                    )));
                                }
                                None => {
                                    alloc.create_index = index;
                                    alloc.create_time = now_time;
                                    alloc.eval_id = eval_id.to_string();
                                    if !alloc.previous_allocation.is_empty()
                                        && let Some(prev) = self
                                            .state
                                            .allocs
                                            .get(&alloc.previous_allocation)
                                            .cloned()
                                    {
                                        let mut prev = (*prev).clone();
                                        prev.next_allocation = alloc.id.clone();
                                        prev.modify_index = index;
                                        self.put_alloc(prev);
                                    }
                                    out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                                        &mut self.texts,
                                        &alloc,
                                        placed_detail(&alloc),
                                    )));
                                }
                            }
                            if let Some(id) = self.update_deployment_with_alloc(
                                index,
                                &mut alloc,
                                existing.as_deref(),
                            ) {
                                watched.insert(id);
                            }
                            self.put_alloc(alloc);
                            result.written += 1;
                            touched = true;
                        }
                    }
                    1 => {
                        for (stop, existing) in stops.iter().zip(&before) {
                            let Some(existing) = existing.clone() else {
                                continue;
                            };
                            let mut alloc = (*existing).clone();
                            alloc.desired_status = DesiredStatus::Stop;
                            alloc.desired_description = stop.description.clone();
                            if let Some(status) = &stop.client_status {
                                alloc.client_status = status.clone();
                            }
                            if !stop.followup_eval_id.is_empty() {
                                alloc.followup_eval_id = stop.followup_eval_id.clone();
                            }
                            alloc.modify_index = index;
                            alloc.alloc_modify_index = index;
                            alloc.modify_time = now_time;
                            out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                                &mut self.texts,
                                &alloc,
                                stop_detail(stop),
                            )));
                            self.put_alloc(alloc);
                            result.written += 1;
                            touched = true;
                        }
                    }
                    _ => {
                        for (victim, by) in preemptions {
                            let Some(existing) = self.state.allocs.get(victim).cloned() else {
                                continue;
                            };
                            if existing.terminal_status() {
                                // Already terminal at apply time: the eviction is dropped.
                                continue;
                            }
                            let mut alloc = (*existing).clone();
                            alloc.desired_status = DesiredStatus::Evict;
                            alloc.desired_description = format!("Preempted by alloc ID {by}");
                            alloc.preempted_by_allocation = by.clone();
                            alloc.modify_index = index;
                            alloc.alloc_modify_index = index;
                            out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                                &mut self.texts,
                                &alloc,
                                format!("desired evict (preempted by {})", short(by)),
                            )));
                            if !preempting_jobs.contains(&alloc.job_id) {
                                preempting_jobs.push(alloc.job_id.clone());
                            }
                            self.put_alloc(alloc);
                            result.written += 1;
                            touched = true;
                        }
                    }
                }
            }
            if touched {
                out.push(ServerEffect::AllocsChanged { node: node.clone() });
            }
        }
        for job_id in preempting_jobs {
            if let Some(job) = self.state.jobs.get(&job_id).map(|r| Rc::clone(&r.job)) {
                self.create_eval(now, &job, "preemption", "", None, "", out);
            }
        }
        self.watch_deployments(now, &watched, out);
        result
    }
}
