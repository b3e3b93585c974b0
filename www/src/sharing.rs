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

/// Brings in a text the user pasted, picked or dropped (`name` being the
/// file name or `pasted`): a `v1.` link, a scenario (format v1), or Nomad
/// API JSON / an HCL jobspec for the importer, whose warnings are shown
/// after opening. Errors name the input and the field. The importer lives
/// in the lazily loaded tools module (`crate::tools`), so that case
/// dispatches its action when the module answers.
pub fn import(state: &UseReducerHandle<AppState>, name: &str, text: &str) {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if let Some(action) = direct_import_action(name, trimmed) {
        state.dispatch(action);
        return;
    }
    let state = state.clone();
    let name = name.to_string();
    let text = trimmed.to_string();
    yew::platform::spawn_local(async move {
        let imported = crate::tools::import(&name, &text).await;
        state.dispatch(imported_action(&name, imported));
    });
}

/// The action for a link or a scenario, which need no importer; `None` for
/// anything else.
pub fn direct_import_action(name: &str, trimmed: &str) -> Option<Action> {
    if trimmed.starts_with("v1.") || (!trimmed.contains('\n') && trimmed.contains("#v")) {
        return Some(link_action(trimmed));
    }
    if trimmed.starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str(trimmed)
        && map.contains_key("version")
    {
        return Some(match Playground::load(trimmed, None) {
            Ok(playground) => Action::Open(Box::new(playground), Vec::new()),
            Err(err) => Action::ShowMessage(format!("could not open {name}: {err}")),
        });
    }
    None
}

/// The action for what the importer answered.
pub fn imported_action(name: &str, imported: Result<crate::tools::Imported, String>) -> Action {
    let imported = match imported {
        Ok(imported) => imported,
        Err(err) => return Action::ShowMessage(format!("could not import: {err}")),
    };
    let opened = share::decode_link(&imported.fragment)
        .map_err(|e| e.to_string())
        .and_then(|link| Playground::open(link.scenario, None, 0).map_err(|e| e.to_string()));
    match opened {
        Ok(playground) => Action::Open(Box::new(playground), imported.warnings),
        Err(err) => Action::ShowMessage(format!("could not import {name}: {err}")),
    }
}

#[cfg(target_arch = "wasm32")]
pub use browser::{use_autosave, use_file_drop, use_hash_links};

#[cfg(target_arch = "wasm32")]
mod browser {
    //! Browser-only hooks.

    use super::{link_action, saved};
    use crate::state::{AppState, Screen, Session};
    use crate::storage;
    use std::cell::RefCell;
    use wasm_bindgen::JsCast;
    use yew::prelude::*;

    /// How long the autosave waits for the work to settle: encoding the
    /// session into a link costs milliseconds for a big cluster, too much
    /// for every step of a fast replay or auto-play.
    const AUTOSAVE_DELAY_MS: u32 = 300;

    /// Saves the work after every change (while the playground is open),
    /// once no change came for [`AUTOSAVE_DELAY_MS`], and at once when the
    /// page is hidden or left; a link in the address bar that no longer
    /// matches the work is removed at once (a run just opened is compared
    /// with it, a change to the run removes it), so a reload restores the
    /// autosave.
    #[hook]
    pub fn use_autosave(state: UseReducerHandle<AppState>) {
        let last = use_mut_ref(|| None::<Session>);
        let pending = use_mut_ref(|| None::<Session>);
        let timer = use_mut_ref(|| None::<gloo::timers::callback::Timeout>);
        {
            let (last, pending) = (last.clone(), pending.clone());
            use_effect_with((), move |_| {
                let window = gloo::utils::window();
                let flush = move || save_pending(&last, &pending);
                let on_hide = flush.clone();
                let hide =
                    gloo::events::EventListener::new(&window, "pagehide", move |_| on_hide());
                let visibility = gloo::events::EventListener::new(
                    &gloo::utils::document(),
                    "visibilitychange",
                    move |_| {
                        if gloo::utils::document().hidden() {
                            flush();
                        }
                    },
                );
                move || drop((hide, visibility))
            });
        }
        let session = state.session.clone();
        let screen = state.screen;
        use_effect_with((session, screen), move |(session, screen)| {
            if *screen == Screen::Playground {
                // Another run (a link just opened) is checked against the address bar at
                // once; a change of the same run makes a link there stale without encoding
                // anything, and the save waits (a link costs milliseconds at 200 nodes).
                let same_run = pending
                    .borrow()
                    .as_ref()
                    .or(last.borrow().as_ref())
                    .is_some_and(|seen| seen.same_run(session));
                *pending.borrow_mut() = Some(session.clone());
                let linked = storage::hash().len() > 1;
                if linked && !same_run {
                    *timer.borrow_mut() = None;
                    save_pending(&last, &pending);
                } else {
                    if linked {
                        storage::set_hash("");
                    }
                    let (last, pending) = (last.clone(), pending.clone());
                    *timer.borrow_mut() = Some(gloo::timers::callback::Timeout::new(
                        AUTOSAVE_DELAY_MS,
                        move || save_pending(&last, &pending),
                    ));
                }
            }
        });
    }

    /// Saves the pending session, if any (`last` is the one saved before).
    fn save_pending(last: &RefCell<Option<Session>>, pending: &RefCell<Option<Session>>) {
        let Some(session) = pending.borrow_mut().take() else {
            return;
        };
        let replaced = last
            .borrow()
            .as_ref()
            .is_none_or(|old| !old.same_run(&session));
        let saved = saved(&session.get());
        storage::autosave(&saved, replaced);
        let hash = storage::hash();
        if hash.len() > 1 && hash[1..] != saved.fragment {
            storage::set_hash("");
        }
        *last.borrow_mut() = Some(session);
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
                super::import(&state, &name, &text);
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
