//! The playground facade: the one object the UI talks to. It owns a
//! simulation [`Session`], applies the user's commands to it and builds the
//! view model of the current step. The UI never reaches past it, so
//! everything it shows is computed here, natively testable.

use crate::scenario::format::Action;
use crate::sim::history::{Session, SessionError};
use crate::sim::trace::{TraceEntry, TraceEvent, short};
use crate::sim::{AllocSnapshot, Snapshot};
use crate::view::{
    AllocView, CallView, DecisionView, EvalView, JobView, NodeView, PlaygroundView, SeqEventView,
};
use serde::{Deserialize, Serialize};

/// A built-in scenario: its file name (without `.json`) and its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinScenario {
    /// File name without `.json`, e.g. `issue-12680`.
    pub id: &'static str,
    /// The scenario JSON.
    pub json: &'static str,
}

macro_rules! builtin {
    ($($id:literal),* $(,)?) => {
        &[$(BuiltinScenario { id: $id, json: include_str!(concat!("../scenarios/", $id, ".json")) }),*]
    };
}

/// The scenarios in `scenarios/`, in the order the lessons page lists them.
pub const BUILTIN_SCENARIOS: &[BuiltinScenario] = builtin!(
    "disconnect-reconnect-best-score",
    "disconnect-reconnect-keep-original",
    "disconnect-reconnect-keep-replacement",
    "disconnect-reconnect-longest-running",
    "lost-after-expiry",
    "issue-12680",
    "issue-14925",
    "pr-15068-heartbeat-order",
    "pr-15808-register-race",
    "issue-10200-preempt-watcher",
);

/// Looks a built-in scenario up by ID.
pub fn builtin(id: &str) -> Option<&'static BuiltinScenario> {
    BUILTIN_SCENARIOS.iter().find(|s| s.id == id)
}

/// How many trace lines the view carries (the newest); the whole trace is
/// [`Playground::trace_text`].
pub const TRACE_WINDOW: usize = 400;

/// How many sequence-diagram events the view carries (the newest).
pub const SEQUENCE_WINDOW: usize = 150;

/// A command from the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Apply the next action of the script, or handle one event past its end.
    Step,
    /// Process one ready evaluation.
    StepEval,
    /// Go back one step.
    Back,
    /// Go to step N.
    JumpTo(usize),
    /// Back to the start.
    Reset,
    /// Run the rest of the script.
    RunToEnd,
    /// Cut a client's link to the servers.
    CutLink(String),
    /// Restore a client's link to the servers.
    RestoreLink(String),
    /// Switch the Nomad version profile.
    SetProfile(String),
    /// Apply any script action at the current step (in the past, this forks a branch).
    Act(Action),
}

/// The playground: a session and the view of its current step.
#[derive(Debug, Clone)]
pub struct Playground {
    session: Session,
    view: PlaygroundView,
    /// The last command's error, shown to the user.
    error: Option<String>,
}

impl PartialEq for Playground {
    fn eq(&self, other: &Self) -> bool {
        self.view == other.view && self.error == other.error
    }
}

impl Default for Playground {
    fn default() -> Self {
        Self::builtin(BUILTIN_SCENARIOS[0].id).expect("built-in scenarios are valid")
    }
}

impl Playground {
    /// Loads a scenario from JSON; `profile` overrides the scenario's own.
    pub fn load(json: &str, profile: Option<&str>) -> Result<Self, SessionError> {
        let session = Session::load(json, profile)?;
        let mut playground = Playground {
            session,
            view: PlaygroundView::default(),
            error: None,
        };
        playground.refresh();
        Ok(playground)
    }

    /// Loads a built-in scenario by ID.
    pub fn builtin(id: &str) -> Result<Self, SessionError> {
        let scenario = builtin(id).ok_or_else(|| SessionError::UnknownProfile(id.to_string()))?;
        Self::load(scenario.json, None)
    }

    /// The underlying session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The last command's error, if it failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Applies one command and rebuilds the view.
    pub fn apply(&mut self, command: Command) {
        self.error = None;
        match command {
            Command::Step => {
                self.session.step();
            }
            Command::StepEval => {
                self.session.step_eval();
            }
            Command::Back => self.session.back(),
            Command::JumpTo(step) => self.session.jump(step),
            Command::Reset => self.session.reset(),
            Command::RunToEnd => self.session.run_to_end(),
            Command::CutLink(node) => self.session.apply(Action::LinkDown { node }),
            Command::RestoreLink(node) => self.session.apply(Action::LinkUp { node }),
            Command::SetProfile(profile) => {
                if let Err(err) = self.session.set_profile(&profile) {
                    self.error = Some(err.to_string());
                }
            }
            Command::Act(action) => self.session.apply(action),
        }
        self.refresh();
    }

    /// The view of the current step.
    pub fn view(&self) -> &PlaygroundView {
        &self.view
    }

    /// The trace up to the current step, as text (the same bytes natively and in wasm).
    pub fn trace_text(&self) -> String {
        crate::sim::trace::trace_text(&self.session.trace())
    }

    fn refresh(&mut self) {
        self.view = build_view(&self.session);
    }
}

fn time_label(tick: u64) -> String {
    format!("t={}.{:03}s", tick / 1000, tick % 1000)
}

fn opt(id: &str) -> Option<String> {
    (!id.is_empty()).then(|| id.to_string())
}

/// Builds the whole view of a session's current step.
pub fn build_view(session: &Session) -> PlaygroundView {
    let snapshot = session.snapshot();
    // Borrow the entries: the trace grows with every step, so nothing here may copy or format
    // all of it (only the windows below are formatted).
    let entries: Vec<&TraceEntry> = session
        .records()
        .iter()
        .flat_map(|record| record.entries.iter())
        .collect();
    let trace_from = entries.len().saturating_sub(TRACE_WINDOW);
    let scenario = session.scenario();
    let mut profiles: Vec<String> = crate::profile::profile_names()
        .into_iter()
        .map(str::to_string)
        .collect();
    if !profiles.contains(&snapshot.profile) {
        profiles.push(snapshot.profile.clone());
    }
    PlaygroundView {
        scenario: scenario.name.clone(),
        profile: snapshot.profile.clone(),
        profiles,
        time: time_label(snapshot.tick),
        step: session.cursor(),
        steps_total: session.actions().len(),
        can_step: session.cursor() < session.actions().len() || snapshot.next_event.is_some(),
        nodes: node_views(&snapshot),
        jobs: job_views(session),
        evals: eval_views(session, &snapshot, &entries),
        calls: call_views(&snapshot),
        sequence: sequence(&entries, &snapshot),
        trace: entries[trace_from..]
            .iter()
            .map(|entry| entry.line())
            .collect(),
        trace_hidden: trace_from,
        violations: entries
            .iter()
            .filter_map(|entry| match &entry.event {
                TraceEvent::Violation { detail } => Some(format!("step {}: {detail}", entry.step)),
                TraceEvent::Assertion { ok: false, detail } => {
                    Some(format!("step {}: assertion failed: {detail}", entry.step))
                }
                _ => None,
            })
            .collect(),
        notes: notes(session),
    }
}

fn alloc_view(alloc: &AllocSnapshot) -> AllocView {
    AllocView {
        id: alloc.id.clone(),
        short_id: short(&alloc.id).to_string(),
        name: alloc.name.clone(),
        name_index: alloc.name_index,
        node_id: alloc.node.clone(),
        client_status: alloc.client_status.clone(),
        desired_status: alloc.desired_status.clone(),
        job_version: alloc.job_version,
        alloc_states: alloc
            .alloc_states
            .iter()
            .map(|(value, tick)| (value.clone(), time_label(*tick)))
            .collect(),
        previous: opt(&alloc.previous),
        next: opt(&alloc.next),
        followup_eval: opt(&alloc.followup_eval),
        tasks: alloc
            .task_states
            .iter()
            .map(|(task, state)| (task.clone(), state.clone(), 0))
            .collect(),
    }
}

fn job_views(session: &Session) -> Vec<JobView> {
    session
        .sim()
        .server
        .state
        .jobs
        .values()
        .map(|record| {
            let job = &record.job;
            JobView {
                id: job.id.clone(),
                job_type: job.job_type.to_string(),
                version: job.version,
                stopped: job.stop,
                groups: job
                    .task_groups
                    .iter()
                    .map(|group| (group.name.clone(), u64::from(group.count)))
                    .collect(),
            }
        })
        .collect()
}

fn node_views(snapshot: &Snapshot) -> Vec<NodeView> {
    // Group the allocations by node in one pass (allocs are in ID order, so each node's stay so).
    let mut allocs_by_node: std::collections::BTreeMap<&str, Vec<AllocView>> =
        std::collections::BTreeMap::new();
    for alloc in &snapshot.allocs {
        allocs_by_node
            .entry(alloc.node.as_str())
            .or_default()
            .push(alloc_view(alloc));
    }
    snapshot
        .nodes
        .iter()
        .map(|node| NodeView {
            id: node.id.clone(),
            name: node.name.clone(),
            status: node.status.clone(),
            link_up: node.link_up,
            ttl_left_ms: node
                .ttl_deadline
                .map(|deadline| deadline.saturating_sub(snapshot.tick)),
            eligible: node.eligible,
            draining: node.draining,
            allocs: allocs_by_node.remove(node.id.as_str()).unwrap_or_default(),
        })
        .collect()
}

fn eval_views(session: &Session, snapshot: &Snapshot, entries: &[&TraceEntry]) -> Vec<EvalView> {
    // The last processing of each eval, found in one pass over the trace.
    let mut processed_by_eval = std::collections::BTreeMap::new();
    for entry in entries {
        if let TraceEvent::EvalProcessed {
            eval,
            desired_tg_updates,
            reasons,
            plan,
            ..
        } = &entry.event
        {
            processed_by_eval.insert(eval.as_str(), (desired_tg_updates, reasons, plan));
        }
    }
    snapshot
        .evals
        .iter()
        .map(|eval| {
            let processed = processed_by_eval.get(eval.id.as_str()).copied();
            let (desired_tg_updates, decisions) = match processed {
                Some((updates, reasons, plan)) => (
                    updates
                        .iter()
                        .map(|(group, u)| {
                            let counters = [
                                ("Ignore", u.ignore),
                                ("Place", u.place),
                                ("Migrate", u.migrate),
                                ("Stop", u.stop),
                                ("InPlaceUpdate", u.in_place_update),
                                ("DestructiveUpdate", u.destructive_update),
                                ("Canary", u.canary),
                                ("Preemptions", u.preemptions),
                                ("Disconnect", u.disconnect),
                                ("Reconnect", u.reconnect),
                                ("RescheduleNow", u.reschedule_now),
                                ("RescheduleLater", u.reschedule_later),
                            ];
                            (
                                group.clone(),
                                counters
                                    .iter()
                                    .map(|(name, value)| ((*name).to_string(), *value))
                                    .collect(),
                            )
                        })
                        .collect(),
                    reasons
                        .iter()
                        .map(|reason| {
                            let alloc_short = short(&reason.alloc);
                            let effect: Vec<&str> = plan
                                .iter()
                                .filter(|item| {
                                    !alloc_short.is_empty() && item.contains(alloc_short)
                                })
                                .map(String::as_str)
                                .collect();
                            DecisionView {
                                alloc_id: reason.alloc.clone(),
                                alloc_name: reason.name.clone(),
                                node_id: snapshot
                                    .allocs
                                    .iter()
                                    .find(|a| a.id == reason.alloc)
                                    .map(|a| a.node.clone())
                                    .unwrap_or_default(),
                                set: reason.set.clone(),
                                why: reason.reason.clone(),
                                effect: if effect.is_empty() {
                                    "none".to_string()
                                } else {
                                    effect.join("; ")
                                },
                            }
                        })
                        .collect(),
                ),
                None => (Vec::new(), Vec::new()),
            };
            EvalView {
                id: eval.id.clone(),
                short_id: short(&eval.id).to_string(),
                job_id: eval.job.clone(),
                node_id: opt(&eval.node),
                triggered_by: eval.trigger.clone(),
                status: eval.status.clone(),
                priority: session
                    .sim()
                    .server
                    .state
                    .evals
                    .get(&eval.id)
                    .map_or(0, |record| u32::try_from(record.eval.priority).unwrap_or(0)),
                wait_until: eval.wait_until.map(time_label),
                desired_tg_updates,
                decisions,
            }
        })
        .collect()
}

fn call_views(snapshot: &Snapshot) -> Vec<CallView> {
    snapshot
        .calls
        .iter()
        .flat_map(|(node, calls)| {
            calls.iter().map(move |call| CallView {
                id: format!("{}#{}", call.code.to_ascii_lowercase(), call.id),
                call: call.id.to_string(),
                node_id: node.clone(),
                code: call.code.clone(),
                rpc: call.rpc.clone(),
                detail: format!("sent {}", time_label(call.sent_at)),
                fate: if call.held { "held" } else { "in-flight" }.to_string(),
            })
        })
        .collect()
}

/// The arrows and notes of the sequence diagram, one per interesting trace entry.
fn sequence(entries: &[&TraceEntry], snapshot: &Snapshot) -> Vec<SeqEventView> {
    let lane = |node: &str| {
        snapshot
            .nodes
            .iter()
            .find(|n| n.id == node || n.name == node)
            .map_or_else(|| node.to_string(), |n| n.id.clone())
    };
    let mut events: Vec<SeqEventView> = entries
        .iter()
        .rev()
        .filter_map(|entry| {
            let (from, to, label, kind) = match &entry.event {
                TraceEvent::CallSent {
                    node, call, rpc, ..
                } => (
                    lane(node),
                    "leader".to_string(),
                    format!("#{call} {rpc}"),
                    "call",
                ),
                TraceEvent::CallHandled {
                    node,
                    call,
                    rpc,
                    accepted,
                    detail,
                } => (
                    "leader".to_string(),
                    lane(node),
                    format!(
                        "{} #{call} {rpc}{}",
                        if *accepted { "✓" } else { "✕" },
                        if *accepted {
                            String::new()
                        } else {
                            format!(": {detail}")
                        }
                    ),
                    if *accepted { "reply-ok" } else { "reply-err" },
                ),
                TraceEvent::CallFailed {
                    node, call, rpc, ..
                } => (
                    lane(node),
                    lane(node),
                    format!("✕ #{call} {rpc} failed"),
                    "note",
                ),
                TraceEvent::NodeStatus { node, from, to, .. } => (
                    "leader".to_string(),
                    "leader".to_string(),
                    format!("{} {from} → {to}", lane(node)),
                    "status",
                ),
                TraceEvent::HeartbeatMissed { node, .. } => (
                    "leader".to_string(),
                    "leader".to_string(),
                    format!("TTL expired: {}", lane(node)),
                    "status",
                ),
                TraceEvent::EvalCreated { eval, trigger, .. } => (
                    "leader".to_string(),
                    "broker".to_string(),
                    format!("◆ {} {trigger}", short(eval)),
                    "eval",
                ),
                TraceEvent::EvalProcessed {
                    eval,
                    trigger,
                    status,
                    ..
                } => (
                    "broker".to_string(),
                    "broker".to_string(),
                    format!("reconcile {} {trigger} → {status}", short(eval)),
                    "eval",
                ),
                TraceEvent::Link { node, detail } => {
                    (lane(node), lane(node), format!("link {detail}"), "note")
                }
                _ => return None,
            };
            Some(SeqEventView {
                step: entry.step,
                time: time_label(entry.tick),
                from,
                to,
                label,
                kind: kind.to_string(),
            })
        })
        .take(SEQUENCE_WINDOW)
        .collect();
    events.reverse();
    events
}

/// The narration of a guided scenario: its description, then every `note`
/// action up to the current step.
fn notes(session: &Session) -> Vec<String> {
    let mut notes: Vec<String> = session.scenario().description.iter().cloned().collect();
    notes.extend(
        session.actions()[..session.cursor()]
            .iter()
            .filter_map(|action| match action {
                Action::Note { text } => Some(text.clone()),
                _ => None,
            }),
    );
    notes
}
