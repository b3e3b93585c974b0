//! Explore mode's Web Worker entry points. `static/explore-worker.js` loads
//! the same wasm module as the page (the app does not mount there: no
//! `window`) and drives a core [`Explorer`] through these exports, batch by
//! batch, so the search never blocks the page. All the search logic is the
//! core's; this file only keeps the one explorer of the worker and turns
//! its answers into JSON text for `postMessage`.

use nomad_playground::explore::{ExploreConfig, ExploreResult, Explorer, Progress};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use wasm_bindgen::prelude::wasm_bindgen;

thread_local! {
    static EXPLORER: RefCell<Option<Explorer>> = const { RefCell::new(None) };
}

/// A message from the worker to the page (the worker script writes the
/// JSON, with the payloads these exports return).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromWorker {
    /// After a batch.
    Progress {
        /// The run this belongs to.
        run: u32,
        /// Where the search is.
        progress: Progress,
    },
    /// The search ended (or was stopped): its result so far.
    Done {
        /// The run.
        run: u32,
        /// Stopped by the user before the end.
        stopped: bool,
        /// The result.
        result: Box<ExploreResult>,
    },
    /// The search could not start.
    Error {
        /// The run.
        run: u32,
        /// Why.
        message: String,
    },
}

/// A message from the page to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWorker {
    /// Start a search (replacing any other).
    Start {
        /// The run number, echoed in every answer.
        run: u32,
        /// The scenario, as JSON text.
        scenario: String,
        /// The settings, as JSON text.
        config: String,
    },
    /// Stop the search and send its result so far.
    Stop,
}

/// Starts a search; returns an empty string, or why it cannot start.
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

/// The result so far as JSON (`null` without a search).
#[wasm_bindgen]
pub fn explore_result() -> String {
    EXPLORER.with(|cell| {
        let result = cell.borrow().as_ref().map(Explorer::result);
        serde_json::to_string(&result).unwrap_or_else(|_| "null".to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &str = include_str!("../../tests/data/explore/plain-reconnect.json");

    #[test]
    fn the_exports_run_a_search_to_its_result() {
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
        let text = format!(
            r#"{{"type":"done","run":3,"stopped":false,"result":{}}}"#,
            explore_result()
        );
        let message: FromWorker = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let FromWorker::Done { run, result, .. } = message else {
            panic!("not a done message: {message:?}");
        };
        assert_eq!(run, 3);
        assert_eq!(result.orders, 20);
        assert_eq!(result.profile, "1.4.2");
    }

    #[test]
    fn bad_input_is_reported_not_thrown() {
        assert!(!explore_start("{", "{}").is_empty());
        assert!(explore_start(PLAIN, "{\"max_orders\":\"x\"}").starts_with("bad explore settings"));
    }
}
