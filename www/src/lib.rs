//! The nomad-playground browser app (Yew). It renders view models that the
//! core computes and dispatches actions back; it makes no scheduling
//! decision of its own.

mod components;
pub mod sharing;
pub mod state;
pub mod storage;
pub mod tools;
pub mod worker;

use components::calls::CallDock;
use components::cluster::ClusterPanel;
use components::compare::ComparePanel;
use components::evals::EvalQueue;
use components::explore::ExplorePanel;
use components::inspector::Inspector;
use components::jobs::JobsPanel;
use components::lessons::{LessonCard, LessonList};
use components::script::ScriptEditor;
use components::scrubber::Scrubber;
use components::sequence::SequenceDiagram;
use components::share::ShareBar;
use components::topbar::TopBar;
use components::tracelog::TraceLog;
use nomad_playground::playground::Command;
use state::{Action, AppState, Screen};
use yew::prelude::*;

/// Maps a key press outside text fields to an action (the keyboard model of
/// the UI brief: Space play/pause, → step, Shift+→ step eval, ← back, Home
/// reset, `.` and `,` step forward and back).
pub fn key_action(key: &str, shift: bool) -> Option<Action> {
    match (key, shift) {
        (" ", _) => Some(Action::TogglePlay),
        ("ArrowRight", false) | (".", _) => Some(Action::Core(Command::Step)),
        ("ArrowRight", true) => Some(Action::Core(Command::StepEval)),
        ("ArrowLeft", _) | (",", _) => Some(Action::Core(Command::Back)),
        ("Home", _) => Some(Action::Core(Command::Reset)),
        ("End", _) => Some(Action::Core(Command::RunToEnd)),
        ("Escape", _) => Some(Action::Escape),
        _ => None,
    }
}

/// The root component.
#[component]
pub fn App() -> Html {
    let state = use_reducer(|| {
        sharing::startup(AppState {
            speed_ms: 500,
            ..AppState::default()
        })
    });
    let dark = use_state(|| None::<bool>);

    #[cfg(target_arch = "wasm32")]
    {
        browser::use_keyboard(state.clone());
        browser::use_autoplay(state.clone());
        browser::use_theme(*dark);
        sharing::use_autosave(state.clone());
        sharing::use_hash_links(state.clone());
        sharing::use_file_drop(state.clone());
    }

    let on_theme = {
        let dark = dark.clone();
        Callback::from(move |()| dark.set(Some(!dark.unwrap_or(false))))
    };
    let on_home = {
        let state = state.clone();
        Callback::from(move |()| state.dispatch(Action::ShowLessons))
    };
    let show_details = |open: bool| {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::ShowDetails(open)))
    };
    // Esc inside the overlay closes it, whatever has the focus there.
    let on_details_key = {
        let state = state.clone();
        Callback::from(move |event: KeyboardEvent| {
            if event.key() == "Escape" && !event.default_prevented() && state.details_open {
                event.prevent_default();
                state.dispatch(Action::ShowDetails(false));
            }
        })
    };
    let message = state.message.as_ref().map(|message| {
        html! {
            <div class="message" role="alert" data-testid="message">{ message }</div>
        }
    });
    // What the panels that need not change at every step render from.
    let session = state.session.get();
    let view = session.view();
    let compare_deps = (
        state.compare.clone(),
        state.compare.is_some().then(|| state.session.clone()),
        view.profile.clone(),
        view.profiles.clone(),
    );
    let inspector_deps = (state.selection != crate::state::Selection::None)
        .then(|| (state.session.clone(), state.selection.clone()));
    let body = match state.screen {
        Screen::Lessons => {
            html! { <main class="lessons-page"><LessonList state={state.clone()} /></main> }
        }
        Screen::Playground => html! {
            <main class="main">
                <div class="column-left">
                    <ClusterPanel state={state.clone()} />
                    <JobsPanel state={state.clone()} deps={view.jobs.clone()} />
                    <ScriptEditor state={state.clone()} />
                </div>
                <div class="column-center">
                    <ComparePanel state={state.clone()} deps={compare_deps} />
                    <SequenceDiagram state={state.clone()} />
                    <CallDock state={state.clone()} />
                    <TraceLog state={state.clone()} />
                </div>
                <button class="details-toggle" data-testid="details-toggle" aria-expanded={state.details_open.to_string()}
                        aria-controls="details" onclick={show_details(!state.details_open)}>
                    { if state.details_open { "Details ▸" } else { "◂ Details" } }
                </button>
                <aside id="details" class={classes!("column-right", state.details_open.then_some("open"))}
                       data-testid="details" aria-label="Details" onkeydown={on_details_key}>
                    <button class="details-close" data-testid="details-close" aria-label="Close details"
                            onclick={show_details(false)}>{ "✕ Close" }</button>
                    <LessonCard state={state.clone()} deps={view.notes.clone()} />
                    <EvalQueue state={state.clone()} deps={(view.evals.clone(), state.selection.clone())} />
                    <Inspector state={state.clone()} deps={inspector_deps} />
                    <ExplorePanel state={state.clone()} deps={(view.profile.clone(), view.profiles.clone())} />
                </aside>
            </main>
        },
    };
    html! {
        <div class="app">
            <TopBar state={state.clone()} {on_theme} {on_home} />
            { for message }
            { if state.screen == Screen::Playground { html! { <ShareBar state={state.clone()} /> } } else { html! {} } }
            { body }
            { if state.screen == Screen::Playground { html! { <Scrubber state={state.clone()} /> } } else { html! {} } }
        </div>
    }
}

#[cfg(target_arch = "wasm32")]
mod browser {
    //! Browser-only hooks: the global keyboard, the auto-play timer and the theme.

    use super::key_action;
    use crate::state::{Action, AppState};
    use nomad_playground::playground::Command;
    use wasm_bindgen::JsCast;
    use yew::prelude::*;

    #[hook]
    pub fn use_keyboard(state: UseReducerHandle<AppState>) {
        use_effect_with((), move |_| {
            let listener = gloo::events::EventListener::new_with_options(
                &gloo::utils::document(),
                "keydown",
                gloo::events::EventListenerOptions::enable_prevent_default(),
                move |event| {
                    let Some(event) = event.dyn_ref::<web_sys::KeyboardEvent>() else {
                        return;
                    };
                    if event.ctrl_key() || event.meta_key() || event.alt_key() {
                        return;
                    }
                    // A widget that handled the key itself (a picked-up call chip) keeps it.
                    if event.default_prevented() {
                        return;
                    }
                    // Keys belong to the focused widget when it is a form control or a button.
                    if let Some(target) = event
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    {
                        let tag = target.tag_name().to_ascii_lowercase();
                        // (Esc on a button has no meaning of its own: it still closes the overlay.)
                        if matches!(tag.as_str(), "input" | "textarea" | "select")
                            || (tag == "button" && event.key() != "Escape")
                        {
                            return;
                        }
                    }
                    if let Some(action) = key_action(&event.key(), event.shift_key()) {
                        event.prevent_default();
                        state.dispatch(action);
                    }
                },
            );
            move || drop(listener)
        });
    }

    #[hook]
    pub fn use_autoplay(state: UseReducerHandle<AppState>) {
        let playing = state.playing;
        let speed_ms = state.speed_ms;
        use_effect_with((playing, speed_ms), move |(playing, speed_ms)| {
            let interval = playing.then(|| {
                gloo::timers::callback::Interval::new(*speed_ms, move || {
                    state.dispatch(Action::Core(Command::Step));
                })
            });
            move || drop(interval)
        });
    }

    #[hook]
    pub fn use_theme(dark: Option<bool>) {
        use_effect_with(dark, move |dark| {
            if let Some(root) = gloo::utils::document().document_element() {
                match dark {
                    Some(true) => {
                        let _ = root.set_attribute("data-theme", "dark");
                    }
                    Some(false) => {
                        let _ = root.set_attribute("data-theme", "light");
                    }
                    None => {
                        let _ = root.remove_attribute("data-theme");
                    }
                }
            }
        });
    }
}
