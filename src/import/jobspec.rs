//! HCL jobspecs (the scheduling subset) into scenario jobs: `job` with
//! `type`, `priority`, `datacenters`, `node_pool`, `update`, `constraint`;
//! `group` with `count`, `update`, `reschedule`, `disconnect`, the legacy
//! `max_client_disconnect` / `stop_after_client_disconnect` /
//! `prevent_reschedule_on_lost`, `ephemeral_disk`, `constraint`; `task` with
//! `driver`, `config`, `resources { cpu, memory }`, `leader`,
//! `kill_timeout`. Other blocks and attributes are reported as warnings.

use super::hcl::{self, Block, Body, Expr};
use super::{Collected, ImportError};
use crate::scenario::duration::Dur;
use crate::scenario::format::{
    DisconnectSpec, DiskSpec, GroupSpec, JobSpec, RescheduleSpec, TaskSpec, UpdateSpec,
};

/// Imports an HCL text: every `job` block in it.
pub fn import_hcl(source: &str, text: &str, c: &mut Collected) -> Result<(), ImportError> {
    let body = hcl::parse(text).map_err(|e| ImportError::Hcl {
        input: source.to_string(),
        line: e.pos.line,
        column: e.pos.column,
        message: e.message,
    })?;
    let s = Spec { source };
    let mut jobs = 0;
    for block in &body.blocks {
        if block.kind == "job" {
            let job = s.job(block, c)?;
            c.add_job(0, job);
            jobs += 1;
        } else {
            s.unsupported(
                c,
                &block.kind,
                block,
                "only job blocks are read at the top level",
            );
        }
    }
    for attr in &body.attributes {
        c.warn(
            source,
            &attr.name,
            "top-level attributes (variables?) are ignored",
        );
    }
    if jobs == 0 {
        return Err(ImportError::Unrecognized {
            input: source.to_string(),
            message: "no job block found (expected an HCL jobspec or Nomad API JSON)".into(),
        });
    }
    Ok(())
}

struct Spec<'a> {
    source: &'a str,
}

fn kind(e: &Expr) -> &'static str {
    match e {
        Expr::Str(_) => "a string",
        Expr::Num(_) => "a number",
        Expr::Bool(_) => "a boolean",
        Expr::Null => "null",
        Expr::List(_) => "a list",
        Expr::Object(_) => "an object",
    }
}

fn to_json(e: &Expr) -> serde_json::Value {
    match e {
        Expr::Str(s) => s.clone().into(),
        Expr::Num(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => (*n as i64).into(),
        Expr::Num(n) => {
            serde_json::Number::from_f64(*n).map_or(serde_json::Value::Null, Into::into)
        }
        Expr::Bool(b) => (*b).into(),
        Expr::Null => serde_json::Value::Null,
        Expr::List(items) => items.iter().map(to_json).collect(),
        Expr::Object(fields) => fields
            .iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

fn body_json(body: &Body) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for a in &body.attributes {
        map.insert(a.name.clone(), to_json(&a.value));
    }
    for b in &body.blocks {
        let entry = map
            .entry(b.kind.clone())
            .or_insert_with(|| serde_json::Value::Array(Vec::new()));
        if let serde_json::Value::Array(items) = entry {
            items.push(body_json(&b.body));
        }
    }
    map.into()
}

impl Spec<'_> {
    fn err(&self, path: &str, line: usize, message: impl Into<String>) -> ImportError {
        ImportError::Field {
            input: self.source.to_string(),
            path: format!("{path} (line {line})"),
            message: message.into(),
        }
    }

    fn unsupported(&self, c: &mut Collected, path: &str, block: &Block, why: &str) {
        c.warn(
            self.source,
            &format!("{path} (line {})", block.pos.line),
            format!("{} block not supported: {why}; ignored", block.kind),
        );
    }

    fn string(&self, body: &Body, name: &str, path: &str) -> Result<Option<String>, ImportError> {
        match body.attr(name) {
            None => Ok(None),
            Some(a) => match &a.value {
                Expr::Str(s) => Ok(Some(s.clone())),
                other => Err(self.err(
                    &format!("{path}.{name}"),
                    a.pos.line,
                    format!("expected a string, found {}", kind(other)),
                )),
            },
        }
    }

    fn int(&self, body: &Body, name: &str, path: &str) -> Result<Option<i64>, ImportError> {
        match body.attr(name) {
            None => Ok(None),
            Some(a) => match &a.value {
                Expr::Num(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Ok(Some(*n as i64)),
                other => Err(self.err(
                    &format!("{path}.{name}"),
                    a.pos.line,
                    format!("expected an integer, found {}", kind(other)),
                )),
            },
        }
    }

    fn uint<T: TryFrom<i64>>(
        &self,
        body: &Body,
        name: &str,
        path: &str,
    ) -> Result<Option<T>, ImportError> {
        match self.int(body, name, path)? {
            None => Ok(None),
            Some(n) => T::try_from(n).map(Some).map_err(|_| {
                let line = body.attr(name).map_or(0, |a| a.pos.line);
                self.err(
                    &format!("{path}.{name}"),
                    line,
                    format!("{n} is out of range"),
                )
            }),
        }
    }

    fn bool(&self, body: &Body, name: &str, path: &str) -> Result<Option<bool>, ImportError> {
        match body.attr(name) {
            None => Ok(None),
            Some(a) => match &a.value {
                Expr::Bool(b) => Ok(Some(*b)),
                other => Err(self.err(
                    &format!("{path}.{name}"),
                    a.pos.line,
                    format!("expected true or false, found {}", kind(other)),
                )),
            },
        }
    }

    fn dur(&self, body: &Body, name: &str, path: &str) -> Result<Option<Dur>, ImportError> {
        match body.attr(name) {
            None => Ok(None),
            Some(a) => match &a.value {
                Expr::Str(s) => Dur::parse(s).map(Some).ok_or_else(|| {
                    self.err(
                        &format!("{path}.{name}"),
                        a.pos.line,
                        format!("invalid duration {s:?} (expected e.g. \"30s\", \"5m\", \"1h\")"),
                    )
                }),
                other => Err(self.err(
                    &format!("{path}.{name}"),
                    a.pos.line,
                    format!("expected a duration string, found {}", kind(other)),
                )),
            },
        }
    }

    fn check_known(
        &self,
        c: &mut Collected,
        body: &Body,
        path: &str,
        attrs: &[&str],
        blocks: &[&str],
    ) {
        for a in &body.attributes {
            if !attrs.contains(&a.name.as_str()) {
                c.warn(
                    self.source,
                    &format!("{path}.{} (line {})", a.name, a.pos.line),
                    "attribute not supported by the playground; ignored",
                );
            }
        }
        for b in &body.blocks {
            if !blocks.contains(&b.kind.as_str()) {
                self.unsupported(c, path, b, "the playground does not model it");
            }
        }
    }

    fn label(&self, block: &Block, path: &str) -> Result<String, ImportError> {
        match block.labels.as_slice() {
            [name] if !name.is_empty() => Ok(name.clone()),
            _ => Err(self.err(
                path,
                block.pos.line,
                format!("a {} block needs exactly one name label", block.kind),
            )),
        }
    }

    fn job(&self, block: &Block, c: &mut Collected) -> Result<JobSpec, ImportError> {
        let id = self.label(block, "job")?;
        let path = format!("job[{id}]");
        let body = &block.body;
        self.check_known(
            c,
            body,
            &path,
            &[
                "type",
                "priority",
                "datacenters",
                "node_pool",
                "region",
                "namespace",
                "all_at_once",
            ],
            &["group", "update", "constraint", "meta"],
        );
        let job_type = self.string(body, "type", &path)?;
        if let Some(t) = &job_type
            && !matches!(t.as_str(), "service" | "batch" | "system" | "sysbatch")
        {
            let line = body.attr("type").map_or(0, |a| a.pos.line);
            return Err(self.err(
                &format!("{path}.type"),
                line,
                format!("unknown job type {t:?}"),
            ));
        }
        let datacenters = match body.attr("datacenters") {
            None => None,
            Some(a) => match &a.value {
                Expr::List(items) => Some(
                    items
                        .iter()
                        .map(|i| match i {
                            Expr::Str(s) => Ok(s.clone()),
                            other => Err(self.err(
                                &format!("{path}.datacenters"),
                                a.pos.line,
                                format!("expected strings, found {}", kind(other)),
                            )),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                other => {
                    return Err(self.err(
                        &format!("{path}.datacenters"),
                        a.pos.line,
                        format!("expected a list, found {}", kind(other)),
                    ));
                }
            },
        };
        let job_update = self.update_block(body, &path)?;
        let job_nodes = self.constraints(body, &path, c)?;
        let mut groups = Vec::new();
        for g in body.blocks.iter().filter(|b| b.kind == "group") {
            let mut spec = self.group(g, &path, c)?;
            if spec.update.is_none() && !matches!(job_type.as_deref(), Some("batch" | "sysbatch")) {
                spec.update = job_update.clone();
            }
            if spec.nodes.is_none() {
                spec.nodes = job_nodes.clone();
            }
            groups.push(spec);
        }
        if groups.is_empty() {
            return Err(self.err(&path, block.pos.line, "a job needs at least one group"));
        }
        Ok(JobSpec {
            id,
            job_type,
            priority: self.int(body, "priority", &path)?,
            datacenters: datacenters.filter(|d| d != &["dc1".to_string()]),
            node_pool: self
                .string(body, "node_pool", &path)?
                .filter(|p| p != "default"),
            groups,
        })
    }

    fn update_block(&self, body: &Body, path: &str) -> Result<Option<UpdateSpec>, ImportError> {
        let Some(b) = body.blocks.iter().find(|b| b.kind == "update") else {
            return Ok(None);
        };
        let path = format!("{path}.update");
        let u = &b.body;
        let spec = UpdateSpec {
            max_parallel: self.uint(u, "max_parallel", &path)?,
            canary: self.uint(u, "canary", &path)?,
            auto_revert: self.bool(u, "auto_revert", &path)?,
            auto_promote: self.bool(u, "auto_promote", &path)?,
            min_healthy_time: self.dur(u, "min_healthy_time", &path)?,
            healthy_deadline: self.dur(u, "healthy_deadline", &path)?,
            progress_deadline: self.dur(u, "progress_deadline", &path)?,
            health_check: self.string(u, "health_check", &path)?,
        };
        // max_parallel = 0 turns rolling updates off.
        Ok((spec.max_parallel != Some(0)).then_some(spec))
    }

    fn constraints(
        &self,
        body: &Body,
        path: &str,
        c: &mut Collected,
    ) -> Result<Option<Vec<String>>, ImportError> {
        let mut nodes: Option<Vec<String>> = None;
        for b in body.blocks.iter().filter(|b| b.kind == "constraint") {
            let p = format!("{path}.constraint");
            let attribute = self.string(&b.body, "attribute", &p)?.unwrap_or_default();
            let operator = self
                .string(&b.body, "operator", &p)?
                .unwrap_or_else(|| "=".into());
            let value = self.string(&b.body, "value", &p)?.unwrap_or_default();
            match super::node_id_constraint(&attribute, &operator, &value) {
                Some(ids) => nodes = Some(super::intersect_nodes(nodes, ids)),
                None => c.warn(
                    self.source,
                    &format!("{p} (line {})", b.pos.line),
                    format!(
                        "constraint {attribute} {operator} {value:?} is not supported (only node \
                         ID constraints are); ignored"
                    ),
                ),
            }
        }
        Ok(nodes)
    }

    fn group(
        &self,
        block: &Block,
        job_path: &str,
        c: &mut Collected,
    ) -> Result<GroupSpec, ImportError> {
        let name = self.label(block, &format!("{job_path}.group"))?;
        let path = format!("{job_path}.group[{name}]");
        let body = &block.body;
        self.check_known(
            c,
            body,
            &path,
            &[
                "count",
                "max_client_disconnect",
                "stop_after_client_disconnect",
                "prevent_reschedule_on_lost",
            ],
            &[
                "task",
                "update",
                "reschedule",
                "disconnect",
                "ephemeral_disk",
                "constraint",
                "meta",
                "restart",
            ],
        );
        let mut nodes = self.constraints(body, &path, c)?;
        let reschedule = match body.blocks.iter().find(|b| b.kind == "reschedule") {
            None => None,
            Some(b) => {
                let p = format!("{path}.reschedule");
                let r = &b.body;
                Some(RescheduleSpec {
                    attempts: self.int(r, "attempts", &p)?,
                    interval: self.dur(r, "interval", &p)?,
                    delay: self.dur(r, "delay", &p)?,
                    delay_function: self.string(r, "delay_function", &p)?,
                    max_delay: self.dur(r, "max_delay", &p)?,
                    unlimited: self.bool(r, "unlimited", &p)?,
                })
            }
        };
        let disconnect = match body.blocks.iter().find(|b| b.kind == "disconnect") {
            None => None,
            Some(b) => {
                let p = format!("{path}.disconnect");
                let d = &b.body;
                let reconcile = self.string(d, "reconcile", &p)?;
                if let Some(s) = &reconcile
                    && !matches!(
                        s.as_str(),
                        "best_score" | "keep_original" | "keep_replacement" | "longest_running"
                    )
                {
                    let line = d.attr("reconcile").map_or(0, |a| a.pos.line);
                    return Err(self.err(
                        &format!("{p}.reconcile"),
                        line,
                        format!("unknown reconcile strategy {s:?}"),
                    ));
                }
                Some(DisconnectSpec {
                    lost_after: self.dur(d, "lost_after", &p)?,
                    replace: self.bool(d, "replace", &p)?,
                    reconcile,
                    stop_on_client_after: self.dur(d, "stop_on_client_after", &p)?,
                })
            }
        };
        let ephemeral_disk = match body.blocks.iter().find(|b| b.kind == "ephemeral_disk") {
            None => None,
            Some(b) => {
                let p = format!("{path}.ephemeral_disk");
                Some(DiskSpec {
                    sticky: self.bool(&b.body, "sticky", &p)?.unwrap_or(false),
                    migrate: self.bool(&b.body, "migrate", &p)?.unwrap_or(false),
                    size_mb: self.int(&b.body, "size", &p)?,
                })
            }
        };
        let mut tasks = Vec::new();
        let (mut cpu, mut memory, mut any) = (0u64, 0u64, false);
        for t in body.blocks.iter().filter(|b| b.kind == "task") {
            let tname = self.label(t, &format!("{path}.task"))?;
            let p = format!("{path}.task[{tname}]");
            self.check_known(
                c,
                &t.body,
                &p,
                &["driver", "leader", "kill_timeout", "user", "kill_signal"],
                &[
                    "config",
                    "resources",
                    "constraint",
                    "env",
                    "template",
                    "meta",
                    "service",
                    "restart",
                ],
            );
            if let Some(r) = t.body.blocks.iter().find(|b| b.kind == "resources") {
                let rp = format!("{p}.resources");
                if let Some(n) = self.uint::<u64>(&r.body, "cpu", &rp)? {
                    cpu += n;
                    any = true;
                }
                if let Some(n) = self.uint::<u64>(&r.body, "memory", &rp)? {
                    memory += n;
                    any = true;
                }
            }
            if let Some(more) = self.constraints(&t.body, &p, c)? {
                nodes = Some(match nodes {
                    None => more,
                    Some(prev) => prev.into_iter().filter(|n| more.contains(n)).collect(),
                });
            }
            let config = t
                .body
                .blocks
                .iter()
                .find(|b| b.kind == "config")
                .map(|b| body_json(&b.body));
            tasks.push(TaskSpec {
                name: tname,
                leader: self.bool(&t.body, "leader", &p)?,
                config,
                kill_timeout: self.dur(&t.body, "kill_timeout", &p)?,
            });
        }
        Ok(GroupSpec {
            name,
            count: self.uint(body, "count", &path)?,
            cpu: any.then_some(cpu).filter(|n| *n > 0),
            memory_mb: any.then_some(memory).filter(|n| *n > 0),
            nodes,
            max_client_disconnect: self.dur(body, "max_client_disconnect", &path)?,
            stop_after_client_disconnect: self.dur(body, "stop_after_client_disconnect", &path)?,
            prevent_reschedule_on_lost: self.bool(body, "prevent_reschedule_on_lost", &path)?,
            disconnect,
            reschedule,
            update: self.update_block(body, &path)?,
            ephemeral_disk,
            tasks: (!tasks.is_empty()).then_some(tasks),
        })
    }
}
