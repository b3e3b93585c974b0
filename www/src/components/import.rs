//! The import panel: bring in Nomad API JSON (a job, allocations, nodes,
//! evaluations, files of a `nomad operator debug` bundle), an HCL jobspec,
//! a scenario or a `v1.` link, by pasting, with the file picker, or by
//! dropping a file here (or anywhere on the page). The core's importer turns
//! it into a scenario; its errors and warnings name the input and field.

use crate::sharing;
use crate::state::{Action, AppState};
use yew::prelude::*;

/// Properties of [`ImportPanel`].
#[derive(Properties, PartialEq)]
pub struct ImportPanelProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The import panel.
#[component]
pub fn ImportPanel(props: &ImportPanelProps) -> Html {
    let text = use_state(String::new);
    let dragging = use_state(|| false);
    let state = props.state.clone();
    let on_input = {
        let text = text.clone();
        Callback::from(move |event: InputEvent| {
            let area: web_sys::HtmlTextAreaElement = event.target_unchecked_into();
            text.set(area.value());
        })
    };
    let on_import = {
        let state = state.clone();
        let text = text.clone();
        Callback::from(move |_: MouseEvent| {
            sharing::import(&state, "pasted", &text);
        })
    };
    #[cfg(target_arch = "wasm32")]
    let on_text = {
        let state = state.clone();
        Callback::from(move |(name, text): (String, String)| {
            sharing::import(&state, &name, &text);
        })
    };
    let on_file = {
        #[cfg(target_arch = "wasm32")]
        let on_text = on_text.clone();
        Callback::from(move |event: Event| {
            let input: web_sys::HtmlInputElement = event.target_unchecked_into();
            #[cfg(target_arch = "wasm32")]
            if let Some(file) = input.files().and_then(|files| files.get(0)) {
                crate::storage::read_file(file, on_text.clone());
            }
            // Picking the same file again fires `change` again.
            input.set_value("");
        })
    };
    let on_dragover = {
        let dragging = dragging.clone();
        Callback::from(move |event: DragEvent| {
            event.prevent_default();
            dragging.set(true);
        })
    };
    let on_dragleave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let on_drop = {
        let dragging = dragging.clone();
        #[cfg(target_arch = "wasm32")]
        let on_text = on_text.clone();
        Callback::from(move |event: DragEvent| {
            dragging.set(false);
            event.prevent_default();
            // The page-wide drop handler must not import the file a second time.
            event.stop_propagation();
            #[cfg(target_arch = "wasm32")]
            if let Some(file) = event
                .data_transfer()
                .and_then(|dt| dt.files())
                .and_then(|files| files.get(0))
            {
                crate::storage::read_file(file, on_text.clone());
            }
        })
    };
    html! {
        <section class="panel import-panel" data-testid="import-panel" aria-label="Import">
            <h2 class="panel-title">{ "Import" }</h2>
            <p class="muted">{ "Nomad API JSON (job, allocations, nodes, evaluations, a debug bundle file), an HCL jobspec, a scenario or a v1. link." }</p>
            <div class={classes!("drop-zone", dragging.then_some("dragging"))} data-testid="import-drop"
                 ondragover={on_dragover} ondragleave={on_dragleave} ondrop={on_drop}>
                <span>{ "Drop a file here, or " }</span>
                <label class="file-pick">
                    <span class="link-button">{ "choose a file" }</span>
                    <input type="file" data-testid="import-file" accept=".json,.hcl,.nomad,.txt,application/json,text/plain"
                           onchange={on_file} />
                </label>
            </div>
            <textarea class="scenario-input" data-testid="import-text" aria-label="Text to import" rows="5"
                      placeholder="…or paste it here" value={(*text).clone()} oninput={on_input} spellcheck="false" />
            <div><button data-testid="import-open" onclick={on_import} disabled={text.trim().is_empty()}>{ "Import" }</button></div>
        </section>
    }
}

/// Properties of [`ImportWarnings`].
#[derive(Properties, PartialEq)]
pub struct ImportWarningsProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The importer's warnings about what it could not carry over, shown
/// after an import until dismissed.
#[component]
pub fn ImportWarnings(props: &ImportWarningsProps) -> Html {
    let state = props.state.clone();
    if state.warnings.is_empty() {
        return html! {};
    }
    let dismiss = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::DismissWarnings))
    };
    html! {
        <section class="import-warnings" data-testid="import-warnings" role="status" aria-label="Import warnings">
            <strong>{ format!("Imported with {} warning{}", state.warnings.len(), if state.warnings.len() == 1 { "" } else { "s" }) }</strong>
            <ul>
                { for state.warnings.iter().map(|w| html! { <li class="mono">{ w }</li> }) }
            </ul>
            <button data-testid="import-warnings-dismiss" onclick={dismiss}>{ "Dismiss" }</button>
        </section>
    }
}
