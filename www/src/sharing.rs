//! Sharing glue between the app state and the core: opening links, turning
//! the session into a link fragment, the start-up restore (link in the
//! address bar, else the autosave), and the browser hooks that autosave
//! after every change, follow links pasted into the address bar and take
//! files dropped anywhere on the page. The link codec, the importers and
//! the exporters are the core's (`share`, `import`, `export`).

use crate::state::{Action, AppState};
use crate::storage::{self, Saved};
use nomad_playground::playground::Playground;
use nomad_playground::scenario::format::Scenario;
use nomad_playground::{export, share};
use std::rc::Rc;
use yew::prelude::*;

/// Opens a link (a URL, `#fragment` or the bare `v1.` fragment) at its
/// step and profile; the error says what is wrong and where.
pub fn open_link(text: &str) -> Result<Playground, String> {
    let link = share::decode_link(text).map_err(|e| e.to_string())?;
    let step = link
        .step
        .map_or(0, |s| usize::try_from(s).unwrap_or(usize::MAX));
    Playground::open(link.scenario, link.profile.as_deref(), step).map_err(|e| e.to_string())
}

/// Opens a parsed scenario under a profile (default: its own), at a step.
pub fn open_scenario(
    scenario: &Scenario,
    step: Option<usize>,
    profile: Option<&str>,
) -> Result<Playground, String> {
    Playground::open(scenario.clone(), profile, step.unwrap_or(0)).map_err(|e| e.to_string())
}

/// The link fragment (`v1.…`, no `#`) of the playground's current state:
/// the scenario with the user's actions, the step and the profile.
pub fn fragment(playground: &Playground) -> String {
    share::encode_fragment(&export::session_link(playground.session()))
}

/// The full link of the playground's current state on this page.
pub fn link(playground: &Playground) -> String {
    format!("{}#{}", storage::page_base(), fragment(playground))
}

/// What the autosave stores for the playground.
pub fn saved(playground: &Playground) -> Saved {
    Saved {
        fragment: fragment(playground),
        name: playground.view().scenario.clone(),
        step: playground.view().step,
    }
}

fn reduce(state: AppState, action: Action) -> AppState {
    let next = Rc::new(state).reduce(action);
    Rc::try_unwrap(next).unwrap_or_else(|rc| (*rc).clone())
}

/// The state the app starts in: the autosave if there is one, then the
/// link in the address bar on top of it. A broken link leaves the autosave
/// open and says what is wrong.
pub fn startup(mut state: AppState) -> AppState {
    if let Some(saved) = storage::load(storage::AUTOSAVE_KEY)
        && let Ok(playground) = open_link(&saved.fragment)
    {
        state = reduce(state, Action::Open(Box::new(playground), Vec::new()));
    }
    let hash = storage::hash();
    if let Some(fragment) = hash.strip_prefix('#').filter(|f| !f.is_empty()) {
        state = reduce(state, link_action(fragment));
    }
    state
}

/// The action for a link: open it, or show why it does not open.
pub fn link_action(text: &str) -> Action {
    match open_link(text) {
        Ok(playground) => Action::Open(Box::new(playground), Vec::new()),
        Err(err) => Action::ShowMessage(format!(
            "could not open the link: {err}. Your current work is unchanged."
        )),
    }
}

/// The action for a text the user brings in (pasted, picked or dropped,
/// `name` being the file name or `pasted`): a `v1.` link, a scenario
/// (format v1), or Nomad API JSON / an HCL jobspec for the importer, whose
/// warnings are shown after opening. Errors name the input and the field.
pub fn import_action(name: &str, text: &str) -> Action {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.starts_with("v1.") || (!trimmed.contains('\n') && trimmed.contains("#v")) {
        return link_action(trimmed);
    }
    if trimmed.starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str(trimmed)
        && map.contains_key("version")
    {
        return match Playground::load(trimmed, None) {
            Ok(playground) => Action::Open(Box::new(playground), Vec::new()),
            Err(err) => Action::ShowMessage(format!("could not open {name}: {err}")),
        };
    }
    let imported = match nomad_playground::import::import_text(name, trimmed) {
        Ok(imported) => imported,
        Err(err) => return Action::ShowMessage(format!("could not import: {err}")),
    };
    match Playground::open(imported.scenario, None, 0) {
        Ok(playground) => Action::Open(
            Box::new(playground),
            imported.warnings.iter().map(ToString::to_string).collect(),
        ),
        Err(err) => Action::ShowMessage(format!("could not import {name}: {err}")),
    }
}

#[cfg(target_arch = "wasm32")]
pub use browser::{use_autosave, use_file_drop, use_hash_links};

#[cfg(target_arch = "wasm32")]
mod browser {
    //! Browser-only hooks.

    use super::{import_action, link_action, saved};
    use crate::state::{AppState, Screen, Session};
    use crate::storage;
    use wasm_bindgen::JsCast;
    use yew::prelude::*;

    /// Saves the work after every change (while the playground is open);
    /// a link in the address bar that no longer matches the work is
    /// removed, so a reload restores the autosave.
    #[hook]
    pub fn use_autosave(state: UseReducerHandle<AppState>) {
        let last = use_mut_ref(|| None::<Session>);
        let session = state.session.clone();
        let screen = state.screen;
        use_effect_with((session, screen), move |(session, screen)| {
            if *screen == Screen::Playground {
                let replaced = last
                    .borrow()
                    .as_ref()
                    .is_none_or(|old| !old.same_run(session));
                let saved = saved(&session.get());
                storage::autosave(&saved, replaced);
                let hash = storage::hash();
                if hash.len() > 1 && hash[1..] != saved.fragment {
                    storage::set_hash("");
                }
                *last.borrow_mut() = Some(session.clone());
            }
        });
    }

    /// Opens links pasted into the address bar of an open page.
    #[hook]
    pub fn use_hash_links(state: UseReducerHandle<AppState>) {
        use_effect_with((), move |_| {
            let listener =
                gloo::events::EventListener::new(&gloo::utils::window(), "hashchange", move |_| {
                    let hash = storage::hash();
                    if let Some(fragment) = hash.strip_prefix('#').filter(|f| !f.is_empty()) {
                        state.dispatch(link_action(fragment));
                    }
                });
            move || drop(listener)
        });
    }

    /// Imports a file dropped anywhere on the page (drags without files,
    /// such as a node card to the Offline zone, are left alone).
    #[hook]
    pub fn use_file_drop(state: UseReducerHandle<AppState>) {
        use_effect_with((), move |_| {
            let on_file = Callback::from(move |(name, text): (String, String)| {
                state.dispatch(import_action(&name, &text));
            });
            let has_files = |event: &web_sys::Event| {
                event
                    .dyn_ref::<web_sys::DragEvent>()
                    .and_then(|e| e.data_transfer())
                    .is_some_and(|dt| dt.types().includes(&"Files".into(), 0))
            };
            let options = gloo::events::EventListenerOptions::enable_prevent_default();
            let document = gloo::utils::document();
            let over = gloo::events::EventListener::new_with_options(
                &document,
                "dragover",
                options,
                move |event| {
                    if has_files(event) {
                        event.prevent_default();
                    }
                },
            );
            let drop_listener = gloo::events::EventListener::new_with_options(
                &document,
                "drop",
                options,
                move |event| {
                    if !has_files(event) {
                        return;
                    }
                    event.prevent_default();
                    let file = event
                        .dyn_ref::<web_sys::DragEvent>()
                        .and_then(|e| e.data_transfer())
                        .and_then(|dt| dt.files())
                        .and_then(|files| files.get(0));
                    if let Some(file) = file {
                        crate::storage::read_file(file, on_file.clone());
                    }
                },
            );
            move || {
                drop(over);
                drop(drop_listener);
            }
        });
    }
}
