//! The lazily loaded tools module (the `tools` crate: import, export,
//! explore). The first call loads `tools.js` and its wasm with a dynamic
//! import (once; a failed load is retried on the next call), then calls one
//! of its string-in, string-out exports. A failure to load (offline, a
//! missing file) comes back as an error text to show, never a panic.

use serde_json::Value;

#[cfg(target_arch = "wasm32")]
mod browser {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(inline_js = r#"
let tools = null;
export function load_tools() {
  if (tools === null) {
    const url = new URL("tools.js", document.baseURI).href;
    tools = import(url)
      .then(async (module) => { await module.default(); return module; })
      .catch((err) => { tools = null; throw err; });
  }
  return tools;
}
"#)]
    extern "C" {
        pub fn load_tools() -> js_sys::Promise;
    }
}

/// The text of a JS error.
#[cfg(target_arch = "wasm32")]
fn describe(err: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| err.as_string())
        .unwrap_or_else(|| "unknown error".to_string())
}

/// Calls the tools module's export `function` with string arguments and
/// returns its text.
#[cfg(target_arch = "wasm32")]
pub async fn call(function: &str, args: &[&str]) -> Result<String, String> {
    use wasm_bindgen::{JsCast, JsValue};
    let module = wasm_bindgen_futures::JsFuture::from(browser::load_tools())
        .await
        .map_err(|e| format!("could not load the tools module: {}", describe(&e)))?;
    let function: js_sys::Function = js_sys::Reflect::get(&module, &JsValue::from_str(function))
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| format!("the tools module has no {function}"))?;
    let args: js_sys::Array = args.iter().map(|a| JsValue::from_str(a)).collect();
    let out = function
        .apply(&JsValue::NULL, &args)
        .map_err(|e| format!("the tools module failed: {}", describe(&e)))?;
    out.as_string()
        .ok_or_else(|| "the tools module answered with no text".to_string())
}

/// Natively there is no tools module.
#[cfg(not(target_arch = "wasm32"))]
pub async fn call(function: &str, _args: &[&str]) -> Result<String, String> {
    Err(format!(
        "the tools module ({function}) runs only in the browser"
    ))
}

/// Calls an export that answers `{"text": …}` or `{"error": …}`.
pub async fn text(function: &str, args: &[&str]) -> Result<String, String> {
    let answer = call(function, args).await?;
    let mut value: Value = serde_json::from_str(&answer)
        .map_err(|e| format!("the tools module answered badly: {e}"))?;
    match (value.get_mut("text").map(Value::take), value.get("error")) {
        (Some(Value::String(text)), _) => Ok(text),
        (_, Some(Value::String(error))) => Err(error.clone()),
        _ => Err("the tools module answered badly".to_string()),
    }
}

/// What an import brought in: the scenario as a link fragment, and the
/// warnings.
pub struct Imported {
    /// A `v1.` fragment at step 0.
    pub fragment: String,
    /// What could not be carried over.
    pub warnings: Vec<String>,
}

/// Imports Nomad API JSON or an HCL jobspec with the tools module.
pub async fn import(name: &str, text: &str) -> Result<Imported, String> {
    let answer = call("import_text", &[name, text]).await?;
    let value: Value = serde_json::from_str(&answer)
        .map_err(|e| format!("the tools module answered badly: {e}"))?;
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return Err(error.to_string());
    }
    let fragment = value
        .get("fragment")
        .and_then(Value::as_str)
        .ok_or_else(|| "the tools module answered badly".to_string())?;
    let warnings = value
        .get("warnings")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok(Imported {
        fragment: fragment.to_string(),
        warnings,
    })
}
