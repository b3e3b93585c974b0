//! The share bar under the top bar: "Share link" puts a link to the
//! current state (scenario with the user's actions, step, profile) in the
//! address bar, copies it and shows it in a text field (the clipboard may be
//! unavailable); "Export" and "Import" open their panels in place. Also the
//! start page's "recover previous work" entry.

use super::export::ExportPanel;
use super::import::{ImportPanel, ImportWarnings};
use crate::sharing;
use crate::state::AppState;
use crate::storage;
use yew::prelude::*;

/// Which part of the share bar is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    None,
    Link,
    Export,
    Import,
}

/// Properties of [`ShareBar`].
#[derive(Properties, PartialEq)]
pub struct ShareBarProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The share bar.
#[component]
pub fn ShareBar(props: &ShareBarProps) -> Html {
    let state = props.state.clone();
    let open = use_state(|| Open::None);
    let copied = use_state(|| false);
    let toggle = |which: Open| {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| {
            open.set(if *open == which { Open::None } else { which })
        })
    };
    let on_share = {
        let state = state.clone();
        let open = open.clone();
        let copied = copied.clone();
        Callback::from(move |_: MouseEvent| {
            let fragment = sharing::fragment(&state.session.get());
            storage::set_hash(&fragment);
            copied.set(storage::copy(&format!(
                "{}#{fragment}",
                storage::page_base()
            )));
            open.set(Open::Link);
        })
    };
    let link = (*open == Open::Link).then(|| sharing::link(&state.session.get()));
    let panel = match (*open, link) {
        (Open::Link, Some(link)) => {
            let on_copy = {
                let link = link.clone();
                let copied = copied.clone();
                Callback::from(move |_: MouseEvent| copied.set(storage::copy(&link)))
            };
            let on_focus = Callback::from(|event: FocusEvent| {
                let input: web_sys::HtmlInputElement = event.target_unchecked_into();
                input.select();
            });
            html! {
                <div class="share-link" data-testid="share-panel">
                    <label for="share-link-field">{ "Link to this scenario at this step" }</label>
                    <input id="share-link-field" class="mono" data-testid="share-link" readonly=true value={link.clone()}
                           onfocus={on_focus} />
                    <button data-testid="share-copy" onclick={on_copy}>{ "Copy" }</button>
                    <span class="muted" role="status" data-testid="share-status">
                        { if *copied { format!("Copied ({} characters). It is also in the address bar.", link.len()) }
                          else { "Copy the link from the field; it is also in the address bar.".to_string() } }
                    </span>
                </div>
            }
        }
        (Open::Export, _) => html! { <ExportPanel state={state.clone()} /> },
        (Open::Import, _) => html! { <ImportPanel state={state.clone()} /> },
        _ => html! {},
    };
    html! {
        <div class="share-bar" data-testid="share-bar">
            <div class="share-buttons" role="group" aria-label="Share, export, import">
                <button data-testid="share" onclick={on_share} aria-expanded={(*open == Open::Link).to_string()}
                        title="Put a link to this state in the address bar and copy it">{ "Share link" }</button>
                <button data-testid="export-toggle" onclick={toggle(Open::Export)} aria-expanded={(*open == Open::Export).to_string()}>{ "Export…" }</button>
                <button data-testid="import-toggle" onclick={toggle(Open::Import)} aria-expanded={(*open == Open::Import).to_string()}>{ "Import…" }</button>
            </div>
            <ImportWarnings state={state.clone()} />
            { panel }
        </div>
    }
}

/// Properties of [`RecoverEntry`].
#[derive(Properties, PartialEq)]
pub struct RecoverEntryProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The start page's "recover previous work" entry: the autosave that a
/// link, a lesson or an import replaced.
#[component]
pub fn RecoverEntry(props: &RecoverEntryProps) -> Html {
    let Some(previous) = storage::load(storage::PREVIOUS_KEY) else {
        return html! {};
    };
    let on_recover = {
        let state = props.state.clone();
        let fragment = previous.fragment.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(sharing::link_action(&fragment)))
    };
    html! {
        <section class="recover" data-testid="recover" aria-label="Recover previous work">
            <h2>{ "Recover previous work" }</h2>
            <p class="muted">{ "Opening a link, a lesson or an import replaced this work; it was kept here." }</p>
            <button data-testid="recover-previous" onclick={on_recover}>
                { format!("Reopen “{}” at step {}", previous.name, previous.step) }
            </button>
        </section>
    }
}
