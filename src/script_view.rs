//! The script editor's view model and the step narration: the session's
//! action log as editable lines, the branches earlier edits left behind,
//! and one sentence saying what the current step did (for the UI's
//! `role=status` live region).

use crate::scenario::format::Action;
use crate::sim::history::Session;
use crate::sim::queue::Seconds;
use crate::sim::trace::TraceEvent;
use serde::{Deserialize, Serialize};

/// One action of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ScriptLine {
    /// Position in the log (0-based); applying it makes step `index + 1`.
    pub index: usize,
    /// The action's name (`advance`, `link_down`, ...).
    pub kind: String,
    /// A short summary (`link_down node-c`).
    pub label: String,
    /// The action as one line of JSON, as the user edits it.
    pub json: String,
    /// Whether it has been applied (it is before the cursor).
    pub done: bool,
}

/// A branch left behind by an edit in the past.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BranchLine {
    /// Position in the session's branch list.
    pub index: usize,
    /// The step where the current log and this branch part.
    pub forked_at: usize,
    /// Number of actions in the branch.
    pub len: usize,
    /// The branch's first action after the fork, summarised (`(end)` if none).
    pub label: String,
}

/// The script editor's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ScriptView {
    /// The current log.
    pub lines: Vec<ScriptLine>,
    /// The current step.
    pub cursor: usize,
    /// Branches, oldest first.
    pub branches: Vec<BranchLine>,
}

/// The action's JSON name.
pub fn action_kind(action: &Action) -> String {
    crate::scenario::json::to_value(action)
        .ok()
        .and_then(|value| value.get("action")?.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A short summary: the action's name then its fields' values.
pub fn action_label(action: &Action) -> String {
    let Ok(serde_json::Value::Object(fields)) = crate::scenario::json::to_value(action) else {
        return String::new();
    };
    let mut label = action_kind(action);
    for (key, value) in &fields {
        if key == "action" {
            continue;
        }
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => value.to_string(),
            serde_json::Value::Array(items) => format!("[{}]", items.len()),
            _ => "{…}".to_string(),
        };
        label.push(' ');
        if !matches!(
            key.as_str(),
            "node" | "alloc" | "job" | "text" | "by" | "call"
        ) {
            label.push_str(key);
            label.push('=');
        }
        label.push_str(&text);
    }
    label
}

/// Parses one action from the editor's JSON text.
pub fn parse_action(json: &str) -> Result<Action, String> {
    serde_json::from_str(json).map_err(|err| err.to_string())
}

/// The script editor's view of a session.
pub fn script_view(session: &Session) -> ScriptView {
    let cursor = session.cursor();
    let lines = session
        .actions()
        .iter()
        .enumerate()
        .map(|(index, action)| ScriptLine {
            index,
            kind: action_kind(action),
            label: action_label(action),
            json: crate::scenario::json::to_string(action).unwrap_or_default(),
            done: index < cursor,
        })
        .collect();
    let branches = session
        .branches()
        .iter()
        .enumerate()
        .map(|(index, branch)| {
            let forked_at = branch
                .actions
                .iter()
                .zip(session.actions())
                .take_while(|(x, y)| x == y)
                .count();
            BranchLine {
                index,
                forked_at,
                len: branch.actions.len(),
                label: branch
                    .actions
                    .get(forked_at)
                    .map_or_else(|| "(end)".to_string(), action_label),
            }
        })
        .collect();
    ScriptView {
        lines,
        cursor,
        branches,
    }
}

/// How many consequences a narration names before it says "and N more".
const NARRATION_EVENTS: usize = 4;

/// One sentence for screen readers: what the current step did.
pub fn narrate(session: &Session) -> String {
    let cursor = session.cursor();
    let Some(record) = session.records().last() else {
        return String::new();
    };
    let time = format!("t={}s", Seconds::of(record.tick));
    let mut text = match &record.action {
        None => format!("step 0, {time}: the cluster is set up"),
        Some(action) => format!("step {cursor}, {time}: {}", action_label(action)),
    };
    let events: Vec<String> = record
        .entries
        .iter()
        .filter_map(|entry| match &entry.event {
            TraceEvent::NodeStatus(change) => {
                Some(format!("{} {} → {}", change.node, change.from, change.to))
            }
            TraceEvent::CallHandled {
                node,
                rpc,
                accepted,
                ..
            } => Some(format!(
                "{node} → leader {rpc} {}",
                if *accepted { "accepted" } else { "refused" }
            )),
            TraceEvent::Operator { rpc, accepted, .. } => Some(format!(
                "operator → leader {rpc} {}",
                if *accepted { "accepted" } else { "refused" }
            )),
            TraceEvent::EvalCreated(created) => Some(format!(
                "eval created: {} for {}",
                created.trigger, created.job
            )),
            TraceEvent::EvalProcessed(processed) => {
                Some(format!("eval {} {}", processed.trigger, processed.status))
            }
            TraceEvent::Violation { detail } => Some(format!("violation: {detail}")),
            TraceEvent::Assertion { ok: false, detail } => {
                Some(format!("assertion failed: {detail}"))
            }
            _ => None,
        })
        .collect();
    if events.is_empty() {
        text.push_str("; nothing else happened");
    } else {
        text.push_str("; ");
        text.push_str(&events[..events.len().min(NARRATION_EVENTS)].join("; "));
        if events.len() > NARRATION_EVENTS {
            text.push_str(&format!("; and {} more", events.len() - NARRATION_EVENTS));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::history::ScriptEdit;

    fn session() -> Session {
        let scenario = crate::playground::builtin("pr-15068-heartbeat-order").expect("built in");
        Session::load(scenario.json, None).expect("loads")
    }

    #[test]
    fn lines_label_and_round_trip_actions() {
        let s = session();
        let view = script_view(&s);
        assert_eq!(view.lines.len(), s.actions().len());
        assert_eq!(view.lines[1].kind, "link_down");
        assert_eq!(view.lines[1].label, "link_down node-c");
        assert_eq!(view.lines[0].label, "advance 5s");
        for (line, action) in view.lines.iter().zip(s.actions()) {
            assert_eq!(&parse_action(&line.json).expect("parses"), action);
        }
        assert!(view.lines.iter().all(|line| !line.done));
    }

    #[test]
    fn bad_action_json_is_an_error() {
        assert!(parse_action(r#"{"action":"fly"}"#).is_err());
        assert!(parse_action("not json").is_err());
    }

    #[test]
    fn editing_the_past_forks_and_the_old_branch_comes_back() {
        let mut s = session();
        let original = s.actions().to_vec();
        for _ in 0..4 {
            s.step();
        }
        s.edit_script(ScriptEdit::Remove { index: 1 })
            .expect("edits");
        assert_eq!(s.cursor(), 4, "re-simulated up to the same step");
        assert_eq!(s.actions().len(), original.len() - 1);
        let view = script_view(&s);
        assert_eq!(view.branches.len(), 1);
        assert_eq!(view.branches[0].forked_at, 1);
        assert_eq!(view.branches[0].label, "link_down node-c");
        // node-c never went offline on this branch.
        let status = |s: &Session| {
            s.snapshot()
                .nodes
                .iter()
                .find(|n| n.id == "node-c")
                .map(|n| n.status.clone())
        };
        assert_eq!(status(&s).as_deref(), Some("ready"));
        s.switch_branch(0).expect("switches");
        assert_eq!(s.actions(), original.as_slice());
        assert_eq!(s.cursor(), 4);
        assert_eq!(status(&s).as_deref(), Some("disconnected"));
        // And the edited log is now the branch.
        assert_eq!(s.branches()[0].actions.len(), original.len() - 1);
        assert!(s.switch_branch(3).is_err());
    }

    #[test]
    fn editing_the_future_does_not_fork() {
        let mut s = session();
        s.step();
        s.edit_script(ScriptEdit::Move { from: 3, to: 2 })
            .expect("moves");
        assert!(s.branches().is_empty());
        assert_eq!(action_kind(&s.actions()[2]), "assert");
        s.edit_script(ScriptEdit::Insert {
            index: 1,
            action: Action::Note {
                text: "hi".to_string(),
            },
        })
        .expect("inserts");
        assert!(s.branches().is_empty());
        assert_eq!(s.cursor(), 1);
        assert!(
            s.edit_script(ScriptEdit::Remove { index: 99 }).is_err(),
            "out of range is refused"
        );
    }

    #[test]
    fn a_replay_after_an_edit_matches_a_fresh_run() {
        // Stale checkpoints must not survive an edit: going far, back, editing
        // the future and replaying gives the same world as a fresh session.
        let mut s = session();
        s.run_to_end();
        s.jump(3);
        s.edit_script(ScriptEdit::Replace {
            index: 6,
            action: Action::Advance {
                by: crate::scenario::duration::Dur::secs(40),
            },
        })
        .expect("replaces");
        s.run_to_end();
        s.jump(s.actions().len() - 1);
        let mut scenario = s.scenario().clone();
        scenario.script = s.actions().to_vec();
        let mut fresh = Session::new(scenario, None).expect("builds");
        fresh.jump(s.cursor());
        assert_eq!(s.snapshot(), fresh.snapshot());
    }

    #[test]
    fn narration_names_the_action_and_its_consequences() {
        let mut s = session();
        assert!(narrate(&s).starts_with("step 0"));
        for _ in 0..3 {
            s.step();
        }
        let text = narrate(&s);
        assert!(text.starts_with("step 3, t="), "{text}");
        assert!(text.contains("advance 3m"), "{text}");
        assert!(text.contains("disconnected"), "{text}");
    }
}
