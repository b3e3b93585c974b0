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
            }
            Action::Select(selection) => next.selection = selection,
            Action::TogglePlay => next.playing = !next.playing,
            Action::Pause => next.playing = false,
            Action::SetSpeed(speed_ms) => next.speed_ms = speed_ms.clamp(50, 5000),
            Action::OpenBuiltin(id) => match Playground::builtin(&id) {
                Ok(playground) => {
                    next.session.replace(playground);
                    next.screen = Screen::Playground;
                    next.selection = Selection::None;
                    next.playing = false;
                    next.message = None;
                }
                Err(err) => next.message = Some(format!("could not open {id}: {err}")),
            },
            Action::OpenJson(json) => match Playground::load(&json, None) {
                Ok(playground) => {
                    next.session.replace(playground);
                    next.screen = Screen::Playground;
                    next.selection = Selection::None;
                    next.playing = false;
                    next.message = None;
                }
                // The current session is untouched: only the message changes.
                Err(err) => next.message = Some(format!("could not open the scenario: {err}")),
            },
            Action::ShowLessons => {
                next.screen = Screen::Lessons;
                next.playing = false;
            }
        }
        Rc::new(next)
    }
}
