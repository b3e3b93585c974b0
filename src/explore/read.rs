//! Reading an [`ExploreResult`] or a [`Progress`] back from its JSON by
//! hand: the explore worker writes them (serde's derived `Serialize`) and
//! the page reads them (the worker's messages).
//!
//! Code size: serde's derived `Deserialize` for the result's nine types
//! (with a sequence reader each that JSON written by `Serialize` never
//! uses) cost ~26 KB of the first screen's wasm before wasm-opt. Here the
//! message is read as a `serde_json::Value` (whose reader the script
//! actions already compile) and each type is built by one non-generic
//! function. It reads everything the derived `Serialize` writes, as the
//! derived reader did: fields in any order, unknown fields ignored, a
//! missing `Option` field or `null` as `None`, the fields marked
//! `#[serde(default)]` zero or empty when missing. Its messages for JSON
//! that `Serialize` never writes name the field but are not serde's.

use super::invariant::{CheckContext, Invariant, Violation};
use super::{ExploreResult, InvariantReport, Progress, Reproduction, Stage, Window};
use serde_json::{Map, Value};

type Read<T> = Result<T, String>;

/// The fields of one JSON object.
struct Object<'a>(&'a Map<String, Value>);

impl<'a> Object<'a> {
    fn of(value: &'a Value, what: &str) -> Read<Self> {
        match value {
            Value::Object(map) => Ok(Object(map)),
            _ => Err(format!("{what}: not an object")),
        }
    }

    /// The field's value; `None` when missing.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key)
    }

    fn req(&self, key: &str) -> Read<&'a Value> {
        self.get(key)
            .ok_or_else(|| format!("missing field `{key}`"))
    }

    fn u64(&self, key: &str) -> Read<u64> {
        number(self.req(key)?, key)
    }

    /// A `#[serde(default)]` count: 0 when missing.
    fn u64_or_zero(&self, key: &str) -> Read<u64> {
        self.get(key).map_or(Ok(0), |v| number(v, key))
    }

    fn f64(&self, key: &str) -> Read<f64> {
        self.req(key)?.as_f64().ok_or_else(|| wrong(key))
    }

    fn bool(&self, key: &str) -> Read<bool> {
        self.req(key)?.as_bool().ok_or_else(|| wrong(key))
    }

    fn string(&self, key: &str) -> Read<String> {
        text(self.req(key)?, key)
    }

    /// An `Option` field read with `item`: `None` when missing or `null`.
    fn opt<T>(&self, key: &str, item: impl FnOnce(&Value) -> Read<T>) -> Read<Option<T>> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => item(v).map(Some),
        }
    }

    /// A list read item by item; with `default`, empty when missing.
    fn list<T>(&self, key: &str, default: bool, item: fn(&Value) -> Read<T>) -> Read<Vec<T>> {
        let items = match self.get(key) {
            None if default => return Ok(Vec::new()),
            _ => self.req(key)?,
        };
        let items = items.as_array().ok_or_else(|| wrong(key))?;
        items
            .iter()
            .map(item)
            .collect::<Read<Vec<T>>>()
            .map_err(|e| format!("{key}: {e}"))
    }

    fn invariant(&self) -> Read<Invariant> {
        let name = self.string("invariant")?;
        Invariant::parse(&name).ok_or_else(|| format!("unknown invariant `{name}`"))
    }
}

fn wrong(key: &str) -> String {
    format!("field `{key}`: invalid type")
}

fn number<T: TryFrom<u64>>(value: &Value, key: &str) -> Read<T> {
    value
        .as_u64()
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| wrong(key))
}

fn text(value: &Value, key: &str) -> Read<String> {
    value.as_str().map(str::to_string).ok_or_else(|| wrong(key))
}

fn string_item(value: &Value) -> Read<String> {
    text(value, "item")
}

fn window(value: &Value) -> Read<Window> {
    let o = Object::of(value, "window")?;
    Ok(Window {
        start: number(o.req("start")?, "start")?,
        end: number(o.req("end")?, "end")?,
    })
}

fn violation(value: &Value) -> Read<Violation> {
    let o = Object::of(value, "violation")?;
    Ok(Violation {
        invariant: o.invariant()?,
        detail: o.string("detail")?,
    })
}

fn reproduction(value: &Value) -> Read<Reproduction> {
    let o = Object::of(value, "shortest")?;
    let context = Object::of(o.req("context")?, "context")?;
    Ok(Reproduction {
        invariant: o.invariant()?,
        violations: o.list("violations", false, violation)?,
        length: number(o.req("length")?, "length")?,
        order: o.list("order", false, string_item)?,
        scenario: crate::scenario::action_de::from_value(o.req("scenario")?)
            .map_err(|e| format!("scenario: {e}"))?,
        at_idle: o.bool("at_idle")?,
        context: CheckContext {
            window_index: context.u64("window_index")?,
        },
        link: o.opt("link", |v| text(v, "link"))?,
    })
}

fn report(value: &Value) -> Read<InvariantReport> {
    let o = Object::of(value, "invariant report")?;
    Ok(InvariantReport {
        invariant: o.invariant()?,
        name: o.string("name")?,
        explanation: o.string("explanation")?,
        enabled: o.bool("enabled")?,
        violating_orders: o.u64("violating_orders")?,
        shortest: o.opt("shortest", reproduction)?,
        details: o.list("details", true, string_item)?,
    })
}

fn result(value: &Value) -> Read<ExploreResult> {
    let o = Object::of(value, "result")?;
    Ok(ExploreResult {
        scenario: o.string("scenario")?,
        profile: o.string("profile")?,
        seed: o.u64("seed")?,
        window: window(o.req("window")?)?,
        reconnecting_nodes: o.list("reconnecting_nodes", false, string_item)?,
        exhaustive: o.bool("exhaustive")?,
        orders: o.u64("orders")?,
        complete_orders: o.u64("complete_orders")?,
        pruned_orders: o.u64("pruned_orders")?,
        postponed_orders: o.u64_or_zero("postponed_orders")?,
        subsumed_orders: o.u64_or_zero("subsumed_orders")?,
        unsettled_orders: o.u64("unsettled_orders")?,
        violating_orders: o.u64("violating_orders")?,
        states: o.u64("states")?,
        distinct_states: o.u64("distinct_states")?,
        idle_states: o.u64_or_zero("idle_states")?,
        dedup_ratio: o.f64("dedup_ratio")?,
        space_size: o.f64("space_size")?,
        invariants: o.list("invariants", false, report)?,
    })
}

fn progress(value: &Value) -> Read<Progress> {
    let o = Object::of(value, "progress")?;
    let stage = match o.req("stage")?.as_str() {
        Some("exhaustive") => Stage::Exhaustive,
        Some("sampling") => Stage::Sampling,
        Some("done") => Stage::Done,
        _ => return Err(wrong("stage")),
    };
    Ok(Progress {
        stage,
        done: o.bool("done")?,
        orders: o.u64("orders")?,
        max_orders: o.u64("max_orders")?,
        fraction: o.f64("fraction")?,
        states: o.u64("states")?,
        violating_orders: o.u64("violating_orders")?,
        space_estimate: o.f64("space_estimate")?,
    })
}

/// Reads a value with `read`, through the `Value` reader.
fn deserialize<'de, D, T>(deserializer: D, read: fn(&Value) -> Read<T>) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = <Value as serde::Deserialize>::deserialize(deserializer)?;
    read(&value).map_err(serde::de::Error::custom)
}

impl<'de> serde::Deserialize<'de> for ExploreResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer, result)
    }
}

impl<'de> serde::Deserialize<'de> for Progress {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer, progress)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ExploreConfig, Explorer, SearchMode};
    use super::*;

    const UPDATE: &str = include_str!("../../tests/data/explore/plain-reconnect-update.json");

    /// A result with reproductions (violations, an order, a scenario, a
    /// link), details and an unviolated invariant.
    fn found() -> ExploreResult {
        let scenario = crate::scenario::parse(UPDATE).unwrap_or_else(|e| panic!("{e}"));
        let config = ExploreConfig {
            profile: Some("1.4.2".to_string()),
            max_orders: 40,
            mode: SearchMode::Random,
            ..ExploreConfig::default()
        };
        Explorer::new(&scenario, config)
            .unwrap_or_else(|e| panic!("{e}"))
            .run()
    }

    fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
        let text = serde_json::to_string(value).unwrap_or_default();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    #[test]
    fn a_result_reads_back_as_written() {
        let result = found();
        assert!(
            result.invariants.iter().any(|r| r.shortest.is_some())
                && result.invariants.iter().any(|r| r.shortest.is_none())
                && result.invariants.iter().any(|r| !r.details.is_empty()),
            "the fixture should cover every field: {:?}",
            result.violated()
        );
        assert_eq!(round_trip(&result), result);
        let boxed = Box::new(result);
        assert_eq!(round_trip(&boxed), boxed);
    }

    /// A reproduction's scenario is written through its tree
    /// (`json::serialize_through_tree`): the same text and `Value` as
    /// serde_json makes of the scenario itself.
    #[test]
    fn a_reproductions_scenario_is_written_as_serde_json_writes_it() {
        let result = found();
        let mut seen = 0;
        for shortest in result.invariants.iter().filter_map(|r| r.shortest.as_ref()) {
            let text = serde_json::to_string(shortest).unwrap_or_default();
            let scenario = serde_json::to_string(&shortest.scenario).unwrap_or_default();
            assert!(
                text.contains(&format!(",\"scenario\":{scenario},")),
                "{text}"
            );
            let pretty = serde_json::to_string_pretty(shortest).unwrap_or_default();
            let scenario = serde_json::to_string_pretty(&shortest.scenario).unwrap_or_default();
            assert!(pretty.contains(&scenario.replace('\n', "\n  ")), "{pretty}");
            let value = serde_json::to_value(shortest).unwrap_or_default();
            assert_eq!(
                value["scenario"],
                serde_json::to_value(&shortest.scenario).unwrap_or_default()
            );
            seen += 1;
        }
        assert!(seen > 0, "the fixture has no reproduction");
    }

    #[test]
    fn progress_reads_back_as_written_at_every_stage() {
        for (stage, done) in [
            (Stage::Exhaustive, false),
            (Stage::Sampling, false),
            (Stage::Done, true),
        ] {
            let progress = Progress {
                stage,
                done,
                orders: 7,
                max_orders: 100,
                fraction: 0.07,
                states: 1234,
                violating_orders: 2,
                space_estimate: 3.5e12,
            };
            assert_eq!(round_trip(&progress), progress);
        }
    }

    #[test]
    fn defaulted_fields_may_be_missing_and_others_may_not() {
        let mut value = serde_json::to_value(found()).unwrap_or_default();
        let mut edit = |f: &dyn Fn(&mut Map<String, Value>)| {
            if let Value::Object(map) = &mut value {
                f(map);
            }
            result(&value)
        };
        let read = edit(&|map| {
            for key in ["postponed_orders", "subsumed_orders", "idle_states"] {
                map.remove(key);
            }
            map.insert("unknown".into(), Value::Bool(true));
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                read.postponed_orders,
                read.subsumed_orders,
                read.idle_states
            ),
            (0, 0, 0)
        );
        assert_eq!(
            edit(&|map| {
                map.remove("states");
            })
            .map(|_| ()),
            Err("missing field `states`".to_string())
        );
        assert_eq!(
            edit(&|map| {
                map.insert("states".into(), Value::from(-1));
            })
            .map(|_| ()),
            Err("field `states`: invalid type".to_string())
        );
    }

    #[test]
    fn a_missing_option_or_null_reads_as_none() {
        let mut value = serde_json::to_value(found()).unwrap_or_default();
        let reports = value["invariants"].as_array_mut().map(std::mem::take);
        let mut reports = reports.unwrap_or_default();
        for report in &mut reports {
            if let Some(map) = report.as_object_mut() {
                map.remove("shortest");
                map.remove("details");
            }
        }
        reports[0]["shortest"] = Value::Null;
        value["invariants"] = Value::Array(reports);
        let read = result(&value).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            read.invariants
                .iter()
                .all(|r| r.shortest.is_none() && r.details.is_empty())
        );
    }
}
