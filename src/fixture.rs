//! The reconciler conformance fixtures (`shared/conformance/FORMAT.md`,
//! format 1): reading a fixture, running it, writing the result in the
//! `expect` shape, and comparing a result with `expect` by the rules of
//! `compare.py`.
//!
//! Reading never panics: a fixture that is not JSON, or breaks the format
//! (wrong type, missing key, bad time), is refused with a [`FixtureError`]
//! that names the file and the JSON path. The library does no I/O: callers
//! pass the text and the file name.

use crate::model::{Allocation, Deployment, Job, Node, Time, embed_jobs};
use crate::reconciler::cluster::{
    self, ClusterInput, ReconcileOptions, ReconcileResult, UpdateType,
};
use crate::reconciler::node::{NodeFixtureInput, compute_fixture};
use crate::reconciler::picker::{Pick, Picker};
use crate::reconciler::reasons::AllocDecision;
use crate::reconciler::rules::ReconcilerRules;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Why a fixture could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixtureError {
    /// The text is not JSON.
    #[error("{file}: not valid JSON: {message}")]
    Json {
        /// The file name.
        file: String,
        /// serde_json's message (with line and column).
        message: String,
    },
    /// The JSON breaks the fixture format.
    #[error("{file}: at {path}: {message}")]
    Format {
        /// The file name.
        file: String,
        /// JSON path of the offending value, e.g. `$.input.allocs[0].CreateTime`.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The kind of fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureKind {
    /// Service/batch reconciler.
    Cluster,
    /// System/sysbatch reconciler.
    Node,
}

/// A fixture's input, typed.
#[derive(Debug, Clone)]
pub enum FixtureInput {
    /// Kind `cluster`.
    Cluster(Box<ClusterFixtureInput>),
    /// Kind `node`.
    Node(Box<NodeFixtureInput>),
}

/// One fixture file.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The file name it was read from.
    pub file: String,
    /// `kind`.
    pub kind: FixtureKind,
    /// `name`.
    pub name: String,
    /// `source`: the Nomad test it follows.
    pub source: String,
    /// `note`.
    pub note: String,
    /// `input`.
    pub input: FixtureInput,
    /// `expect`, kept as JSON.
    pub expect: Value,
}

/// How each existing alloc compares with the job (the fixture's `update`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateSpec {
    /// For allocs not listed.
    pub default: UpdateKind,
    /// Per alloc ID.
    pub per_alloc: BTreeMap<String, UpdateKind>,
}

impl Default for UpdateSpec {
    fn default() -> Self {
        UpdateSpec {
            default: UpdateKind::Ignore,
            per_alloc: BTreeMap::new(),
        }
    }
}

/// One of `ignore`, `inplace`, `destructive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateKind {
    /// No change.
    Ignore,
    /// In-place update.
    Inplace,
    /// Destructive update.
    Destructive,
}

impl<'de> Deserialize<'de> for UpdateSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(UpdateKind),
            Map {
                #[serde(default = "ignore_kind")]
                default: UpdateKind,
                #[serde(default)]
                per_alloc: BTreeMap<String, UpdateKind>,
            },
        }
        fn ignore_kind() -> UpdateKind {
            UpdateKind::Ignore
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "want \"ignore\", \"inplace\", \"destructive\" or {\"default\": ..., \"per_alloc\": {...}}",
            )
        })? {
            Raw::One(k) => Ok(UpdateSpec { default: k, per_alloc: BTreeMap::new() }),
            Raw::Map { default, per_alloc } => Ok(UpdateSpec { default, per_alloc }),
        }
    }
}

/// The `input` object of a `kind: cluster` fixture.
#[derive(Debug, Clone, Deserialize)]
pub struct ClusterFixtureInput {
    /// The clock (required).
    pub now: Time,
    /// The job; `null` = purged.
    #[serde(default)]
    pub job: Option<Job>,
    /// Needed when `job` is null.
    #[serde(default)]
    pub job_id: Option<String>,
    /// `JobIsBatch` (default: the job's type is batch).
    #[serde(default)]
    pub batch: Option<bool>,
    /// `DeploymentCurrent`.
    #[serde(default)]
    pub deployment: Option<Deployment>,
    /// `DeploymentOld` (recomputed by the reconciler, accepted for completeness).
    #[serde(default)]
    pub deployment_old: Option<Deployment>,
    /// `DeploymentPaused`.
    #[serde(default)]
    pub deployment_paused: bool,
    /// `DeploymentFailed`.
    #[serde(default)]
    pub deployment_failed: bool,
    /// The eval ID.
    #[serde(default)]
    pub eval_id: String,
    /// The eval priority (default 50).
    #[serde(default = "default_priority")]
    pub eval_priority: i64,
    /// Tainted nodes; `null` = garbage-collected.
    #[serde(default, deserialize_with = "crate::model::null_as_default")]
    pub tainted_nodes: BTreeMap<String, Option<Node>>,
    /// Existing allocs.
    #[serde(default, deserialize_with = "crate::model::null_as_default")]
    pub allocs: Vec<Allocation>,
    /// The alloc update function.
    #[serde(default)]
    pub update: UpdateSpec,
    /// A fixed picker answer.
    #[serde(default)]
    pub picker: Option<Pick>,
}

fn default_priority() -> i64 {
    50
}

impl ClusterFixtureInput {
    /// The reconciler input this fixture describes.
    pub fn to_cluster_input(&self) -> ClusterInput<'static> {
        let mut allocs = self.allocs.clone();
        embed_jobs(&mut allocs, self.job.as_ref());
        ClusterInput {
            job_id: self
                .job_id
                .clone()
                .or_else(|| self.job.as_ref().map(|j| j.id.clone()))
                .unwrap_or_default()
                .into(),
            job_is_batch: self.batch.unwrap_or_else(|| {
                self.job
                    .as_ref()
                    .is_some_and(|j| j.job_type == crate::model::JobType::Batch)
            }),
            job: self.job.clone().map(Rc::new),
            deployment: self.deployment.clone(),
            deployment_paused: self.deployment_paused,
            deployment_failed: self.deployment_failed,
            allocs: allocs.into_iter().map(Rc::new).collect(),
            keys: &[],
            eval_id: self.eval_id.clone().into(),
            eval_priority: self.eval_priority,
            tainted_nodes: Rc::new(self.tainted_nodes.clone()),
            now: self.now,
        }
    }

    /// The update kind of one alloc.
    pub fn update_kind(&self, alloc_id: &str) -> UpdateKind {
        self.update
            .per_alloc
            .get(alloc_id)
            .copied()
            .unwrap_or(self.update.default)
    }

    /// Runs the cluster reconciler on this input with `rules`.
    pub fn run(&self, rules: ReconcilerRules) -> ReconcileResult {
        self.run_on(&self.to_cluster_input(), rules)
    }

    /// [`ClusterFixtureInput::run`], with the run's reason records (the
    /// result names each record's alloc by its position in the input).
    pub fn run_explained(&self, rules: ReconcilerRules) -> (ReconcileResult, Vec<AllocDecision>) {
        let input = self.to_cluster_input();
        let result = self.run_on(&input, rules);
        let decisions = result.decisions.to_vec(&input.allocs);
        (result, decisions)
    }

    /// Runs the cluster reconciler on `input` (made by
    /// [`ClusterFixtureInput::to_cluster_input`]) with `rules`.
    fn run_on(&self, input: &ClusterInput, rules: ReconcilerRules) -> ReconcileResult {
        let options = ReconcileOptions {
            rules,
            picker: self.picker.map_or(Picker::Strategy, Picker::Fixed),
            ..ReconcileOptions::default()
        };
        let update = |alloc: &Allocation, job: &Job, _tg: &crate::model::TaskGroup| match self
            .update_kind(&alloc.id)
        {
            UpdateKind::Ignore => UpdateType::Ignore,
            UpdateKind::Destructive => UpdateType::Destructive,
            UpdateKind::Inplace => {
                let mut updated = alloc.clone();
                updated.job = Some(Rc::new(job.clone()));
                UpdateType::InPlace(Rc::new(updated))
            }
        };
        let mut n = 0u64;
        let mut ids = || {
            n += 1;
            format!("00000000-0000-0000-0000-{n:012}")
        };
        cluster::reconcile(input, &options, &update, &mut ids)
    }
}

fn format_err(file: &str, path: impl Into<String>, message: impl Into<String>) -> FixtureError {
    FixtureError::Format {
        file: file.to_string(),
        path: path.into(),
        message: message.into(),
    }
}

/// `serde_path_to_error`'s path as `$.a.b[0]`.
fn json_path(prefix: &str, path: &serde_path_to_error::Path) -> String {
    let p = path.to_string();
    if p == "." {
        prefix.to_string()
    } else if p.starts_with('[') {
        format!("{prefix}{p}")
    } else {
        format!("{prefix}.{p}")
    }
}

fn typed<T: serde::de::DeserializeOwned>(
    file: &str,
    prefix: &str,
    value: &Value,
) -> Result<T, FixtureError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = json_path(prefix, e.path());
        format_err(file, path, e.into_inner().to_string())
    })
}

/// The largest group count a fixture may ask for: the reconciler's work
/// grows with the count, so an absurd one would stall the run.
pub const MAX_GROUP_COUNT: u32 = 100_000;

fn check_counts(file: &str, job: Option<&Job>) -> Result<(), FixtureError> {
    let groups = job.map(|j| j.task_groups.as_slice()).unwrap_or_default();
    for (i, tg) in groups.iter().enumerate() {
        if tg.count > MAX_GROUP_COUNT {
            return Err(format_err(
                file,
                format!("$.input.job.TaskGroups[{i}].Count"),
                format!("count {} is over the limit of {MAX_GROUP_COUNT}", tg.count),
            ));
        }
    }
    Ok(())
}

/// Reads a fixture from its text; `file` names it in errors.
pub fn parse_fixture(file: &str, text: &str) -> Result<Fixture, FixtureError> {
    let root: Value = serde_json::from_str(text).map_err(|e| FixtureError::Json {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let Value::Object(obj) = &root else {
        return Err(format_err(file, "$", "want an object"));
    };
    match obj.get("format") {
        Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
        Some(other) => return Err(format_err(file, "$.format", format!("want 1, got {other}"))),
        None => return Err(format_err(file, "$.format", "missing key")),
    }
    let kind = match obj.get("kind").and_then(Value::as_str) {
        Some("cluster") => FixtureKind::Cluster,
        Some("node") => FixtureKind::Node,
        Some(other) => {
            return Err(format_err(
                file,
                "$.kind",
                format!("want \"cluster\" or \"node\", got {other:?}"),
            ));
        }
        None => return Err(format_err(file, "$.kind", "missing key or not a string")),
    };
    let text_field = |key: &str, required: bool| -> Result<String, FixtureError> {
        match obj.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            None | Some(Value::Null) if !required => Ok(String::new()),
            None => Err(format_err(file, format!("$.{key}"), "missing key")),
            Some(other) => Err(format_err(
                file,
                format!("$.{key}"),
                format!("want a string, got {other}"),
            )),
        }
    };
    let name = text_field("name", true)?;
    let source = text_field("source", false)?;
    let note = text_field("note", false)?;
    let input = obj
        .get("input")
        .ok_or_else(|| format_err(file, "$.input", "missing key"))?;
    let Value::Object(input_obj) = input else {
        return Err(format_err(file, "$.input", "want an object"));
    };
    if !input_obj.contains_key("now") {
        return Err(format_err(file, "$.input.now", "missing key"));
    }
    let expect = obj
        .get("expect")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if !expect.is_object() {
        return Err(format_err(file, "$.expect", "want an object"));
    }
    let input = match kind {
        FixtureKind::Cluster => {
            let typed_input: ClusterFixtureInput = typed(file, "$.input", input)?;
            if typed_input.job.is_none() && typed_input.job_id.is_none() {
                return Err(format_err(
                    file,
                    "$.input.job_id",
                    "needed when job is null",
                ));
            }
            check_counts(file, typed_input.job.as_ref())?;
            FixtureInput::Cluster(Box::new(typed_input))
        }
        FixtureKind::Node => {
            let typed_input: NodeFixtureInput = typed(file, "$.input", input)?;
            check_counts(file, typed_input.job.as_ref())?;
            FixtureInput::Node(Box::new(typed_input))
        }
    };
    Ok(Fixture {
        file: file.to_string(),
        kind,
        name,
        source,
        note,
        input,
        expect,
    })
}

impl Fixture {
    /// Runs the fixture with HEAD's rules and returns the result JSON in
    /// the `expect` shape, every key present.
    pub fn run(&self) -> Value {
        match &self.input {
            FixtureInput::Cluster(input) => {
                cluster_result_json(&input.run(ReconcilerRules::default()))
            }
            FixtureInput::Node(input) => {
                serde_json::to_value(compute_fixture(input)).unwrap_or(Value::Null)
            }
        }
    }

    /// Compares a result with `expect` as `compare.py` does; empty = pass.
    pub fn compare(&self, result: &Value) -> Vec<String> {
        match self.kind {
            FixtureKind::Cluster => compare_cluster(&self.expect, result),
            FixtureKind::Node => compare_node(&self.expect, result),
        }
    }
}

/// The 12 counters of `desired_tg_updates`, in compare.py's order.
pub const TG_FIELDS: [&str; 12] = [
    "Ignore",
    "Place",
    "Migrate",
    "Stop",
    "InPlaceUpdate",
    "DestructiveUpdate",
    "Canary",
    "Preemptions",
    "Disconnect",
    "Reconnect",
    "RescheduleNow",
    "RescheduleLater",
];
const COUNTS: [&str; 7] = [
    "place",
    "stop",
    "destructive",
    "inplace",
    "attribute_updates",
    "disconnect_updates",
    "reconnect_updates",
];
const MULTISETS: [&str; 9] = [
    "place_names",
    "place_previous",
    "stop_ids",
    "destructive_ids",
    "inplace_ids",
    "reconnect_ids",
    "disconnect_ids",
    "attribute_update_ids",
    "place_rescheduled",
];
const NODE_COUNTS: [&str; 8] = [
    "place",
    "update",
    "migrate",
    "stop",
    "ignore",
    "lost",
    "disconnecting",
    "reconnecting",
];
const NODE_MULTISETS: [&str; 8] = [
    "place_nodes",
    "update_ids",
    "migrate_ids",
    "stop_ids",
    "ignore_ids",
    "lost_ids",
    "disconnecting_ids",
    "reconnecting_ids",
];

/// A cluster result as the `expect` JSON, every key present.
pub fn cluster_result_json(r: &ReconcileResult) -> Value {
    let ids = |v: Vec<&str>| {
        Value::Array(
            v.into_iter()
                .map(|s| Value::String(s.to_string()))
                .collect(),
        )
    };
    let mut tg = Map::new();
    for (group, du) in &r.desired_tg_updates {
        tg.insert(
            group.clone(),
            serde_json::to_value(du).unwrap_or(Value::Null),
        );
    }
    let mut followups = Map::new();
    let mut waits = Map::new();
    for (group, evals) in &r.desired_followup_evals {
        followups.insert(group.clone(), json!(evals.len()));
        waits.insert(
            group.clone(),
            Value::Array(
                evals
                    .iter()
                    .map(|e| json!(e.wait_until.to_rfc3339()))
                    .collect(),
            ),
        );
    }
    json!({
        "place": r.place.len(),
        "stop": r.stop.len(),
        "destructive": r.destructive_update.len(),
        "inplace": r.inplace_update.len(),
        "attribute_updates": r.attribute_updates.len(),
        "disconnect_updates": r.disconnect_updates.len(),
        "reconnect_updates": r.reconnect_updates.len(),
        "desired_tg_updates": tg,
        "create_deployment": r.deployment.as_ref().map(|d| serde_json::to_value(d).unwrap_or(Value::Null)),
        "deployment_updates": serde_json::to_value(&r.deployment_updates).unwrap_or(Value::Null),
        "place_names": ids(r.place.iter().map(|p| p.name.as_str()).collect()),
        "place_previous": Value::Array(r.place.iter().map(|p| p.previous_alloc.as_ref().map_or(Value::Null, |a| json!(a.id))).collect()),
        "stop_ids": ids(r.stop.iter().map(|s| s.alloc.id.as_str()).collect()),
        "destructive_ids": ids(r.destructive_update.iter().map(|d| d.stop_alloc.id.as_str()).collect()),
        "inplace_ids": ids(r.inplace_update.iter().map(|a| a.id.as_str()).collect()),
        "reconnect_ids": ids(r.reconnect_updates.ids().map(String::as_str).collect()),
        "disconnect_ids": ids(r.disconnect_updates.ids().map(String::as_str).collect()),
        "attribute_update_ids": ids(r.attribute_updates.ids().map(String::as_str).collect()),
        "followup_evals": followups,
        "followup_wait_until": waits,
        "place_rescheduled": ids(r.place.iter().filter(|p| p.reschedule && p.previous_alloc.is_some()).map(|p| p.name.as_str()).collect()),
    })
}

/// compare.py's `instant`: an RFC 3339 time as a comparable value.
fn instant(v: &Value) -> String {
    v.as_str()
        .and_then(|s| Time::parse_rfc3339(s).ok())
        .map_or_else(
            || v.to_string(),
            |t| format!("{:020}", t.unix_nanos() as i128 - i64::MIN as i128),
        )
}

fn is_empty_like(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

fn py(v: &Value) -> String {
    v.to_string()
}

/// compare.py's `subset_diffs`.
fn subset_diffs(path: &str, want: &Value, got: Option<&Value>) -> Vec<String> {
    if let Value::Object(w) = want {
        let Some(Value::Object(g)) = got else {
            return vec![format!(
                "{path}: want an object, got {}",
                got.map_or("None".into(), py)
            )];
        };
        let mut out = Vec::new();
        for (k, v) in w {
            if k == "ID" && path.starts_with("create_deployment") {
                continue;
            }
            out.extend(subset_diffs(&format!("{path}.{k}"), v, g.get(k)));
        }
        return out;
    }
    let want_empty = is_empty_like(Some(want));
    if want_empty && is_empty_like(got) {
        return vec![];
    }
    if !json_eq(Some(want), got) {
        return vec![format!(
            "{path}: want {}, got {}",
            py(want),
            got.map_or("None".into(), py)
        )];
    }
    vec![]
}

/// Python `==` on JSON values: numbers compare by value (1 == 1.0).
fn json_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(Some(p), Some(q)))
        }
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            x.len() == y.len() && x.iter().all(|(k, v)| json_eq(Some(v), y.get(k)))
        }
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn count_of(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(json!(0))
}

fn multiset(v: Option<&Value>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    if let Some(Value::Array(items)) = v {
        for i in items {
            *m.entry(i.to_string()).or_insert(0) += 1;
        }
    }
    m
}

fn sorted_list(v: Option<&Value>) -> String {
    let mut items: Vec<String> = match v {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .collect(),
        _ => vec![],
    };
    items.sort();
    format!("{items:?}")
}

fn compare_multisets(
    keys: &[&str],
    expect: &Map<String, Value>,
    result: &Value,
    diffs: &mut Vec<String>,
) {
    for key in keys {
        if let Some(want) = expect.get(*key) {
            let got = result.get(*key);
            if multiset(Some(want)) != multiset(got) {
                diffs.push(format!(
                    "{key}: want {}, got {}",
                    sorted_list(Some(want)),
                    sorted_list(got)
                ));
            }
        }
    }
}

fn compare_deployments(expect: &Map<String, Value>, result: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let want = expect.get("create_deployment").filter(|v| !v.is_null());
    let got = result.get("create_deployment").filter(|v| !v.is_null());
    match (want, got) {
        (None, Some(g)) => diffs.push(format!("create_deployment: want none, got {}", py(g))),
        (Some(_), None) => diffs.push("create_deployment: want one, got none".into()),
        (Some(w), Some(g)) => diffs.extend(subset_diffs("create_deployment", w, Some(g))),
        (None, None) => {}
    }
    let empty = Vec::new();
    let want_upd = expect
        .get("deployment_updates")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let got_upd = result
        .get("deployment_updates")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    if want_upd.len() != got_upd.len() {
        diffs.push(format!(
            "deployment_updates: want {}, got {}: {}",
            want_upd.len(),
            got_upd.len(),
            Value::Array(got_upd.clone())
        ));
    } else {
        for (i, (w, g)) in want_upd.iter().zip(got_upd).enumerate() {
            diffs.extend(subset_diffs(
                &format!("deployment_updates[{i}]"),
                w,
                Some(g),
            ));
        }
    }
    diffs
}

/// The integer counters: absent in `expect` means 0, compared for equality.
fn compare_counts(
    keys: &[&str],
    expect: &Map<String, Value>,
    result: &Value,
    diffs: &mut Vec<String>,
) {
    for key in keys {
        let want = count_of(expect.get(*key));
        let got = result.get(*key);
        if !json_eq(Some(&want), got) {
            diffs.push(format!(
                "{key}: want {want}, got {}",
                got.map_or("None".into(), py)
            ));
        }
    }
}

/// compare.py's `compare` for `kind: cluster`.
pub fn compare_cluster(expect: &Value, result: &Value) -> Vec<String> {
    let empty = Map::new();
    let expect = expect.as_object().unwrap_or(&empty);
    let mut diffs = Vec::new();
    compare_counts(&COUNTS, expect, result, &mut diffs);
    let want_tg = expect
        .get("desired_tg_updates")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let got_tg = match result.get("desired_tg_updates") {
        Some(Value::Object(o)) => o,
        other => {
            diffs.push(format!(
                "desired_tg_updates: missing or not an object: {}",
                other.map_or("None".into(), py)
            ));
            &empty
        }
    };
    let mut groups: Vec<&String> = want_tg.keys().chain(got_tg.keys()).collect();
    groups.sort();
    groups.dedup();
    for group in groups {
        let (Some(w), Some(g)) = (want_tg.get(group), got_tg.get(group)) else {
            if want_tg.contains_key(group) {
                diffs.push(format!("desired_tg_updates.{group}: missing from result"));
            } else {
                diffs.push(format!(
                    "desired_tg_updates.{group}: not expected, got {}",
                    py(&got_tg[group])
                ));
            }
            continue;
        };
        for field in TG_FIELDS {
            let want = count_of(w.get(field));
            let got = count_of(g.get(field));
            if !json_eq(Some(&want), Some(&got)) {
                diffs.push(format!(
                    "desired_tg_updates.{group}.{field}: want {want}, got {got}"
                ));
            }
        }
    }
    diffs.extend(compare_deployments(expect, result));
    compare_multisets(&MULTISETS, expect, result, &mut diffs);
    if let Some(want) = expect.get("followup_evals") {
        let nonzero = |v: Option<&Value>| -> BTreeMap<String, String> {
            v.and_then(Value::as_object)
                .map(|o| {
                    o.iter()
                        .filter(|(_, n)| !(n.is_null() || n.as_f64() == Some(0.0)))
                        .map(|(g, n)| (g.clone(), n.to_string()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (w, g) = (nonzero(Some(want)), nonzero(result.get("followup_evals")));
        if w != g {
            diffs.push(format!("followup_evals: want {w:?}, got {g:?}"));
        }
    }
    if let Some(Value::Object(want_all)) = expect.get("followup_wait_until") {
        let got_all = result.get("followup_wait_until");
        for (group, times) in want_all {
            let got = got_all.and_then(|g| g.get(group));
            let mut w: Vec<String> = times
                .as_array()
                .map(|a| a.iter().map(instant).collect())
                .unwrap_or_default();
            let mut g: Vec<String> = got
                .and_then(Value::as_array)
                .map(|a| a.iter().map(instant).collect())
                .unwrap_or_default();
            w.sort();
            g.sort();
            if w != g {
                diffs.push(format!(
                    "followup_wait_until.{group}: want {}, got {}",
                    sorted_list(Some(times)),
                    sorted_list(got)
                ));
            }
        }
    }
    diffs
}

/// compare.py's `compare_node` for `kind: node`.
pub fn compare_node(expect: &Value, result: &Value) -> Vec<String> {
    let empty = Map::new();
    let expect = expect.as_object().unwrap_or(&empty);
    let mut diffs = Vec::new();
    compare_counts(&NODE_COUNTS, expect, result, &mut diffs);
    compare_multisets(&NODE_MULTISETS, expect, result, &mut diffs);
    diffs.extend(compare_deployments(expect, result));
    diffs
}
