//! The app's one reducer: every user action becomes an [`Action`], and each
//! arm calls one method of the core's [`Playground`].

use nomad_playground::playground::{Command, Playground};
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// What is selected in the inspector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    /// Nothing selected.
    #[default]
    None,
    /// A node, by ID.
    Node(String),
    /// An allocation, by ID.
    Alloc(String),
    /// An evaluation, by ID.
    Eval(String),
}

/// The core session, shared and changed in place: cloning a simulation's
/// history on every click would cost more than the click.
#[derive(Debug, Clone, Default)]
pub struct Session {
    inner: Rc<RefCell<Playground>>,
    revision: u64,
    /// Which run this is: a number no other playground of this page had.
    run: u64,
}

thread_local! {
    /// The last number given to a run (see [`Session::script_key`]).
    static RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A number for a new run, never given before.
fn next_run() -> u64 {
    RUNS.with(|runs| {
        runs.set(runs.get() + 1);
        runs.get()
    })
}

impl PartialEq for Session {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner) && self.revision == other.revision
    }
}

impl Session {
    /// Reads the playground.
    pub fn get(&self) -> std::cell::Ref<'_, Playground> {
        self.inner.borrow()
    }

    fn apply(&mut self, command: Command) {
        self.inner.borrow_mut().apply(command);
        self.revision += 1;
    }

    fn replace(&mut self, playground: Playground) {
        self.inner = Rc::new(RefCell::new(playground));
        self.revision += 1;
        self.run = next_run();
    }

    /// What the script editor's lines depend on: the run and the revision
    /// of its action log (stepping through the history keeps it).
    pub fn script_key(&self) -> (u64, u64) {
        (self.run, self.inner.borrow().log_revision())
    }

    /// Whether both are the same run (not replaced by another scenario
    /// since), whatever happened in it.
    pub fn same_run(&self, other: &Session) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }

    /// Compare mode: replays `leader`'s log up to its step.
    fn follow(&mut self, leader: &Session) {
        self.inner.borrow_mut().follow(&leader.get());
        self.revision += 1;
    }
}

/// The app's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppState {
    /// The core session.
    pub session: Session,
    /// What the inspector shows.
    pub selection: Selection,
    /// Whether auto-play is on.
    pub playing: bool,
    /// Auto-play speed: milliseconds between steps.
    pub speed_ms: u32,
    /// Which screen is shown.
    pub screen: Screen,
    /// A message for the user (a failed load, a refused command).
    pub message: Option<String>,
    /// The importer's warnings about the scenario just imported.
    pub warnings: Vec<String>,
    /// Compare mode: the same log under a second profile (run B), stepped with the session.
    pub compare: Option<Session>,
    /// Whether the details column (lesson, evals, inspector) is open as an
    /// overlay, on screens too narrow to show it beside the diagram.
    pub details_open: bool,
}

/// The screens of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    /// The start page listing the lessons.
    #[default]
    Lessons,
    /// The playground itself.
    Playground,
}

/// Everything the user can do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A command for the core.
    Core(Command),
    /// Select something for the inspector.
    Select(Selection),
    /// Start or stop auto-play.
    TogglePlay,
    /// Stop auto-play.
    Pause,
    /// Change the auto-play interval.
    SetSpeed(u32),
    /// Open a built-in scenario.
    OpenBuiltin(String),
    /// Show the lessons page.
    ShowLessons,
    /// Open a scenario from JSON text (pasted or read from a file).
    OpenJson(String),
    /// Open a session made elsewhere (a link, an import, the autosave),
    /// with the importer's warnings.
    Open(Box<Playground>, Vec<String>),
    /// Show a message; the current work is untouched (a bad link or import).
    ShowMessage(String),
    /// Hide the import warnings.
    DismissWarnings,
    /// Start compare mode against a profile, or stop it (`None`).
    CompareWith(Option<String>),
    /// Open or close the details overlay (narrow screens).
    ShowDetails(bool),
    /// Esc: stop auto-play and close the details overlay.
    Escape,
}

impl AppState {
    /// Shows `playground` on the playground screen, in place of the current
    /// run (compare mode, selection, playback and messages start afresh).
    fn open(&mut self, playground: Playground, warnings: Vec<String>) {
        self.session.replace(playground);
        self.compare = None;
        self.screen = Screen::Playground;
        self.selection = Selection::None;
        self.playing = false;
        self.message = None;
        self.warnings = warnings;
        self.details_open = false;
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::Core(command) => {
                let stops_play = !matches!(command, Command::Step);
                next.session.apply(command);
                next.message = next.session.get().error().map(str::to_string);
                if stops_play || !next.session.get().view().can_step {
                    next.playing = false;
                }
                if let Some(compare) = next.compare.as_mut() {
                    compare.follow(&next.session);
                }
            }
            Action::Select(selection) => {
                // Selecting something shows it in the inspector, which on a
                // narrow screen lives in the overlay.
                next.details_open = selection != Selection::None;
                next.selection = selection;
            }
            Action::ShowDetails(open) => next.details_open = open,
            Action::Escape => {
                next.playing = false;
                next.details_open = false;
            }
            Action::TogglePlay => next.playing = !next.playing,
            Action::Pause => next.playing = false,
            Action::SetSpeed(speed_ms) => next.speed_ms = speed_ms.clamp(50, 5000),
            Action::OpenBuiltin(id) => match Playground::builtin(&id) {
                Ok(playground) => next.open(playground, Vec::new()),
                Err(err) => next.message = Some(format!("could not open {id}: {err}")),
            },
            Action::OpenJson(json) => match Playground::load(&json, None) {
                Ok(playground) => next.open(playground, Vec::new()),
                // The current session is untouched: only the message changes.
                Err(err) => next.message = Some(format!("could not open the scenario: {err}")),
            },
            Action::CompareWith(profile) => {
                next.compare = None;
                if let Some(profile) = profile {
                    match next.session.get().with_profile(&profile) {
                        Ok(playground) => {
                            next.compare = Some(Session {
                                inner: Rc::new(RefCell::new(playground)),
                                revision: 0,
                                run: next_run(),
                            });
                        }
                        Err(err) => next.message = Some(format!("could not compare: {err}")),
                    }
                }
            }
            Action::Open(playground, warnings) => next.open(*playground, warnings),
            Action::ShowMessage(message) => next.message = Some(message),
            Action::DismissWarnings => next.warnings.clear(),
            Action::ShowLessons => {
                next.screen = Screen::Lessons;
                next.playing = false;
            }
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nomad_playground::sim::history::ScriptEdit;

    fn reduce(state: Rc<AppState>, action: Action) -> Rc<AppState> {
        state.reduce(action)
    }

    #[test]
    fn the_script_key_changes_with_the_log_and_the_run_but_not_with_a_step() {
        let state = reduce(
            Rc::new(AppState::default()),
            Action::OpenBuiltin("pr-15068-heartbeat-order".into()),
        );
        let opened = state.session.script_key();
        let state = reduce(state, Action::Core(Command::Step));
        let state = reduce(state, Action::Core(Command::Back));
        assert_eq!(
            state.session.script_key(),
            opened,
            "moving through the history"
        );
        let state = reduce(
            state,
            Action::Core(Command::EditScript(ScriptEdit::Remove { index: 2 })),
        );
        let edited = state.session.script_key();
        assert_ne!(edited, opened, "an edit");
        // Another run of the same scenario, with its log as it was: another key.
        let state = reduce(
            state,
            Action::OpenBuiltin("pr-15068-heartbeat-order".into()),
        );
        assert_ne!(state.session.script_key(), opened);
        assert_ne!(state.session.script_key(), edited);
    }
}
