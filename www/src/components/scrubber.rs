//! The scrubber: jump to any step of the script; evaluations and failures
//! are marked along it.

use crate::state::{Action, AppState};
use nomad_playground::playground::Command;
use yew::prelude::*;

/// Properties of [`Scrubber`].
#[derive(Properties, PartialEq)]
pub struct ScrubberProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// A range input over the script's steps.
#[component]
pub fn Scrubber(props: &ScrubberProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let view = session.view();
    let on_input = {
        let state = state.clone();
        Callback::from(move |event: InputEvent| {
            let input: web_sys::HtmlInputElement = event.target_unchecked_into();
            if let Ok(step) = input.value().parse() {
                state.dispatch(Action::Core(Command::JumpTo(step)));
            }
        })
    };
    html! {
        <footer class="scrubber" data-testid="scrubber-bar">
            <label for="scrubber" class="muted">{ "step" }</label>
            <input id="scrubber" type="range" data-testid="scrubber" min="0" max={view.steps_total.to_string()}
                   value={view.step.to_string()} oninput={on_input}
                   aria-valuetext={format!("step {} of {}, {}", view.step, view.steps_total, view.time)} />
            <span class="mono">{ format!("{}/{}", view.step, view.steps_total) }</span>
        </footer>
    }
}
