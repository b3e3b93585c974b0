//! The start page: the built-in scenarios as lessons, and the narration card
//! shown beside a lesson while it plays.

use super::import::ImportPanel;
use super::share::RecoverEntry;
use crate::state::{Action, AppState};
use nomad_playground::playground::BUILTIN_SCENARIOS;
use yew::prelude::*;

/// Properties of [`LessonList`].
#[derive(Properties, PartialEq)]
pub struct LessonListProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// Lists every built-in scenario with its description.
#[component]
pub fn LessonList(props: &LessonListProps) -> Html {
    let text = use_state(String::new);
    let on_input = {
        let text = text.clone();
        Callback::from(move |event: InputEvent| {
            let area: web_sys::HtmlTextAreaElement = event.target_unchecked_into();
            text.set(area.value());
        })
    };
    let open = {
        let state = props.state.clone();
        let text = text.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::OpenJson((*text).clone())))
    };
    html! {
        <section class="lessons" data-testid="lessons" aria-label="Lessons">
            <h1>{ "Learn how Nomad handles disconnected clients" }</h1>
            <p class="muted">{ "Each lesson is a scenario you step through. Switch the Nomad version to watch a bug appear and disappear. The last step hands you the sandbox." }</p>
            <RecoverEntry state={props.state.clone()} />
            <ul class="lesson-list">
                { for BUILTIN_SCENARIOS.iter().map(|scenario| {
                    let (title, description) = summary(scenario.json);
                    let open = {
                        let state = props.state.clone();
                        let id = scenario.id.to_string();
                        Callback::from(move |_: MouseEvent| state.dispatch(Action::OpenBuiltin(id.clone())))
                    };
                    html! {
                        <li class="lesson">
                            <button class="lesson-open" data-testid={format!("lesson-{}", scenario.id)} onclick={open}>
                                <span class="lesson-title">{ title }</span>
                                <span class="lesson-id mono">{ scenario.id }</span>
                            </button>
                            <p>{ description }</p>
                        </li>
                    }
                }) }
            </ul>
            <h2>{ "Open your own scenario" }</h2>
            <p class="muted">{ "Paste a scenario (format v1, see docs/scenario-format.md) and open it." }</p>
            <textarea class="scenario-input" data-testid="scenario-input" aria-label="Scenario JSON" rows="6"
                      value={(*text).clone()} oninput={on_input} spellcheck="false" />
            <div><button data-testid="scenario-open" onclick={open} disabled={text.trim().is_empty()}>{ "Open scenario" }</button></div>
            <ImportPanel state={props.state.clone()} />
        </section>
    }
}

fn summary(json: &str) -> (String, String) {
    let value: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let text = |key: &str| {
        value
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    (text("name"), text("description"))
}

/// Properties of [`LessonCard`].
#[derive(Properties)]
pub struct LessonCardProps {
    /// The app state (read when rendering and in callbacks: the handle
    /// always gives the newest state).
    pub state: UseReducerHandle<AppState>,
    /// The notes shown (the card renders only from them).
    pub deps: Vec<String>,
}

impl PartialEq for LessonCardProps {
    /// Only `deps`: a step that changes nothing the panel shows skips it.
    fn eq(&self, other: &Self) -> bool {
        self.deps == other.deps
    }
}

/// The narration beside the stage: the scenario's description and the
/// notes reached so far, newest first.
#[component]
pub fn LessonCard(props: &LessonCardProps) -> Html {
    let session = props.state.session.get();
    let notes = &session.view().notes;
    html! {
        <section class="panel lesson-card" data-testid="lesson-card" aria-label="Lesson">
            <h2 class="panel-title">{ "Lesson" }</h2>
            <div role="status" aria-live="polite">
                { for notes.iter().rev().take(3).enumerate().map(|(index, note)| html! {
                    <p class={classes!((index > 0).then_some("muted"))} data-testid={if index == 0 { "lesson-note" } else { "" }}>{ note }</p>
                }) }
            </div>
        </section>
    }
}
