//! Explore-mode diagnostics: why the distinct states of a search grow.
//! Along seeded random walks, every pair of moves `a`, `b` offered by a
//! state is taken in both orders (`a·b` and `b·a`), and the two states
//! reached are compared by fingerprint; where they differ, their worlds
//! are compared as JSON (generated IDs and the fields canonical
//! fingerprints leave out compared as those do), and the paths of the
//! values that differ are counted. Pure and deterministic (seeded).

use super::fingerprint::{self, counter_field, looks_like_id};
use super::{Choice, ClientLoop, Explorer, PathState};
use crate::sim::rng::Rng;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What [`Explorer::commute_report`] found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CommuteReport {
    /// States whose pairs of moves were tried.
    pub states: u64,
    /// Pairs of moves that could be taken in both orders.
    pub pairs: u64,
    /// Of those, pairs whose two orders reach one fingerprint.
    pub commuting: u64,
    /// Pairs where one move disables the other (or ends the order).
    pub disabling: u64,
    /// By kinds of the two moves (`kind a | kind b`, sorted, and whether
    /// they involve the same node): (pairs, commuting).
    pub by_kind: BTreeMap<String, (u64, u64)>,
    /// By path of a value that differs (IDs as `<id>`, array places as
    /// `[]`): how many non-commuting pairs differ there.
    pub paths: BTreeMap<String, u64>,
    /// By the set of differing paths' classes (see [`class`]): how many
    /// non-commuting pairs differ in exactly that set.
    pub signatures: BTreeMap<String, u64>,
}

/// The kind of a move, for [`CommuteReport::by_kind`].
fn kind(state: &PathState, choice: &Choice) -> (String, Option<String>) {
    match choice {
        Choice::Step => {
            let sim = &state.sim;
            let text = match sim.queue.iter().next() {
                Some((tick, _)) if tick > sim.tick => "step (time passes)".to_string(),
                Some((_, event)) => format!("step ({})", event_name(event)),
                None => "step".to_string(),
            };
            (text, None)
        }
        Choice::Deliver { node, rpc, .. } => (format!("deliver {rpc}"), Some(node.clone())),
        Choice::ProcessEval { .. } => ("process eval".to_string(), None),
        Choice::FireLoop { node, client_loop } => (
            format!(
                "fire {}",
                match client_loop {
                    ClientLoop::Heartbeat => "heartbeat",
                    ClientLoop::Watch => "watch",
                    ClientLoop::AllocSync => "alloc sync",
                }
            ),
            Some(node.clone()),
        ),
    }
}

fn event_name(event: &crate::sim::Event) -> String {
    let text = serde_json::to_value(event)
        .ok()
        .and_then(|v| match v {
            Value::Object(map) => map.keys().next().cloned(),
            Value::String(s) => Some(s),
            _ => None,
        })
        .unwrap_or_default();
    text.to_lowercase()
}

/// The class of a differing path: its last named component, with the
/// component above it when that is a field of a nested object.
pub fn class(path: &str) -> String {
    let names: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != "[]" && *c != "<id>")
        .collect();
    match names.as_slice() {
        [] => "(root)".to_string(),
        [one] => (*one).to_string(),
        [.., a, b] => format!("{a}.{b}"),
    }
}

/// Compares two JSON values the way canonical fingerprints compare the
/// worlds (ID-like strings equal, counters left out, Raft indexes by their
/// side of `split`; maps keyed by IDs as multisets), adding the paths
/// where they differ to `out`.
fn diff(a: &Value, b: &Value, path: &str, split: u64, out: &mut BTreeSet<String>) {
    match (a, b) {
        (Value::String(x), Value::String(y)) if looks_like_id(x) && looks_like_id(y) => {}
        (Value::Object(x), Value::Object(y)) => {
            let id_keyed = x.keys().chain(y.keys()).any(|k| looks_like_id(k));
            if id_keyed {
                let xs = canonical_values(x.values());
                let ys = canonical_values(y.values());
                if xs.len() != ys.len() {
                    out.insert(format!("{path}/<id> (count)"));
                    return;
                }
                for (p, q) in xs.iter().zip(&ys) {
                    diff(&p.1, &q.1, &format!("{path}/<id>"), split, out);
                }
                return;
            }
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let child = format!("{path}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => {
                        if counter_field(key) {
                            if key.ends_with("index") {
                                let side = |v: &Value| v.as_u64().map(|n| n > split);
                                if side(p) != side(q) {
                                    out.insert(child);
                                }
                            }
                            continue;
                        }
                        diff(p, q, &child, split, out);
                    }
                    _ => {
                        out.insert(format!("{child} (present)"));
                    }
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.insert(format!("{path}/[] (count)"));
                return;
            }
            for (p, q) in x.iter().zip(y) {
                diff(p, q, &format!("{path}/[]"), split, out);
            }
        }
        _ => {
            if a != b {
                out.insert(path.to_string());
            }
        }
    }
}

/// Values with their IDs replaced, sorted by their text: the canonical
/// order of a map keyed by generated IDs.
fn canonical_values<'a>(values: impl Iterator<Item = &'a Value>) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = values
        .map(|v| {
            let c = scrub(v);
            (c.to_string(), v.clone())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn scrub(v: &Value) -> Value {
    match v {
        Value::String(s) if looks_like_id(s) => Value::String("<id>".to_string()),
        Value::Array(items) => Value::Array(items.iter().map(scrub).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !counter_field(k))
                .map(|(k, v)| {
                    let k = if looks_like_id(k) {
                        "<id>".to_string()
                    } else {
                        k.clone()
                    };
                    (k, scrub(v))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Explorer {
    /// Along `walks` seeded random walks from the window's start, takes
    /// every pair of moves of every `stride`-th state in both orders and
    /// reports which pairs reach one fingerprint and what the others
    /// differ in (see [`CommuteReport`]).
    pub fn commute_report(&self, walks: u64, stride: u64, seed: u64) -> CommuteReport {
        let mut report = CommuteReport::default();
        let mut rng = Rng::new(seed);
        let canonical = !self.config.exact_states;
        let split = self.context.window_index;
        let key = |s: &PathState| {
            let world = fingerprint::fingerprint(&s.sim, &s.phase, canonical, split);
            fingerprint::extend(world, &s.fired, canonical)
        };
        let mut visited = 0u64;
        for _ in 0..walks {
            let mut state = self.root.clone();
            let mut choices = self.choices(&state);
            while !choices.is_empty() {
                visited += 1;
                if visited.is_multiple_of(stride.max(1)) {
                    report.states += 1;
                    self.pairs_at(&state, &choices, split, &key, &mut report);
                }
                let pick = rng.below(choices.len() as u64) as usize;
                let (child, leaf, next) = self.transition(&state, &choices[pick]);
                if leaf.is_some() {
                    break;
                }
                state = child;
                choices = next;
            }
        }
        report
    }

    fn pairs_at(
        &self,
        state: &PathState,
        choices: &[Choice],
        split: u64,
        key: &dyn Fn(&PathState) -> fingerprint::Fingerprint,
        report: &mut CommuteReport,
    ) {
        let after: Vec<_> = choices.iter().map(|c| self.transition(state, c)).collect();
        for i in 0..choices.len() {
            for j in i + 1..choices.len() {
                let (a, b) = (&choices[i], &choices[j]);
                let (ka, na) = kind(state, a);
                let (kb, nb) = kind(state, b);
                let same = match (&na, &nb) {
                    (Some(x), Some(y)) if x == y => "same node",
                    (Some(_), Some(_)) => "other nodes",
                    _ => "",
                };
                let mut kinds = [ka, kb];
                kinds.sort();
                let name = format!("{} | {} {same}", kinds[0], kinds[1]);
                let then = |first: usize, second: &Choice| {
                    let (s, leaf, next) = &after[first];
                    if leaf.is_some() || !next.contains(second) {
                        return None;
                    }
                    Some(self.transition(s, second).0)
                };
                let (Some(ab), Some(ba)) = (then(i, b), then(j, a)) else {
                    report.disabling += 1;
                    continue;
                };
                report.pairs += 1;
                let entry = report.by_kind.entry(name).or_default();
                entry.0 += 1;
                if key(&ab) == key(&ba) {
                    report.commuting += 1;
                    entry.1 += 1;
                    continue;
                }
                let mut paths = BTreeSet::new();
                diff(
                    &fingerprint::world_json(&ab.sim),
                    &fingerprint::world_json(&ba.sim),
                    "",
                    split,
                    &mut paths,
                );
                if !self.config.exact_states {
                    paths.retain(|p| !p.starts_with("/rng"));
                }
                if ab.phase != ba.phase {
                    paths.insert("/phase".to_string());
                }
                if ab.fired != ba.fired {
                    paths.insert("/fired".to_string());
                }
                let classes: BTreeSet<String> = paths.iter().map(|p| class(p)).collect();
                *report
                    .signatures
                    .entry(classes.into_iter().collect::<Vec<_>>().join(", "))
                    .or_default() += 1;
                for path in paths {
                    *report.paths.entry(path).or_default() += 1;
                }
            }
        }
    }
}

/// What [`Explorer::abstraction_report`] found: distinct states met along
/// random walks under the canonical fingerprint and under coarser
/// candidate fingerprints (each computed from the world's JSON with the
/// canonical rules: IDs as tokens, maps keyed by IDs as multisets,
/// counters left out, snake_case Raft indexes by their side of the
/// window's start).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AbstractionReport {
    /// Walks made.
    pub walks: u64,
    /// States met (choice points and leaves).
    pub states: u64,
    /// Distinct canonical fingerprints (the search's own key).
    pub canonical: u64,
    /// Distinct JSON-canonical keys (the same rules, computed from JSON).
    pub json: u64,
    /// Distinct keys with the events due at one tick taken as a multiset
    /// (their order in the queue left out).
    pub same_tick_unordered: u64,
    /// Distinct keys with, in addition, every time left out (ticks,
    /// timestamps, deadlines: an unsound upper bound of what any time
    /// abstraction could merge).
    pub timeless: u64,
    /// Idle end states met: distinct canonical fingerprints.
    pub idle: u64,
    /// Idle end states under the same-tick-unordered key.
    pub idle_same_tick_unordered: u64,
    /// Idle end states under the timeless key (an unsound upper bound of
    /// what a time abstraction could merge).
    pub idle_timeless: u64,
    /// Complete orders (walks that ended idle).
    pub complete: u64,
}

/// Canonical JSON: IDs as tokens, maps keyed by IDs as sorted lists,
/// counters left out, snake_case indexes by their side of `split`.
fn canon(v: &Value, split: u64) -> Value {
    match v {
        Value::String(s) if looks_like_id(s) => Value::String("<id>".to_string()),
        Value::Array(items) => Value::Array(items.iter().map(|i| canon(i, split)).collect()),
        Value::Object(map) => {
            if map.keys().any(|k| looks_like_id(k)) {
                let mut items: Vec<(String, Value)> = map
                    .values()
                    .map(|v| {
                        let c = canon(v, split);
                        (c.to_string(), c)
                    })
                    .collect();
                items.sort_by(|a, b| a.0.cmp(&b.0));
                return Value::Array(items.into_iter().map(|(_, v)| v).collect());
            }
            Value::Object(
                map.iter()
                    .filter_map(|(k, v)| {
                        if counter_field(k) {
                            if !k.ends_with("index") {
                                return None;
                            }
                            return Some((
                                k.clone(),
                                Value::Bool(v.as_u64().is_some_and(|n| n > split)),
                            ));
                        }
                        Some((k.clone(), canon(v, split)))
                    })
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// Whether a field holds a time (a tick or a timestamp).
fn time_field(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("time")
        || k.ends_with("_at")
        || (k.ends_with("at") && (k.starts_with("started") || k.starts_with("finished")))
        || k.contains("deadline")
        || k.contains("heartbeat")
        || k == "tick"
        || k == "ttl"
        || k == "heartbeat_timers"
        || k.ends_with("_until")
        || k.starts_with("last_")
        || k.starts_with("next_")
}

fn drop_times(v: &mut Value) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(drop_times),
        Value::Object(map) => {
            map.retain(|k, _| !time_field(k));
            map.values_mut().for_each(drop_times);
        }
        Value::String(s)
            if s.len() >= 20 && s.as_bytes().get(4) == Some(&b'-') && s.contains('T') =>
        {
            // An RFC 3339 timestamp.
            *s = "<time>".to_string();
        }
        _ => {}
    }
}

/// The queue (a list of `[[tick, seq], event]` or `[tick, event]`) with
/// the events of each tick sorted by their canonical text.
fn unorder_queue(queue: &mut Value) {
    let Value::Array(items) = queue else {
        return;
    };
    let tick = |v: &Value| -> u64 {
        match v {
            Value::Array(pair) => match pair.first() {
                Some(Value::Array(key)) => key.first().and_then(Value::as_u64).unwrap_or(0),
                Some(t) => t.as_u64().unwrap_or(0),
                None => 0,
            },
            _ => 0,
        }
    };
    items.sort_by(|a, b| {
        tick(a)
            .cmp(&tick(b))
            .then_with(|| a.to_string().cmp(&b.to_string()))
    });
}

/// The world's canonical JSON ([`canon`]) without the RNG's state.
fn world_canon(sim: &crate::sim::Sim, split: u64) -> Value {
    let mut json = canon(&fingerprint::world_json(sim), split);
    if let Some(world) = json.as_object_mut() {
        world.remove("rng");
    }
    json
}

/// The world's event queue with the events of each tick unordered
/// ([`unorder_queue`]).
fn unorder_same_tick(world: &mut Value) {
    if let Some(queue) = world.get_mut("queue") {
        unorder_queue(queue);
    }
}

/// The world with every time left out ([`drop_times`]), the queue's ticks
/// too.
fn timeless(world: &mut Value) {
    drop_times(world);
    if let Some(Value::Array(queue)) = world.get_mut("queue") {
        for item in queue.iter_mut() {
            if let Value::Array(pair) = item
                && let Some(first) = pair.first_mut()
            {
                *first = Value::Null;
            }
        }
    }
}

fn key_of(v: &Value) -> fingerprint::Fingerprint {
    fingerprint::extend(0, &v.to_string(), false)
}

impl Explorer {
    /// Along `walks` seeded random walks, counts the distinct states met
    /// under the canonical fingerprint and under coarser candidate keys
    /// (see [`AbstractionReport`]): how much each abstraction could merge.
    pub fn abstraction_report(&self, walks: u64, seed: u64) -> AbstractionReport {
        let mut report = AbstractionReport {
            walks,
            ..AbstractionReport::default()
        };
        let mut rng = Rng::new(seed);
        let split = self.context.window_index;
        let mut sets: [BTreeSet<fingerprint::Fingerprint>; 7] = Default::default();
        for _ in 0..walks {
            let mut state = self.root.clone();
            let mut choices = self.choices(&state);
            loop {
                report.states += 1;
                let canonical = fingerprint::fingerprint(&state.sim, &state.phase, true, split);
                sets[0].insert(fingerprint::extend(canonical, &state.fired, true));
                let mut json = world_canon(&state.sim, split);
                let extra = format!("{:?}{:?}", state.phase, state.fired);
                sets[1].insert(key_of(&serde_json::json!([json, extra])));
                unorder_same_tick(&mut json);
                sets[2].insert(key_of(&serde_json::json!([json, extra])));
                timeless(&mut json);
                sets[3].insert(key_of(&serde_json::json!([json, extra])));
                if choices.is_empty() {
                    break;
                }
                let pick = rng.below(choices.len() as u64) as usize;
                let (child, leaf, next) = self.transition(&state, &choices[pick]);
                if let Some(leaf) = leaf {
                    if leaf == super::Leaf::Complete {
                        report.complete += 1;
                        sets[4].insert(fingerprint::fingerprint(
                            &child.sim,
                            &child.phase,
                            true,
                            split,
                        ));
                        let mut json = world_canon(&child.sim, split);
                        unorder_same_tick(&mut json);
                        sets[5].insert(key_of(&json));
                        timeless(&mut json);
                        sets[6].insert(key_of(&json));
                    }
                    break;
                }
                state = child;
                choices = next;
            }
        }
        report.canonical = sets[0].len() as u64;
        report.json = sets[1].len() as u64;
        report.same_tick_unordered = sets[2].len() as u64;
        report.timeless = sets[3].len() as u64;
        report.idle = sets[4].len() as u64;
        report.idle_same_tick_unordered = sets[5].len() as u64;
        report.idle_timeless = sets[6].len() as u64;
        report
    }
}
