//! The messages between the page and explore mode's Web Worker.
//! `static/explore-worker.js` loads only the tools module (the `tools`
//! crate, not this app's wasm) and drives a core explorer through its
//! exports, batch by batch, so the search never blocks the page; its
//! answers are these messages as JSON text.

use nomad_playground::explore::{ExploreResult, Progress};
use serde::{Deserialize, Serialize};

/// A message from the worker to the page (the worker script writes the
/// JSON, with the payloads these exports return). Externally tagged
/// (`{"done": {...}}`), unlike [`ToWorker`]: an internally tagged enum is
/// read through serde's buffered `Content`, which would compile the whole
/// `ExploreResult` reader a second time into the first screen's module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_read_the_way_the_worker_script_writes_them() {
        let message: FromWorker =
            serde_json::from_str(r#"{"error":{"run":2,"message":"no module"}}"#)
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            message,
            FromWorker::Error {
                run: 2,
                message: "no module".into()
            }
        );
        let start = ToWorker::Start {
            run: 1,
            scenario: "{}".into(),
            config: "{}".into(),
        };
        let text = serde_json::to_string(&start).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"type":"start","run":1,"scenario":"{}","config":"{}"}"#
        );
    }
}
