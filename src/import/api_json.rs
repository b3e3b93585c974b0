//! Nomad API JSON (PascalCase, as `api/jobs.go`, `api/allocations.go`,
//! `api/nodes.go` and `api/evaluations.go` define it) into scenario parts.
//!
//! Works on `serde_json::Value` so that every diagnostic names the field,
//! unknown fields are ignored and `null` reads as absent. A text may hold one
//! value, an array, or newline-delimited values (the files of a
//! `nomad operator debug` bundle).

use super::{Collected, ImportError};
use crate::scenario::duration::Dur;
use crate::scenario::format::{
    Action, DisconnectSpec, DiskSpec, GroupSpec, JobSpec, NodeSpec, RescheduleSpec, TaskSpec,
    UpdateSpec,
};
use serde_json::Value;

/// A value with its path, for diagnostics.
#[derive(Clone, Copy)]
struct At<'a> {
    value: &'a Value,
    path: &'a str,
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

struct Reader<'a> {
    source: &'a str,
}

impl Reader<'_> {
    fn err(&self, path: &str, message: impl Into<String>) -> ImportError {
        ImportError::Field {
            input: self.source.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn get<'v>(&self, at: At<'v>, key: &str) -> Option<&'v Value> {
        at.value.get(key).filter(|v| !v.is_null())
    }

    fn str(&self, at: At<'_>, key: &str) -> Result<Option<String>, ImportError> {
        match self.get(at, key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(
                &child_path(at.path, key),
                format!("expected a string, found {}", kind(other)),
            )),
        }
    }

    fn int(&self, at: At<'_>, key: &str) -> Result<Option<i64>, ImportError> {
        match self.get(at, key) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| {
                self.err(
                    &child_path(at.path, key),
                    format!("expected an integer, found {n}"),
                )
            }),
            Some(other) => Err(self.err(
                &child_path(at.path, key),
                format!("expected an integer, found {}", kind(other)),
            )),
        }
    }

    fn uint<T: TryFrom<i64>>(&self, at: At<'_>, key: &str) -> Result<Option<T>, ImportError> {
        match self.int(at, key)? {
            None => Ok(None),
            Some(n) => T::try_from(n).map(Some).map_err(|_| {
                self.err(
                    &child_path(at.path, key),
                    format!("{n} is out of range (must not be negative)"),
                )
            }),
        }
    }

    fn bool(&self, at: At<'_>, key: &str) -> Result<Option<bool>, ImportError> {
        match self.get(at, key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.err(
                &child_path(at.path, key),
                format!("expected true or false, found {}", kind(other)),
            )),
        }
    }

    /// A Go `time.Duration` (integer nanoseconds) as a scenario duration.
    fn dur(&self, at: At<'_>, key: &str, c: &mut Collected) -> Result<Option<Dur>, ImportError> {
        let Some(ns) = self.int(at, key)? else {
            return Ok(None);
        };
        let path = child_path(at.path, key);
        if ns < 0 {
            return Err(self.err(&path, format!("negative duration {ns}ns")));
        }
        if ns % 1_000_000 != 0 {
            c.warn(
                self.source,
                &path,
                format!("{ns}ns rounded to whole milliseconds (one tick)"),
            );
        }
        Ok(Some(Dur((ns as u64).div_ceil(1_000_000))))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Imports a JSON text (one value, an array, or newline-delimited values).
pub fn import_json(source: &str, text: &str, c: &mut Collected) -> Result<(), ImportError> {
    let mut values = Vec::new();
    for item in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        match item {
            Ok(v) => values.push(v),
            Err(e) => {
                return Err(ImportError::Json {
                    input: source.to_string(),
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                });
            }
        }
    }
    let many = values.len() > 1;
    for (i, value) in values.iter().enumerate() {
        let path = if many {
            format!("[{i}]")
        } else {
            String::new()
        };
        import_value(source, At { value, path: &path }, c)?;
    }
    Ok(())
}

fn import_value(source: &str, at: At<'_>, c: &mut Collected) -> Result<(), ImportError> {
    let r = Reader { source };
    match at.value {
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                let path = format!("{}[{i}]", at.path);
                import_value(source, At { value, path: &path }, c)?;
            }
            Ok(())
        }
        Value::Object(map) => {
            if let Some(job) = map.get("Job").filter(|j| j.is_object())
                && !map.contains_key("TaskGroup")
            {
                // `nomad job inspect` / register payload: {"Job": {...}}.
                let path = child_path(at.path, "Job");
                return import_job(
                    &r,
                    At {
                        value: job,
                        path: &path,
                    },
                    c,
                );
            }
            if map.contains_key("TriggeredBy") {
                let id = r.str(at, "ID")?.unwrap_or_default();
                let trigger = r.str(at, "TriggeredBy")?.unwrap_or_default();
                let status = r.str(at, "Status")?.unwrap_or_default();
                c.warn(
                    source,
                    at.path,
                    format!(
                        "evaluation {} ({trigger}, {status}) not imported: a scenario starts \
                         with no evals; the simulator creates its own",
                        short(&id)
                    ),
                );
                return Ok(());
            }
            if map.contains_key("StatusDescription") && map.contains_key("JobID") {
                c.warn(
                    source,
                    at.path,
                    "deployment not imported: scenarios start without deployments",
                );
                return Ok(());
            }
            if map.contains_key("TaskGroups") {
                return import_job(&r, at, c);
            }
            if map.contains_key("TaskGroup") && map.contains_key("JobID") {
                return import_alloc(&r, at, c);
            }
            if map.contains_key("Datacenter")
                && (map.contains_key("NodeResources")
                    || map.contains_key("SchedulingEligibility")
                    || map.contains_key("HTTPAddr")
                    || map.contains_key("Address"))
            {
                return import_node(&r, at, c);
            }
            if map.contains_key("JobSummary")
                || (map.contains_key("Type") && map.contains_key("ID"))
            {
                let id = r.str(at, "ID")?.unwrap_or_default();
                c.warn(
                    source,
                    at.path,
                    format!(
                        "job {id} is a list stub (from /v1/jobs or a debug bundle's jobs.json): \
                         it lacks task groups, so it is not imported; use `nomad job inspect {id}` \
                         or GET /v1/job/{id}"
                    ),
                );
                return Ok(());
            }
            if let Some(Value::String(e)) = map.get("Error") {
                c.warn(
                    source,
                    at.path,
                    format!("the debug bundle recorded an error: {e}"),
                );
                return Ok(());
            }
            Err(ImportError::Unrecognized {
                input: source.to_string(),
                message: format!(
                    "{}: not a Nomad job, allocation, node or evaluation (keys: {})",
                    if at.path.is_empty() { "." } else { at.path },
                    map.keys().take(8).cloned().collect::<Vec<_>>().join(", ")
                ),
            })
        }
        other => Err(ImportError::Unrecognized {
            input: source.to_string(),
            message: format!("expected a JSON object or list, found {}", kind(other)),
        }),
    }
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn import_job(r: &Reader<'_>, at: At<'_>, c: &mut Collected) -> Result<(), ImportError> {
    let id = r
        .str(at, "ID")?
        .ok_or_else(|| r.err(&child_path(at.path, "ID"), "a job needs an ID"))?;
    if let Some(ns) = r.str(at, "Namespace")?
        && ns != "default"
    {
        c.warn(
            r.source,
            &child_path(at.path, "Namespace"),
            format!("namespace {ns:?} ignored (the playground has one namespace)"),
        );
    }
    let version = r.uint::<u64>(at, "Version")?.unwrap_or(0);
    let job_type = r.str(at, "Type")?;
    if let Some(t) = &job_type
        && !matches!(t.as_str(), "service" | "batch" | "system" | "sysbatch")
    {
        return Err(r.err(
            &child_path(at.path, "Type"),
            format!("unknown job type {t:?}"),
        ));
    }
    for key in [
        "Affinities",
        "Spreads",
        "Multiregion",
        "Periodic",
        "ParameterizedJob",
    ] {
        if r.get(at, key).is_some_and(|v| !is_empty(v)) {
            c.warn(
                r.source,
                &child_path(at.path, key),
                "not supported by the playground (ignored)",
            );
        }
    }
    let job_constraints = constraint_nodes(r, at, c)?;
    let job_update = match r.get(at, "Update") {
        Some(u) => {
            let path = child_path(at.path, "Update");
            update(
                r,
                At {
                    value: u,
                    path: &path,
                },
                c,
            )?
        }
        None => None,
    };
    let datacenters = match r.get(at, "Datacenters") {
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        r.err(
                            &format!("{}.Datacenters[{i}]", at.path),
                            "expected a string",
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(r.err(
                &child_path(at.path, "Datacenters"),
                format!("expected a list, found {}", kind(other)),
            ));
        }
        None => None,
    };
    let groups_path = child_path(at.path, "TaskGroups");
    let groups = match r.get(at, "TaskGroups") {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(r.err(
                &groups_path,
                format!("expected a list, found {}", kind(other)),
            ));
        }
        None => return Err(r.err(&groups_path, "a job needs task groups")),
    };
    let mut specs = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let path = format!("{groups_path}[{i}]");
        let mut spec = group(
            r,
            At {
                value: g,
                path: &path,
            },
            c,
        )?;
        if spec.update.is_none() {
            spec.update = job_update.clone();
        }
        if spec.nodes.is_none() {
            spec.nodes = job_constraints.clone();
        }
        specs.push(spec);
    }
    let job = JobSpec {
        id,
        job_type,
        priority: r.int(at, "Priority")?,
        datacenters: datacenters.filter(|d| d != &["dc1".to_string()]),
        node_pool: r.str(at, "NodePool")?.filter(|p| p != "default"),
        groups: specs,
    };
    c.add_job(version, job);
    Ok(())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn update(
    r: &Reader<'_>,
    at: At<'_>,
    c: &mut Collected,
) -> Result<Option<UpdateSpec>, ImportError> {
    let max_parallel = r.uint::<u32>(at, "MaxParallel")?;
    // Nomad: an update block with max_parallel 0 means no rolling updates.
    if max_parallel.unwrap_or(0) == 0 {
        return Ok(None);
    }
    Ok(Some(UpdateSpec {
        max_parallel,
        canary: r.uint::<u32>(at, "Canary")?.filter(|n| *n > 0),
        auto_revert: r.bool(at, "AutoRevert")?.filter(|b| *b),
        auto_promote: r.bool(at, "AutoPromote")?.filter(|b| *b),
        min_healthy_time: r.dur(at, "MinHealthyTime", c)?,
        healthy_deadline: r.dur(at, "HealthyDeadline", c)?,
        progress_deadline: r.dur(at, "ProgressDeadline", c)?,
        health_check: r.str(at, "HealthCheck")?.filter(|s| !s.is_empty()),
    }))
}

/// Node-ID constraints (`${node.unique.id}` with `=`, `==`, `is`,
/// `set_contains_any`, `regexp`-free) become the group's `nodes`; any other
/// constraint is reported and ignored.
fn constraint_nodes(
    r: &Reader<'_>,
    at: At<'_>,
    c: &mut Collected,
) -> Result<Option<Vec<String>>, ImportError> {
    let Some(Value::Array(items)) = r.get(at, "Constraints") else {
        return Ok(None);
    };
    let mut nodes: Option<Vec<String>> = None;
    for (i, item) in items.iter().enumerate() {
        let path = format!("{}.Constraints[{i}]", at.path);
        let here = At {
            value: item,
            path: &path,
        };
        let target = r.str(here, "LTarget")?.unwrap_or_default();
        let operand = r.str(here, "Operand")?.unwrap_or_else(|| "=".into());
        let value = r.str(here, "RTarget")?.unwrap_or_default();
        match super::node_id_constraint(&target, &operand, &value) {
            Some(ids) => nodes = Some(super::intersect_nodes(nodes, ids)),
            None => c.warn(
                r.source,
                &path,
                format!(
                    "constraint {target} {operand} {value:?} is not supported (only node ID \
                     constraints are); ignored"
                ),
            ),
        }
    }
    Ok(nodes)
}

fn group(r: &Reader<'_>, at: At<'_>, c: &mut Collected) -> Result<GroupSpec, ImportError> {
    let name = r
        .str(at, "Name")?
        .ok_or_else(|| r.err(&child_path(at.path, "Name"), "a task group needs a name"))?;
    for key in [
        "Affinities",
        "Spreads",
        "Networks",
        "Services",
        "Volumes",
        "Scaling",
    ] {
        if r.get(at, key).is_some_and(|v| !is_empty(v)) {
            c.warn(
                r.source,
                &child_path(at.path, key),
                "not supported by the playground (ignored)",
            );
        }
    }
    let mut nodes = constraint_nodes(r, at, c)?;
    let reschedule = match r.get(at, "ReschedulePolicy") {
        Some(v) => {
            let path = child_path(at.path, "ReschedulePolicy");
            let p = At {
                value: v,
                path: &path,
            };
            Some(RescheduleSpec {
                attempts: r.int(p, "Attempts")?,
                interval: r.dur(p, "Interval", c)?,
                delay: r.dur(p, "Delay", c)?,
                delay_function: r.str(p, "DelayFunction")?.filter(|s| !s.is_empty()),
                max_delay: r.dur(p, "MaxDelay", c)?,
                unlimited: r.bool(p, "Unlimited")?,
            })
        }
        None => None,
    };
    let update = match r.get(at, "Update") {
        Some(v) => {
            let path = child_path(at.path, "Update");
            update(
                r,
                At {
                    value: v,
                    path: &path,
                },
                c,
            )?
        }
        None => None,
    };
    let disconnect = match r.get(at, "Disconnect") {
        Some(v) => {
            let path = child_path(at.path, "Disconnect");
            let d = At {
                value: v,
                path: &path,
            };
            let reconcile = r.str(d, "Reconcile")?.filter(|s| !s.is_empty());
            if let Some(s) = &reconcile
                && !matches!(
                    s.as_str(),
                    "best_score" | "keep_original" | "keep_replacement" | "longest_running"
                )
            {
                return Err(r.err(
                    &child_path(&path, "Reconcile"),
                    format!("unknown reconcile strategy {s:?}"),
                ));
            }
            Some(DisconnectSpec {
                lost_after: r.dur(d, "LostAfter", c)?.filter(|d| d.0 > 0),
                replace: r.bool(d, "Replace")?,
                reconcile,
                stop_on_client_after: r.dur(d, "StopOnClientAfter", c)?,
            })
        }
        None => None,
    };
    let ephemeral_disk = match r.get(at, "EphemeralDisk") {
        Some(v) => {
            let path = child_path(at.path, "EphemeralDisk");
            let e = At {
                value: v,
                path: &path,
            };
            let disk = DiskSpec {
                sticky: r.bool(e, "Sticky")?.unwrap_or(false),
                migrate: r.bool(e, "Migrate")?.unwrap_or(false),
                size_mb: r.int(e, "SizeMB")?,
            };
            (disk.sticky || disk.migrate).then_some(disk)
        }
        None => None,
    };
    let mut tasks = Vec::new();
    let mut cpu: u64 = 0;
    let mut memory: u64 = 0;
    let mut any_resources = false;
    if let Some(Value::Array(items)) = r.get(at, "Tasks") {
        for (i, t) in items.iter().enumerate() {
            let path = format!("{}.Tasks[{i}]", at.path);
            let task = At {
                value: t,
                path: &path,
            };
            let name = r
                .str(task, "Name")?
                .ok_or_else(|| r.err(&child_path(&path, "Name"), "a task needs a name"))?;
            if let Some(res) = r.get(task, "Resources") {
                let res_path = child_path(&path, "Resources");
                let res = At {
                    value: res,
                    path: &res_path,
                };
                if let Some(n) = r.uint::<u64>(res, "CPU")? {
                    cpu += n;
                    any_resources = true;
                }
                if let Some(n) = r.uint::<u64>(res, "MemoryMB")? {
                    memory += n;
                    any_resources = true;
                }
            }
            if let Some(more) = constraint_nodes(r, task, c)? {
                nodes = Some(match nodes {
                    None => more,
                    Some(prev) => prev.into_iter().filter(|n| more.contains(n)).collect(),
                });
            }
            tasks.push(TaskSpec {
                name,
                leader: r.bool(task, "Leader")?.filter(|b| *b),
                config: r.get(task, "Config").cloned(),
                kill_timeout: r.dur(task, "KillTimeout", c)?,
            });
        }
    }
    Ok(GroupSpec {
        name,
        count: r.uint::<u32>(at, "Count")?,
        cpu: any_resources.then_some(cpu).filter(|n| *n > 0),
        memory_mb: any_resources.then_some(memory).filter(|n| *n > 0),
        nodes,
        max_client_disconnect: r.dur(at, "MaxClientDisconnect", c)?,
        stop_after_client_disconnect: r.dur(at, "StopAfterClientDisconnect", c)?,
        prevent_reschedule_on_lost: r.bool(at, "PreventRescheduleOnLost")?.filter(|b| *b),
        disconnect,
        reschedule,
        update,
        ephemeral_disk,
        tasks: (!tasks.is_empty()).then_some(tasks),
    })
}

fn import_node(r: &Reader<'_>, at: At<'_>, c: &mut Collected) -> Result<(), ImportError> {
    let id = r
        .str(at, "ID")?
        .ok_or_else(|| r.err(&child_path(at.path, "ID"), "a node needs an ID"))?;
    let (mut cpu, mut memory) = (None, None);
    if let Some(res) = r.get(at, "NodeResources") {
        let path = child_path(at.path, "NodeResources");
        let res = At {
            value: res,
            path: &path,
        };
        if let Some(v) = r.get(res, "Cpu") {
            let p = child_path(&path, "Cpu");
            cpu = r.uint::<u64>(At { value: v, path: &p }, "CpuShares")?;
        }
        if let Some(v) = r.get(res, "Memory") {
            let p = child_path(&path, "Memory");
            memory = r.uint::<u64>(At { value: v, path: &p }, "MemoryMB")?;
        }
    } else if let Some(res) = r.get(at, "Resources") {
        let path = child_path(at.path, "Resources");
        let res = At {
            value: res,
            path: &path,
        };
        cpu = r.uint::<u64>(res, "CPU")?;
        memory = r.uint::<u64>(res, "MemoryMB")?;
    } else {
        c.warn(
            r.source,
            at.path,
            format!(
                "node {} has no resources (a list stub?): default resources used",
                short(&id)
            ),
        );
    }
    // Subtract what the operator reserved, as the scheduler does.
    if let Some(res) = r.get(at, "ReservedResources") {
        let path = child_path(at.path, "ReservedResources");
        let res = At {
            value: res,
            path: &path,
        };
        if let (Some(v), Some(total)) = (r.get(res, "Cpu"), cpu) {
            let p = child_path(&path, "Cpu");
            let reserved = r
                .uint::<u64>(At { value: v, path: &p }, "CpuShares")?
                .unwrap_or(0);
            cpu = Some(total.saturating_sub(reserved));
        }
        if let (Some(v), Some(total)) = (r.get(res, "Memory"), memory) {
            let p = child_path(&path, "Memory");
            let reserved = r
                .uint::<u64>(At { value: v, path: &p }, "MemoryMB")?
                .unwrap_or(0);
            memory = Some(total.saturating_sub(reserved));
        }
    }
    let status = r.str(at, "Status")?.unwrap_or_default();
    let registered = match status.as_str() {
        "initializing" => Some(false),
        "down" | "disconnected" => {
            c.warn(
                r.source,
                &child_path(at.path, "Status"),
                format!(
                    "node {} was {status}: it starts ready; script a link_down to reproduce",
                    short(&id)
                ),
            );
            None
        }
        _ => None,
    };
    if r.str(at, "SchedulingEligibility")?.as_deref() == Some("ineligible") {
        c.setup.push(Action::SetEligibility {
            node: id.clone(),
            eligible: false,
        });
    }
    if r.bool(at, "Drain")? == Some(true) || r.get(at, "DrainStrategy").is_some() {
        c.setup.push(Action::DrainNode {
            node: id.clone(),
            enable: None,
        });
    }
    let name = r.str(at, "Name")?.filter(|n| n != &id);
    let spec = NodeSpec {
        id: id.clone(),
        name,
        datacenter: r.str(at, "Datacenter")?.filter(|d| d != "dc1"),
        node_pool: r.str(at, "NodePool")?.filter(|p| p != "default"),
        class: r.str(at, "NodeClass")?.filter(|s| !s.is_empty()),
        cpu: cpu.filter(|n| *n > 0),
        memory_mb: memory.filter(|n| *n > 0),
        registered,
        agent: None,
    };
    c.nodes.insert(id, spec);
    Ok(())
}

fn import_alloc(r: &Reader<'_>, at: At<'_>, c: &mut Collected) -> Result<(), ImportError> {
    let id = r.str(at, "ID")?.unwrap_or_default();
    let name = r.str(at, "Name")?.unwrap_or_default();
    let node = r.str(at, "NodeID")?.unwrap_or_default();
    let client = r.str(at, "ClientStatus")?.unwrap_or_default();
    let desired = r.str(at, "DesiredStatus")?.unwrap_or_default();
    let mut line = format!(
        "{name} ({}) on {}: client {client}, desired {desired}",
        short(&id),
        short(&node)
    );
    if let Some(Value::Array(states)) = r.get(at, "AllocStates") {
        let mut parts = Vec::new();
        for (i, s) in states.iter().enumerate() {
            let path = format!("{}.AllocStates[{i}]", at.path);
            let s = At {
                value: s,
                path: &path,
            };
            let field = r.str(s, "Field")?.unwrap_or_default();
            let value = r.str(s, "Value")?.unwrap_or_default();
            parts.push(format!("{field}={value}"));
        }
        if !parts.is_empty() {
            line.push_str(&format!("; AllocStates {}", parts.join(", ")));
        }
    }
    if let Some(prev) = r.str(at, "PreviousAllocation")?.filter(|s| !s.is_empty()) {
        line.push_str(&format!("; replaces {}", short(&prev)));
    }
    c.allocs.push(line);
    c.alloc_nodes.push(node);
    match r.get(at, "Job") {
        Some(job) => {
            // Every alloc of a node carries its job: read each version once.
            let job_id = job.get("ID").and_then(Value::as_str).unwrap_or_default();
            let version = job.get("Version").and_then(Value::as_u64).unwrap_or(0);
            if c.jobs.get(job_id).is_some_and(|(v, _)| *v >= version) {
                return Ok(());
            }
            let path = child_path(at.path, "Job");
            import_job(
                r,
                At {
                    value: job,
                    path: &path,
                },
                c,
            )?;
        }
        None => c.warn(
            r.source,
            at.path,
            format!(
                "allocation {} is a list stub (no Job): its job must come from another input",
                short(&id)
            ),
        ),
    }
    Ok(())
}
