//! Time travel: a session keeps the action log, a full checkpoint of the
//! world every N steps and the trace of every step, so it can jump to any
//! step by restoring the nearest checkpoint and replaying (determinism
//! makes the replay exact). Applying an action in the past starts a new
//! branch; the old one is kept.

use super::trace::{AllocSubjects, TraceEntry, TraceEvent};
use super::{ActionError, Sim, Snapshot};
use crate::profile::Profile;
use crate::scenario::ScenarioError;
use crate::scenario::format::{Action, Scenario};
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// The trace of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step number (1-based: step n applied action n-1; 0 is the setup).
    pub step: usize,
    /// The action applied (none for the setup).
    pub action: Option<Action>,
    /// Tick after the step.
    pub tick: u64,
    /// What happened.
    pub entries: Vec<TraceEntry>,
    /// The action's error, if it failed.
    pub error: Option<String>,
}

/// A branch left behind by an edit in the past.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The step where the new branch forked off.
    pub forked_at: usize,
    /// The old branch's whole action log.
    pub actions: Vec<Action>,
}

/// A playable session over one scenario.
#[derive(Debug, Clone)]
pub struct Session {
    scenario: Scenario,
    profile: Profile,
    actions: Vec<Action>,
    cursor: usize,
    sim: Sim,
    checkpoints: Vec<(usize, Rc<Sim>)>,
    records: Vec<StepRecord>,
    branches: Vec<Branch>,
    /// The allocs the kept reasons are about, one copy each.
    subjects: AllocSubjects,
}

/// A session could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The scenario is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The profile is unknown.
    #[error("unknown profile {0:?}")]
    UnknownProfile(String),
}

impl Session {
    /// Parses a scenario and builds its cluster at step 0. `profile`
    /// overrides the scenario's own.
    pub fn load(json: &str, profile: Option<&str>) -> Result<Session, SessionError> {
        let scenario = crate::scenario::parse(json)?;
        Session::new(scenario, profile)
    }

    /// A session over a parsed scenario.
    pub fn new(scenario: Scenario, profile: Option<&str>) -> Result<Session, SessionError> {
        let name = profile
            .map(str::to_string)
            .or_else(|| scenario.profile.clone())
            .unwrap_or_else(|| "latest".to_string());
        let profile = crate::profile::profile(&name).ok_or(SessionError::UnknownProfile(name))?;
        let mut sim = Sim::new(&scenario, profile.clone());
        let mut subjects = AllocSubjects::default();
        let mut entries = sim.drain_trace();
        for entry in &mut entries {
            subjects.share(&mut entry.event);
        }
        let actions = scenario.script.clone();
        let records = vec![StepRecord {
            step: 0,
            action: None,
            tick: sim.tick,
            entries,
            error: None,
        }];
        Ok(Session {
            checkpoints: vec![(0, Rc::new(sim.clone()))],
            scenario,
            profile,
            actions,
            cursor: 0,
            sim,
            records,
            branches: Vec::new(),
            subjects,
        })
    }

    /// The world at the current step.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// The state as the UI renders it.
    pub fn snapshot(&self) -> Snapshot {
        self.sim.snapshot()
    }

    /// The current step (number of actions applied).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The action log of the current branch.
    pub fn actions(&self) -> &[Action] {
        &self.actions
    }

    /// Branches left behind by edits.
    pub fn branches(&self) -> &[Branch] {
        &self.branches
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Trace records of steps 0..=cursor (the ones computed so far on this
    /// branch may reach further).
    pub fn records(&self) -> &[StepRecord] {
        &self.records[..=self.cursor.min(self.records.len() - 1)]
    }

    /// Every trace entry up to the current step.
    pub fn trace(&self) -> Vec<TraceEntry> {
        self.records()
            .iter()
            .flat_map(|r| r.entries.iter().cloned())
            .collect()
    }

    fn apply_next(&mut self) -> bool {
        let Some(action) = self.actions.get(self.cursor).cloned() else {
            return false;
        };
        self.cursor += 1;
        self.sim.step_index = self.cursor;
        let error = self.sim.apply(&action).err();
        if let Some(error) = &error {
            self.sim.pending_trace.push(TraceEntry {
                step: self.cursor,
                tick: self.sim.tick,
                event: TraceEvent::Violation {
                    detail: format!("action failed: {error}").into(),
                },
            });
        }
        for violation in super::check::check_cached(&mut self.sim) {
            self.sim.pending_trace.push(TraceEntry {
                step: self.cursor,
                tick: self.sim.tick,
                event: TraceEvent::Violation {
                    detail: violation.into(),
                },
            });
        }
        // The history keeps every step's entries: no spare capacity, and
        // one copy of each alloc their reasons name.
        let mut entries = self.sim.drain_trace();
        for entry in &mut entries {
            self.subjects.share(&mut entry.event);
        }
        let record = StepRecord {
            step: self.cursor,
            action: Some(action),
            tick: self.sim.tick,
            entries,
            error: error.map(|e: ActionError| e.to_string()),
        };
        if self.records.len() > self.cursor {
            self.records[self.cursor] = record;
        } else {
            self.records.push(record);
        }
        let every = self.sim.settings.checkpoint_every;
        if self.cursor.is_multiple_of(every)
            && !self.checkpoints.iter().any(|(s, _)| *s == self.cursor)
        {
            self.checkpoints
                .push((self.cursor, Rc::new(self.sim.clone())));
        }
        true
    }

    /// Applies the next action of the log; past its end, handles one event
    /// (recorded as a `step` action). Returns whether anything happened.
    pub fn step(&mut self) -> bool {
        if self.cursor < self.actions.len() {
            return self.apply_next();
        }
        if self.sim.queue.is_empty() {
            return false;
        }
        self.actions.push(Action::Step {});
        self.apply_next()
    }

    /// Processes one ready eval (recorded as a `process_eval` action).
    pub fn step_eval(&mut self) -> bool {
        self.apply(Action::ProcessEval { eval: None });
        true
    }

    /// Runs the rest of the log.
    pub fn run_to_end(&mut self) {
        while self.cursor < self.actions.len() {
            self.apply_next();
        }
    }

    /// Applies an action at the current step. In the past, this forks: the
    /// old log is kept as a branch and the new one continues from here.
    pub fn apply(&mut self, action: Action) {
        if self.cursor < self.actions.len() {
            self.branches.push(Branch {
                forked_at: self.cursor,
                actions: self.actions.clone(),
            });
            self.actions.truncate(self.cursor);
            self.records.truncate(self.cursor + 1);
            let cursor = self.cursor;
            self.checkpoints.retain(|(step, _)| *step <= cursor);
        }
        self.actions.push(action);
        self.apply_next();
    }

    /// Goes to step `n` (clamped to the log) by restoring the nearest
    /// checkpoint at or before it and replaying.
    pub fn jump(&mut self, n: usize) {
        let n = n.min(self.actions.len());
        if n >= self.cursor {
            while self.cursor < n {
                self.apply_next();
            }
            return;
        }
        let (step, checkpoint) = self
            .checkpoints
            .iter()
            .filter(|(step, _)| *step <= n)
            .max_by_key(|(step, _)| *step)
            .cloned()
            .unwrap_or_else(|| (0, Rc::clone(&self.checkpoints[0].1)));
        self.sim = (*checkpoint).clone();
        self.cursor = step;
        while self.cursor < n {
            self.apply_next();
        }
    }

    /// One step back.
    pub fn back(&mut self) {
        if self.cursor > 0 {
            self.jump(self.cursor - 1);
        }
    }

    /// Back to step 0.
    pub fn reset(&mut self) {
        self.jump(0);
    }

    /// Switches to another profile: rebuilds the world and replays the same
    /// actions up to the current step.
    pub fn set_profile(&mut self, name: &str) -> Result<(), SessionError> {
        let cursor = self.cursor;
        let actions = self.actions.clone();
        let branches = std::mem::take(&mut self.branches);
        let mut fresh = Session::new(self.scenario.clone(), Some(name))?;
        fresh.actions = actions;
        fresh.branches = branches;
        fresh.jump(cursor);
        *self = fresh;
        Ok(())
    }

    /// Rough bytes held by checkpoints and records (for the bench report).
    pub fn checkpoint_count(&self) -> usize {
        self.checkpoints.len()
    }

    /// The checkpoints: (step, the world after it), in step order (for the
    /// memory bench's breakdown).
    pub fn checkpoints(&self) -> impl Iterator<Item = (usize, &Rc<Sim>)> {
        self.checkpoints.iter().map(|(step, sim)| (*step, sim))
    }
}

/// An edit of the action log in the script editor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ScriptEdit {
    /// Insert an action before position `index` (`index` = the log's length appends).
    Insert {
        /// Position of the new action.
        index: usize,
        /// The action.
        action: Action,
    },
    /// Replace the action at `index`.
    Replace {
        /// Position of the action.
        index: usize,
        /// The new action.
        action: Action,
    },
    /// Remove the action at `index`.
    Remove {
        /// Position of the action.
        index: usize,
    },
    /// Move the action at `from` so that it ends up at position `to`.
    Move {
        /// Current position.
        from: usize,
        /// New position.
        to: usize,
    },
}

/// An edit of the action log could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptEditError {
    /// The position is past the end of the log.
    #[error("no action at position {index} (the script has {len})")]
    OutOfRange {
        /// The position asked for.
        index: usize,
        /// The log's length.
        len: usize,
    },
    /// There is no such branch.
    #[error("no branch {index} (there are {count})")]
    NoBranch {
        /// The branch asked for.
        index: usize,
        /// How many branches there are.
        count: usize,
    },
}

impl Session {
    /// Edits the action log. An edit at a step already applied (before the
    /// cursor) forks: the old log is kept as a branch, and the new one is
    /// re-simulated up to the same step (or its end, if it got shorter).
    /// An edit of the future changes the log in place.
    pub fn edit_script(&mut self, edit: ScriptEdit) -> Result<(), ScriptEditError> {
        let len = self.actions.len();
        let check = |index: usize, limit: usize| {
            if index < limit {
                Ok(())
            } else {
                Err(ScriptEditError::OutOfRange { index, len })
            }
        };
        let mut actions = self.actions.clone();
        let first_changed = match edit {
            ScriptEdit::Insert { index, action } => {
                check(index, len + 1)?;
                actions.insert(index, action);
                index
            }
            ScriptEdit::Replace { index, action } => {
                check(index, len)?;
                actions[index] = action;
                index
            }
            ScriptEdit::Remove { index } => {
                check(index, len)?;
                actions.remove(index);
                index
            }
            ScriptEdit::Move { from, to } => {
                check(from, len)?;
                check(to, len)?;
                let action = actions.remove(from);
                actions.insert(to, action);
                from.min(to)
            }
        };
        if actions == self.actions {
            return Ok(());
        }
        if first_changed < self.cursor {
            self.branches.push(Branch {
                forked_at: first_changed,
                actions: self.actions.clone(),
            });
        }
        self.replace_log(actions, first_changed);
        Ok(())
    }

    /// Makes branch `index` the current log; the current log takes its
    /// place in the list, so switching again comes back. The session stays
    /// at the same step (or the branch's end, if it is shorter).
    pub fn switch_branch(&mut self, index: usize) -> Result<(), ScriptEditError> {
        let count = self.branches.len();
        let branch = self
            .branches
            .get_mut(index)
            .ok_or(ScriptEditError::NoBranch { index, count })?;
        let actions = std::mem::replace(&mut branch.actions, self.actions.clone());
        let common = actions
            .iter()
            .zip(&self.actions)
            .take_while(|(a, b)| a == b)
            .count();
        self.replace_log(actions, common);
        Ok(())
    }

    /// Swaps in a new log whose first `first_changed` actions equal the old
    /// one's: forgets what was computed past them and replays up to the same step.
    fn replace_log(&mut self, actions: Vec<Action>, first_changed: usize) {
        let target = self.cursor.min(actions.len());
        self.actions = actions;
        self.records.truncate(first_changed + 1);
        self.checkpoints.retain(|(step, _)| *step <= first_changed);
        if self.cursor > first_changed {
            self.jump(first_changed);
        }
        self.jump(target);
    }
}
