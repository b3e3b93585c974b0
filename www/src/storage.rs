//! Browser storage and address-bar glue for sharing: the autosave of the
//! working scenario in `localStorage` (as a `v1.` link fragment, which
//! carries the scenario, the step and the profile), the previous autosave
//! kept when something else replaces it, the URL fragment, the clipboard and
//! file downloads. Outside the browser every function is a no-op, so the
//! components render natively too.

/// The `localStorage` key of the autosave.
pub const AUTOSAVE_KEY: &str = "nomad-playground.autosave";
/// The `localStorage` key of the previous autosave (the "recover previous
/// work" entry of the start page).
pub const PREVIOUS_KEY: &str = "nomad-playground.previous";

/// A saved piece of work: the link fragment, and what the start page says
/// about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The `v1.` link fragment (scenario, step, profile).
    pub fragment: String,
    /// The scenario name.
    pub name: String,
    /// The step the user was on.
    pub step: usize,
}

impl Saved {
    /// The stored form (JSON).
    pub fn to_json(&self) -> String {
        serde_json::json!({ "fragment": self.fragment, "name": self.name, "step": self.step })
            .to_string()
    }

    /// Reads the stored form; `None` if it is not one.
    pub fn from_json(text: &str) -> Option<Saved> {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        Some(Saved {
            fragment: value.get("fragment")?.as_str()?.to_string(),
            name: value.get("name")?.as_str().unwrap_or_default().to_string(),
            step: value.get("step")?.as_u64().unwrap_or(0) as usize,
        })
    }
}

/// Reads a saved entry.
pub fn load(key: &str) -> Option<Saved> {
    Saved::from_json(&get(key)?)
}

/// Writes the autosave. When `replaced` (another session took the place of
/// the saved one) and the stored work differs, the stored work moves to
/// [`PREVIOUS_KEY`] first, so opening a link never loses work.
pub fn autosave(saved: &Saved, replaced: bool) {
    let old = get(AUTOSAVE_KEY);
    if replaced
        && let Some(old) = old.as_deref().and_then(Saved::from_json)
        && old.fragment != saved.fragment
    {
        set(PREVIOUS_KEY, &old.to_json());
    }
    set(AUTOSAVE_KEY, &saved.to_json());
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use wasm_bindgen::JsCast;

    fn storage() -> Option<web_sys::Storage> {
        web_sys::window()?.local_storage().ok()?
    }

    pub fn get(key: &str) -> Option<String> {
        storage()?.get_item(key).ok()?
    }

    pub fn set(key: &str, value: &str) {
        if let Some(storage) = storage() {
            // A full or disabled storage only loses the autosave.
            let _ = storage.set_item(key, value);
        }
    }

    pub fn remove(key: &str) {
        if let Some(storage) = storage() {
            let _ = storage.remove_item(key);
        }
    }

    pub fn hash() -> String {
        web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .unwrap_or_default()
    }

    pub fn page_base() -> String {
        web_sys::window()
            .and_then(|w| w.location().href().ok())
            .map(|href| href.split('#').next().unwrap_or_default().to_string())
            .unwrap_or_default()
    }

    pub fn set_hash(fragment: &str) {
        // `replaceState` changes the address without a `hashchange` event
        // and without a history entry.
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let url = if fragment.is_empty() {
                page_base()
            } else {
                format!("#{fragment}")
            };
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    }

    pub fn copy(text: &str) -> bool {
        let Some(window) = web_sys::window() else {
            return false;
        };
        let clipboard = window.navigator().clipboard();
        // The promise fails without permission (headless, http): the text
        // field beside the button still holds the text.
        let ignore = wasm_bindgen::closure::Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(
            |_: wasm_bindgen::JsValue| {},
        );
        let _ = clipboard.write_text(text).catch(&ignore);
        // One small closure per copy stays alive for the promise.
        ignore.forget();
        true
    }

    pub fn read_file(file: web_sys::File, on_text: yew::Callback<(String, String)>) {
        let name = file.name();
        let done = wasm_bindgen::closure::Closure::once(move |text: wasm_bindgen::JsValue| {
            on_text.emit((name, text.as_string().unwrap_or_default()));
        });
        let _ = file.text().then(&done);
        done.forget();
    }

    pub fn download(name: &str, mime: &str, text: &str) {
        let blob = gloo::file::Blob::new_with_options(text, Some(mime));
        let url = gloo::file::ObjectUrl::from(blob);
        let document = gloo::utils::document();
        let Ok(anchor) = document.create_element("a") else {
            return;
        };
        let _ = anchor.set_attribute("href", &url);
        let _ = anchor.set_attribute("download", name);
        if let Ok(anchor) = anchor.dyn_into::<web_sys::HtmlElement>() {
            anchor.click();
        }
        // Revoke after the click has been handled.
        gloo::timers::callback::Timeout::new(1000, move || drop(url)).forget();
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub fn get(_key: &str) -> Option<String> {
        None
    }
    pub fn set(_key: &str, _value: &str) {}
    pub fn remove(_key: &str) {}
    pub fn hash() -> String {
        String::new()
    }
    pub fn page_base() -> String {
        "http://127.0.0.1:8080/".to_string()
    }
    pub fn set_hash(_fragment: &str) {}
    pub fn copy(_text: &str) -> bool {
        false
    }
    pub fn download(_name: &str, _mime: &str, _text: &str) {}
}

/// Reads a file the user picked or dropped, then calls `on_text` with its
/// name and text.
#[cfg(target_arch = "wasm32")]
pub fn read_file(file: web_sys::File, on_text: yew::Callback<(String, String)>) {
    imp::read_file(file, on_text);
}

/// Reads a `localStorage` item.
pub fn get(key: &str) -> Option<String> {
    imp::get(key)
}

/// Writes a `localStorage` item (a full or disabled storage is ignored).
pub fn set(key: &str, value: &str) {
    imp::set(key, value);
}

/// Removes a `localStorage` item.
pub fn remove(key: &str) {
    imp::remove(key);
}

/// The URL fragment with its `#`, or empty.
pub fn hash() -> String {
    imp::hash()
}

/// The page's URL without the fragment (the base of share links).
pub fn page_base() -> String {
    imp::page_base()
}

/// Puts a fragment in the address bar (empty: removes it), without a
/// history entry or a `hashchange` event.
pub fn set_hash(fragment: &str) {
    imp::set_hash(fragment);
}

/// Copies text to the clipboard when the browser lets the page; returns
/// whether it tried.
pub fn copy(text: &str) -> bool {
    imp::copy(text)
}

/// Offers text as a file download.
pub fn download(name: &str, mime: &str, text: &str) {
    imp::download(name, mime, text);
}
