//! The tools module: the playground's rarely used tools as a second wasm
//! module, so the first load does not carry them. The page loads it on
//! first use (`www/src/tools.rs`), the explore worker
//! (`static/explore-worker.js`) loads only it. Each export takes and
//! returns text: the page hands over the session as its share-link
//! fragment (the scenario with the action log, the step and the profile),
//! which is replayed here, so the texts are the core's exporters' (the same
//! bytes as the CLI's `export`). No yew, no web-sys: only the core and
//! wasm-bindgen's string glue.

use nomad_playground::explore::{ExploreConfig, Explorer};
use nomad_playground::sim::history::Session;
use nomad_playground::{export, import, share};
use serde_json::{Value, json};
use std::cell::RefCell;
use wasm_bindgen::prelude::wasm_bindgen;

thread_local! {
    static EXPLORER: RefCell<Option<Explorer>> = const { RefCell::new(None) };
}

/// `{"text": …}` or `{"error": …}` as JSON text.
fn answer(result: Result<String, String>) -> String {
    match result {
        Ok(text) => json!({ "text": text }),
        Err(error) => json!({ "error": error }),
    }
    .to_string()
}

/// The session a link fragment describes, at its step (as the page opens
/// links: `Playground::open`).
fn session_of(fragment: &str) -> Result<Session, String> {
    let link = share::decode_link(fragment).map_err(|e| e.to_string())?;
    let step = link
        .step
        .map_or(0, |s| usize::try_from(s).unwrap_or(usize::MAX));
    let mut session =
        Session::new(link.scenario, link.profile.as_deref()).map_err(|e| e.to_string())?;
    session.jump(step);
    Ok(session)
}

/// One export of the session in `fragment`: `kind` is `scenario`, `trace`,
/// `mermaid`, `fixture` (of the processed eval `eval`: an ID prefix,
/// `trigger:job` or `trigger:job#n`) or `issue` (with links on `base`).
/// Returns `{"text": …}` or `{"error": …}`.
#[wasm_bindgen]
pub fn export_text(fragment: &str, kind: &str, eval: &str, base: &str) -> String {
    answer(session_of(fragment).and_then(|session| {
        Ok(match kind {
            "scenario" => export::scenario_json(&export::session_link(&session).scenario),
            "trace" => export::trace_json(&session.trace()),
            "mermaid" => export::mermaid::mermaid(&session.trace()),
            "issue" => export::issue::issue_body(&session, base),
            "fixture" => {
                let value =
                    export::fixture::eval_fixture(&session, eval).map_err(|e| e.to_string())?;
                serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
            }
            other => return Err(format!("unknown export {other:?}")),
        })
    }))
}

/// Imports Nomad API JSON or an HCL jobspec (`name`: the file name, or
/// `pasted`). Returns `{"fragment": …, "warnings": […]}` (the scenario as a
/// `v1.` link fragment at step 0, and what could not be carried over) or
/// `{"error": …}`.
#[wasm_bindgen]
pub fn import_text(name: &str, text: &str) -> String {
    match import::import_text(name, text) {
        Ok(imported) => {
            let warnings: Vec<String> = imported.warnings.iter().map(ToString::to_string).collect();
            json!({
                "fragment": share::encode_fragment(&share::Link::new(imported.scenario)),
                "warnings": warnings,
            })
        }
        Err(err) => json!({ "error": err.to_string() }),
    }
    .to_string()
}

/// Starts an explore search (replacing any other); returns an empty
/// string, or why it cannot start.
#[wasm_bindgen]
pub fn explore_start(scenario: &str, config: &str) -> String {
    let config: ExploreConfig = match serde_json::from_str(config) {
        Ok(config) => config,
        Err(err) => return format!("bad explore settings: {err}"),
    };
    match Explorer::from_json(scenario, config) {
        Ok(explorer) => {
            EXPLORER.with(|cell| *cell.borrow_mut() = Some(explorer));
            String::new()
        }
        Err(err) => err.to_string(),
    }
}

/// Tries up to `orders` more orders; returns the progress as JSON (`null`
/// without a search).
#[wasm_bindgen]
pub fn explore_batch(orders: u32) -> String {
    EXPLORER.with(|cell| {
        let mut explorer = cell.borrow_mut();
        let progress = explorer
            .as_mut()
            .map(|explorer| explorer.run_batch(u64::from(orders)));
        serde_json::to_string(&progress).unwrap_or_else(|_| "null".to_string())
    })
}

/// The search's result so far as JSON (`null` without a search).
#[wasm_bindgen]
pub fn explore_result() -> String {
    EXPLORER.with(|cell| {
        let result = cell.borrow().as_ref().map(Explorer::result);
        serde_json::to_string(&result).unwrap_or_else(|_| "null".to_string())
    })
}

/// The parsed answer of [`export_text`] or [`import_text`] (for tests).
pub fn parse_answer(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nomad_playground::explore::{ExploreResult, Progress};

    const PLAIN: &str = include_str!("../../tests/data/explore/plain-reconnect.json");

    fn fragment_at_end() -> String {
        let mut session = Session::load(PLAIN, None).unwrap_or_else(|e| panic!("{e}"));
        session.run_to_end();
        share::encode_fragment(&export::session_link(&session))
    }

    #[test]
    fn exports_are_the_cores_texts_of_the_replayed_session() {
        let mut session = Session::load(PLAIN, None).unwrap_or_else(|e| panic!("{e}"));
        session.run_to_end();
        let fragment = fragment_at_end();
        let text = |kind: &str, eval: &str| {
            let answer = parse_answer(&export_text(&fragment, kind, eval, "https://x.test/"));
            answer["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{kind}: {answer}"))
                .to_string()
        };
        assert_eq!(
            text("mermaid", ""),
            export::mermaid::mermaid(&session.trace())
        );
        assert_eq!(text("trace", ""), export::trace_json(&session.trace()));
        assert_eq!(
            text("issue", ""),
            export::issue::issue_body(&session, "https://x.test/")
        );
        let eval = session
            .trace()
            .into_iter()
            .find_map(|e| match e.event {
                nomad_playground::sim::trace::TraceEvent::EvalProcessed(processed) => {
                    Some(String::from(processed.eval))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no processed eval"));
        let want = export::fixture::eval_fixture(&session, &eval).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            text("fixture", &eval),
            serde_json::to_string_pretty(&want).unwrap_or_default() + "\n"
        );
    }

    #[test]
    fn bad_exports_answer_with_an_error() {
        let answer = parse_answer(&export_text("v1.%%%", "mermaid", "", ""));
        assert!(answer["error"].is_string(), "{answer}");
        let answer = parse_answer(&export_text(&fragment_at_end(), "pdf", "", ""));
        assert_eq!(answer["error"], "unknown export \"pdf\"");
        let answer = parse_answer(&export_text(&fragment_at_end(), "fixture", "zzzz", ""));
        assert!(
            answer["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("no processed eval matches")),
            "{answer}"
        );
    }

    #[test]
    fn an_import_answers_with_a_link_fragment_and_warnings() {
        let hcl = include_str!("../../tests/samples/import/web.nomad.hcl");
        let answer = parse_answer(&import_text("web.nomad.hcl", hcl));
        let fragment = answer["fragment"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        let link = share::decode_link(fragment).unwrap_or_else(|e| panic!("{e}"));
        let want = import::import_text("web.nomad.hcl", hcl).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(link.scenario, want.scenario);
        assert_eq!(link.step, None);
        assert_eq!(
            answer["warnings"].as_array().map(Vec::len),
            Some(want.warnings.len())
        );
        let answer = parse_answer(&import_text("pasted", "{\"Job\": {\"ID\": 3}}"));
        assert!(answer["error"].is_string(), "{answer}");
    }

    #[test]
    fn the_explore_exports_run_a_search_to_its_result() {
        let config = r#"{"profile":"1.4.2","max_orders":20,"mode":"random"}"#;
        assert_eq!(explore_start(PLAIN, config), "");
        let mut batches = 0;
        loop {
            let progress: Progress =
                serde_json::from_str(&explore_batch(5)).unwrap_or_else(|e| panic!("{e}"));
            batches += 1;
            if progress.done {
                break;
            }
        }
        assert!(batches >= 4);
        let result: ExploreResult =
            serde_json::from_str(&explore_result()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(result.orders, 20);
        assert_eq!(result.profile, "1.4.2");
    }

    #[test]
    fn bad_explore_input_is_reported_not_thrown() {
        assert!(!explore_start("{", "{}").is_empty());
        assert!(explore_start(PLAIN, "{\"max_orders\":\"x\"}").starts_with("bad explore settings"));
    }
}
