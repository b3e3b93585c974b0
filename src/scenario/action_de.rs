//! Reading a script action (`{"action": "advance", "by": "30s"}`) by hand.
//!
//! serde's derive for an internally tagged enum buffers every action into
//! its private `Content` type and instantiates each variant's field code
//! once per deserializer; in the browser bundle that cost tens of KB. Here
//! the action is read as a `serde_json::Value` and built by one
//! non-generic function, so every deserializer shares it.
//!
//! Every error starts with ``field `name`: `` (an empty name for the action
//! as a whole) so [`crate::scenario::parse`] can add the field to the JSON
//! path (`script[3].by`).

use super::format::Action;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The start of an error message about one field of an action.
pub const FIELD_PREFIX: &str = "field `";

/// Every action name, in the format's order.
pub const ACTION_NAMES: &[&str] = &[
    "register_job",
    "update_job",
    "stop_job",
    "revert_job",
    "drain_node",
    "set_eligibility",
    "heartbeat",
    "update_alloc",
    "get_allocs",
    "register",
    "task_fail",
    "task_complete",
    "task_restart",
    "link_down",
    "link_up",
    "hold",
    "release",
    "deliver",
    "reorder",
    "drop",
    "delay",
    "advance",
    "step",
    "process_eval",
    "run_until_idle",
    "assert",
    "gc",
    "promote_deployment",
    "pause_deployment",
    "resume_deployment",
    "fail_deployment",
    "unblock_deployment",
    "set_alloc_health",
    "note",
];

fn field_error(key: &str, message: impl std::fmt::Display) -> String {
    format!("{FIELD_PREFIX}{key}`: {message}")
}

/// Splits an error message made here into the field and the rest.
pub fn split_field_error(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix(FIELD_PREFIX)?;
    rest.split_once("`: ")
}

/// `serde_json::from_value`, through the text reader: the error's message
/// (without a position, as `from_value` gives it).
///
/// Code size: the scenario types' `Deserialize` compiles once per
/// deserializer. `scenario::parse` reads them from text; reading a field's
/// `Value` through text too keeps one copy of them (for `Value` it cost
/// ~37 KB of wasm before wasm-opt). The value is the same: a `Value` prints
/// as text that reads back into itself, and both readers call the same
/// visitor methods, so the messages are the same too.
pub(crate) fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_json::from_str(&value.to_string()).map_err(|e| without_position(&e))
}

/// A text reader's error message without its ` at line L column C`.
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(rest) => rest.to_string(),
        None => message,
    }
}

/// The fields of one action object, taken out one by one.
struct Fields(Map<String, Value>);

impl Fields {
    fn value(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key).filter(|v| !v.is_null())
    }

    fn opt<T: DeserializeOwned>(&mut self, key: &str) -> Result<Option<T>, String> {
        match self.value(key) {
            None => Ok(None),
            Some(value) => from_value(&value)
                .map(Some)
                .map_err(|e| field_error(key, e)),
        }
    }

    fn req<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, String> {
        if !self.0.contains_key(key) {
            return Err(field_error(key, format_args!("missing field `{key}`")));
        }
        let value = self.0.remove(key).unwrap_or(Value::Null);
        from_value(&value).map_err(|e| field_error(key, e))
    }

    fn string(&mut self, key: &str) -> Result<String, String> {
        self.req(key)
    }

    fn finish(self, action: &str) -> Result<(), String> {
        match self.0.keys().next() {
            None => Ok(()),
            Some(key) => Err(field_error(
                key,
                format!("unknown field `{key}` for action `{action}`"),
            )),
        }
    }
}

/// Builds an action from its JSON object.
pub fn action_from_value(value: Value) -> Result<Action, String> {
    let Value::Object(mut map) = value else {
        return Err(field_error(
            "",
            format_args!("invalid type: {}, expected an action object", kind(&value)),
        ));
    };
    let tag = match map.remove("action") {
        Some(Value::String(tag)) => tag,
        Some(other) => {
            return Err(field_error(
                "action",
                format!("invalid type: {}, expected an action name", kind(&other)),
            ));
        }
        None => return Err(field_error("action", "missing field `action`")),
    };
    let mut f = Fields(map);
    let action = match tag.as_str() {
        "register_job" => Action::RegisterJob { job: f.req("job")? },
        "update_job" => Action::UpdateJob {
            job: f.string("job")?,
            group: f.opt("group")?,
            count: f.opt("count")?,
            config: f.opt("config")?,
        },
        "stop_job" => Action::StopJob {
            job: f.string("job")?,
        },
        "revert_job" => Action::RevertJob {
            job: f.string("job")?,
            version: f.req("version")?,
            enforce_prior_version: f.opt("enforce_prior_version")?,
        },
        "drain_node" => Action::DrainNode {
            node: f.string("node")?,
            enable: f.opt("enable")?,
        },
        "set_eligibility" => Action::SetEligibility {
            node: f.string("node")?,
            eligible: f.req("eligible")?,
        },
        "heartbeat" => Action::Heartbeat {
            node: f.string("node")?,
        },
        "update_alloc" => Action::UpdateAlloc {
            node: f.string("node")?,
            allocs: f.opt("allocs")?,
        },
        "get_allocs" => Action::GetAllocs {
            node: f.string("node")?,
        },
        "register" => Action::Register {
            node: f.string("node")?,
        },
        "task_fail" => Action::TaskFail {
            alloc: f.string("alloc")?,
            task: f.opt("task")?,
        },
        "task_complete" => Action::TaskComplete {
            alloc: f.string("alloc")?,
            task: f.opt("task")?,
        },
        "task_restart" => Action::TaskRestart {
            alloc: f.string("alloc")?,
            task: f.opt("task")?,
        },
        "link_down" => Action::LinkDown {
            node: f.string("node")?,
        },
        "link_up" => Action::LinkUp {
            node: f.string("node")?,
        },
        "hold" => Action::Hold {
            node: f.string("node")?,
            call: f.opt("call")?,
        },
        "release" => Action::Release {
            node: f.string("node")?,
        },
        "deliver" => Action::Deliver {
            node: f.string("node")?,
            call: f.string("call")?,
        },
        "reorder" => Action::Reorder {
            node: f.string("node")?,
            call: f.string("call")?,
            position: f.req("position")?,
        },
        "drop" => Action::Drop {
            node: f.string("node")?,
            call: f.string("call")?,
        },
        "delay" => Action::Delay {
            node: f.string("node")?,
            call: f.string("call")?,
            by: f.req("by")?,
        },
        "advance" => Action::Advance { by: f.req("by")? },
        "step" => Action::Step {},
        "process_eval" => Action::ProcessEval {
            eval: f.opt("eval")?,
        },
        "run_until_idle" => Action::RunUntilIdle {},
        "assert" => Action::Assert {
            profiles: f.opt("profiles")?,
            note: f.opt("note")?,
            checks: f.req("checks")?,
        },
        "gc" => Action::Gc {},
        "promote_deployment" => Action::PromoteDeployment {
            deployment: f.string("deployment")?,
            groups: f.opt("groups")?,
        },
        "pause_deployment" => Action::PauseDeployment {
            deployment: f.string("deployment")?,
        },
        "resume_deployment" => Action::ResumeDeployment {
            deployment: f.string("deployment")?,
        },
        "fail_deployment" => Action::FailDeployment {
            deployment: f.string("deployment")?,
        },
        "unblock_deployment" => Action::UnblockDeployment {
            deployment: f.string("deployment")?,
        },
        "set_alloc_health" => Action::SetAllocHealth {
            deployment: f.opt("deployment")?,
            healthy: f.opt("healthy")?,
            unhealthy: f.opt("unhealthy")?,
        },
        "note" => Action::Note {
            text: f.string("text")?,
        },
        other => {
            return Err(field_error(
                "action",
                format!(
                    "unknown action `{other}`, expected one of {}",
                    ACTION_NAMES.join(", ")
                ),
            ));
        }
    };
    f.finish(&tag)?;
    Ok(action)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl<'de> serde::Deserialize<'de> for Action {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        action_from_value(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::duration::Dur;
    use crate::scenario::format::{Check, JobSpec, ReportedStatus};

    fn every_action() -> Vec<Action> {
        let job: JobSpec = serde_json::from_value(serde_json::json!({
            "id": "web", "groups": [{"name": "web", "count": 2}]
        }))
        .unwrap();
        let n = || "node-a".to_string();
        let s = |x: &str| x.to_string();
        vec![
            Action::RegisterJob { job },
            Action::UpdateJob {
                job: s("web"),
                group: Some(s("web")),
                count: Some(3),
                config: Some(serde_json::json!({"image": "v2"})),
            },
            Action::UpdateJob {
                job: s("web"),
                group: None,
                count: None,
                config: None,
            },
            Action::StopJob { job: s("web") },
            Action::RevertJob {
                job: s("web"),
                version: 0,
                enforce_prior_version: Some(1),
            },
            Action::RevertJob {
                job: s("web"),
                version: 2,
                enforce_prior_version: None,
            },
            Action::DrainNode {
                node: n(),
                enable: Some(false),
            },
            Action::SetEligibility {
                node: n(),
                eligible: true,
            },
            Action::Heartbeat { node: n() },
            Action::UpdateAlloc {
                node: n(),
                allocs: Some(vec![ReportedStatus {
                    alloc: s("web.web[0]"),
                    status: s("failed"),
                }]),
            },
            Action::GetAllocs { node: n() },
            Action::Register { node: n() },
            Action::TaskFail {
                alloc: s("web.web[0]"),
                task: Some(s("t")),
            },
            Action::TaskComplete {
                alloc: s("web.web[0]"),
                task: None,
            },
            Action::TaskRestart {
                alloc: s("web.web[0]"),
                task: None,
            },
            Action::LinkDown { node: n() },
            Action::LinkUp { node: n() },
            Action::Hold {
                node: n(),
                call: Some(s("#3")),
            },
            Action::Release { node: n() },
            Action::Deliver {
                node: n(),
                call: s("3"),
            },
            Action::Reorder {
                node: n(),
                call: s("3"),
                position: 0,
            },
            Action::Drop {
                node: n(),
                call: s("Node.UpdateStatus"),
            },
            Action::Delay {
                node: n(),
                call: s("3"),
                by: Dur::secs(5),
            },
            Action::Advance { by: Dur::mins(2) },
            Action::Step {},
            Action::ProcessEval {
                eval: Some(s("node-update:web")),
            },
            Action::RunUntilIdle {},
            Action::Assert {
                profiles: Some(vec![s(">=1.5.0")]),
                note: Some(s("why")),
                checks: vec![Check {
                    node: Some(n()),
                    status: Some(s("ready")),
                    ..Check::default()
                }],
            },
            Action::Gc {},
            Action::PromoteDeployment {
                deployment: s("web"),
                groups: Some(vec![s("web")]),
            },
            Action::PromoteDeployment {
                deployment: s("web#1"),
                groups: None,
            },
            Action::PauseDeployment {
                deployment: s("web"),
            },
            Action::ResumeDeployment {
                deployment: s("web"),
            },
            Action::FailDeployment {
                deployment: s("web"),
            },
            Action::UnblockDeployment {
                deployment: s("web"),
            },
            Action::SetAllocHealth {
                deployment: Some(s("web")),
                healthy: Some(vec![s("web.web[0]")]),
                unhealthy: Some(vec![s("web.web[1]")]),
            },
            Action::SetAllocHealth {
                deployment: None,
                healthy: None,
                unhealthy: Some(vec![s("web.web[1]")]),
            },
            Action::Note { text: s("hello") },
        ]
    }

    #[test]
    fn every_action_round_trips_and_names_match_the_serializer() {
        let actions = every_action();
        let mut names: Vec<String> = Vec::new();
        for action in &actions {
            let value = serde_json::to_value(action).unwrap();
            let name = value["action"].as_str().unwrap().to_string();
            assert!(ACTION_NAMES.contains(&name.as_str()), "{name}");
            if !names.contains(&name) {
                names.push(name);
            }
            let back: Action = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(&back, action, "{value}");
            let text = serde_json::to_string(action).unwrap();
            let back: Action = serde_json::from_str(&text).unwrap();
            assert_eq!(&back, action, "{text}");
        }
        assert_eq!(names, ACTION_NAMES, "every action is covered, in order");
    }

    #[test]
    fn errors_name_the_field() {
        let err = |json: Value| action_from_value(json).unwrap_err();
        let e = err(serde_json::json!({"action": "advance", "by": "ten minutes"}));
        assert_eq!(split_field_error(&e).map(|(f, _)| f), Some("by"), "{e}");
        assert!(
            e.contains("invalid duration") || e.contains("duration"),
            "{e}"
        );
        let e = err(serde_json::json!({"action": "fly"}));
        assert_eq!(split_field_error(&e).map(|(f, _)| f), Some("action"), "{e}");
        let e = err(serde_json::json!({"action": "heartbeat", "node": "a", "colour": 1}));
        assert_eq!(split_field_error(&e).map(|(f, _)| f), Some("colour"), "{e}");
        let e = err(serde_json::json!({"action": "heartbeat"}));
        assert!(e.contains("missing field `node`"), "{e}");
        let e = err(serde_json::json!({"node": "a"}));
        assert!(e.contains("missing field `action`"), "{e}");
        let e = err(serde_json::json!(["advance"]));
        assert!(e.contains("expected an action object"), "{e}");
        let e =
            err(serde_json::json!({"action": "set_eligibility", "node": "a", "eligible": "yes"}));
        assert_eq!(
            split_field_error(&e).map(|(f, _)| f),
            Some("eligible"),
            "{e}"
        );
        let e = err(serde_json::json!({"action": "promote_deployment"}));
        assert!(e.contains("missing field `deployment`"), "{e}");
        let e = err(
            serde_json::json!({"action": "promote_deployment", "deployment": "web", "groups": "web"}),
        );
        assert_eq!(split_field_error(&e).map(|(f, _)| f), Some("groups"), "{e}");
        let e = err(serde_json::json!({"action": "set_alloc_health", "healthy": [1]}));
        assert_eq!(
            split_field_error(&e).map(|(f, _)| f),
            Some("healthy"),
            "{e}"
        );
        let e = err(
            serde_json::json!({"action": "pause_deployment", "deployment": "web", "pause": true}),
        );
        assert_eq!(split_field_error(&e).map(|(f, _)| f), Some("pause"), "{e}");
    }

    /// Reading a field through text gives what `serde_json::from_value`
    /// gives: the same value, or an error with the same message.
    #[test]
    fn reading_through_text_matches_from_value() {
        fn same<T>(json: Value)
        where
            T: DeserializeOwned + PartialEq + std::fmt::Debug,
        {
            let want = serde_json::from_value::<T>(json.clone()).map_err(|e| e.to_string());
            assert_eq!(from_value::<T>(&json), want, "{json}");
        }
        use serde_json::json;
        let jobs = [
            json!({"id": "web", "groups": [{"name": "web", "count": 2}]}),
            json!({"id": "web", "groups": [{"name": "web", "count": -2}]}),
            json!({"id": "web", "groups": [{"name": "web", "count": 2.5}]}),
            json!({"id": "web", "groups": [{"name": "web", "count": 1e30}]}),
            json!({"id": "web", "groups": [{"name": "web", "count": "2"}]}),
            json!({"id": "web", "groups": [{"name": "web", "colour": 1}]}),
            json!({"id": "web", "groups": [{"count": 1}]}),
            json!({"id": "web", "groups": {"name": "web"}}),
            json!({"id": "web", "type": "nonsense", "groups": []}),
            json!({"id": 7, "groups": []}),
            json!({"id": "web", "groups": [], "id2": null}),
            json!(["web", []]),
            json!("web"),
            json!(null),
            json!({"id": "wéb \"x\"\n", "groups": [{"name": "w", "count": 1,
                "max_client_disconnect": "nonsense"}]}),
        ];
        for job in jobs {
            same::<JobSpec>(job);
        }
        for value in [
            json!("30s"),
            json!("soon"),
            json!(30),
            json!(null),
            json!([1]),
        ] {
            same::<Dur>(value.clone());
            same::<Option<Dur>>(value);
        }
        for value in [
            json!(1),
            json!(-1),
            json!(1.5),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("1"),
            json!(true),
            json!(null),
        ] {
            same::<u64>(value.clone());
            same::<i64>(value.clone());
            same::<u32>(value.clone());
            same::<bool>(value.clone());
            same::<String>(value.clone());
            same::<Option<Vec<String>>>(value.clone());
            same::<Value>(value);
        }
        same::<Vec<Check>>(json!([{"nonsense": 1}]));
        same::<Vec<ReportedStatus>>(json!(["running", "bogus"]));
        same::<Value>(json!({"a": [1, 2.5, {"b": null}], "c": "d"}));
    }
}
