//! Checking a scenario's assertions against the simulator's state.

use super::format::{Check, CountFilter};
use crate::model::ALLOC_STATE_FIELD_CLIENT_STATUS;
use crate::sim::Sim;
use crate::sim::trace::{fmt_updates, short};

/// Compares one expected value; appends a mismatch to `errors`.
fn expect<T: PartialEq + std::fmt::Display>(
    errors: &mut Vec<String>,
    field: &str,
    expected: Option<&T>,
    actual: T,
) {
    if let Some(expected) = expected
        && *expected != actual
    {
        errors.push(format!("{field} is {actual}, expected {expected}"));
    }
}

fn describe(subject: &str, errors: Vec<String>, ok_detail: String) -> (bool, String) {
    if errors.is_empty() {
        (true, format!("{subject}: {ok_detail}"))
    } else {
        (false, format!("{subject}: {}", errors.join("; ")))
    }
}

fn count_matches(sim: &Sim, filter: &CountFilter) -> u64 {
    sim.server
        .state
        .allocs
        .values()
        .filter(|a| filter.job.as_ref().is_none_or(|j| *j == a.job_id))
        .filter(|a| filter.name.as_ref().is_none_or(|n| *n == a.name))
        .filter(|a| filter.node.as_ref().is_none_or(|n| *n == a.node_id))
        .filter(|a| {
            filter
                .client_status
                .as_ref()
                .is_none_or(|s| s == a.client_status.as_str())
        })
        .filter(|a| {
            filter
                .desired_status
                .as_ref()
                .is_none_or(|s| s == a.desired_status.as_str())
        })
        .filter(|a| filter.job_version.is_none_or(|v| v == a.job_version()))
        .count() as u64
}

/// Evaluates one check: (held, text).
pub fn evaluate(sim: &Sim, check: &Check) -> (bool, String) {
    let state = &sim.server.state;
    let mut errors = Vec::new();
    if let Some(reference) = &check.alloc {
        let subject = format!("alloc {reference}");
        let Some(id) = sim.resolve_alloc(reference) else {
            let ok = check.exists == Some(false);
            return (
                ok,
                format!(
                    "{subject}: {}",
                    if ok {
                        "absent as expected"
                    } else {
                        "not found"
                    }
                ),
            );
        };
        let Some(alloc) = state.allocs.get(&id) else {
            let ok = check.exists == Some(false);
            return (
                ok,
                format!(
                    "{subject}: garbage-collected{}",
                    if ok { " (absent as expected)" } else { "" }
                ),
            );
        };
        if check.exists == Some(false) {
            return (
                false,
                format!("{subject}: exists ({}), expected absent", short(&id)),
            );
        }
        expect(
            &mut errors,
            "client_status",
            check.client_status.as_ref(),
            alloc.client_status.as_str().to_string(),
        );
        expect(
            &mut errors,
            "desired_status",
            check.desired_status.as_ref(),
            alloc.desired_status.as_str().to_string(),
        );
        expect(
            &mut errors,
            "job_version",
            check.job_version.as_ref(),
            alloc.job_version(),
        );
        expect(
            &mut errors,
            "node",
            check.on_node.as_ref(),
            alloc.node_id.clone(),
        );
        let last_state = alloc
            .alloc_states
            .iter()
            .rev()
            .find(|s| s.field == ALLOC_STATE_FIELD_CLIENT_STATUS)
            .map_or(String::new(), |s| s.value.clone());
        expect(
            &mut errors,
            "last_alloc_state",
            check.last_alloc_state.as_ref(),
            last_state,
        );
        if let Some(expected) = check.healthy {
            let actual = alloc.deployment_status.as_ref().and_then(|d| d.healthy);
            if actual != Some(expected) {
                errors.push(format!(
                    "healthy is {}, expected {expected}",
                    actual.map_or("unset".to_string(), |h| h.to_string())
                ));
            }
        }
        let detail = format!(
            "{} {}/{} v{} on {}",
            short(&id),
            alloc.desired_status,
            alloc.client_status,
            alloc.job_version(),
            alloc.node_id
        );
        return describe(&subject, errors, detail);
    }
    if let Some(filter) = &check.count {
        let actual = count_matches(sim, filter);
        let subject = format!(
            "count {}",
            serde_json::to_string(filter).unwrap_or_default()
        );
        expect(&mut errors, "count", check.equals.as_ref(), actual);
        return describe(&subject, errors, format!("{actual}"));
    }
    if let Some(node) = &check.node {
        let subject = format!("node {node}");
        let status = state
            .nodes
            .get(node)
            .map_or("unregistered".to_string(), |r| {
                r.node.status.as_str().to_string()
            });
        expect(&mut errors, "status", check.status.as_ref(), status.clone());
        return describe(&subject, errors, status);
    }
    if let Some(job) = &check.job {
        let subject = format!("job {job}");
        let Some(record) = state.jobs.get(job) else {
            let ok = check.exists == Some(false);
            return (
                ok,
                format!(
                    "{subject}: {}",
                    if ok {
                        "absent as expected"
                    } else {
                        "not found"
                    }
                ),
            );
        };
        expect(
            &mut errors,
            "job_version",
            check.job_version.as_ref(),
            record.job.version,
        );
        expect(
            &mut errors,
            "status",
            check.status.as_ref(),
            record.job.status.clone(),
        );
        expect(
            &mut errors,
            "stable",
            check.stable.as_ref(),
            sim.server.job_version_stable(job, record.job.version),
        );
        return describe(&subject, errors, format!("v{}", record.job.version));
    }
    if let Some(reference) = &check.deployment {
        return evaluate_deployment(sim, check, reference);
    }
    if let Some(reference) = &check.eval {
        let subject = format!("eval {reference}");
        let ids = sim.resolve_evals(reference);
        if let Some(expected) = check.equals {
            let actual = ids.len() as u64;
            expect(&mut errors, "count", Some(&expected), actual);
        }
        if check.exists == Some(false) {
            return if ids.is_empty() {
                (true, format!("{subject}: absent as expected"))
            } else {
                (false, format!("{subject}: exists, expected absent"))
            };
        }
        let needs_one = check.status.is_some()
            || check.desired_tg_updates.is_some()
            || check.exists == Some(true);
        if needs_one && ids.is_empty() {
            return (false, format!("{subject}: not found"));
        }
        let mut shown = format!("{} found", ids.len());
        if let Some(id) = ids.first().filter(|_| needs_one) {
            let record = &state.evals[id];
            expect(
                &mut errors,
                "status",
                check.status.as_ref(),
                record.eval.status.as_str().to_string(),
            );
            if let Some(expected) = &check.desired_tg_updates {
                match &record.outcome {
                    None => errors.push("not processed".to_string()),
                    Some(outcome) => {
                        for (group, counters) in expected {
                            let actual = outcome
                                .desired_tg_updates
                                .get(group)
                                .copied()
                                .unwrap_or_default();
                            let value = serde_json::to_value(actual).unwrap_or_default();
                            for (counter, want) in counters {
                                let got = value.get(counter).and_then(|v| v.as_u64());
                                match got {
                                    Some(got) if got == *want => {}
                                    Some(got) => errors.push(format!(
                                        "{group}.{counter} is {got}, expected {want}"
                                    )),
                                    None => {
                                        errors.push(format!("{group}.{counter} is not a counter"))
                                    }
                                }
                            }
                        }
                    }
                }
            }
            shown = format!(
                "{} {}{}",
                short(id),
                record.eval.status,
                record
                    .outcome
                    .as_ref()
                    .map(|o| o
                        .desired_tg_updates
                        .iter()
                        .map(|(g, u)| format!(" {g}{{{}}}", fmt_updates(u)))
                        .collect::<String>())
                    .unwrap_or_default()
            );
        }
        return describe(&subject, errors, shown);
    }
    (false, "check has no subject".to_string())
}

/// A `deployment` check: `job` (the latest deployment) or `job#n`.
fn evaluate_deployment(sim: &Sim, check: &Check, reference: &str) -> (bool, String) {
    let subject = format!("deployment {reference}");
    let (job, ordinal) = match reference.split_once('#') {
        Some((job, n)) => (job, n.parse::<usize>().ok()),
        None => (reference, None),
    };
    let mut deployments: Vec<_> = sim
        .server
        .state
        .deployments
        .values()
        .filter(|d| d.job_id == job)
        .collect();
    crate::cold_sort::sort_by_key(&mut deployments, |d| d.create_index);
    let mut errors = Vec::new();
    if let Some(expected) = check.equals {
        expect(
            &mut errors,
            "count",
            Some(&expected),
            deployments.len() as u64,
        );
    }
    let found = match ordinal {
        Some(n) => deployments.get(n).copied(),
        None => deployments.last().copied(),
    };
    let Some(deployment) = found else {
        let ok = check.exists == Some(false) && errors.is_empty();
        return (
            ok,
            format!(
                "{subject}: {}",
                if ok {
                    "absent as expected".to_string()
                } else if errors.is_empty() {
                    "not found".to_string()
                } else {
                    errors.join("; ")
                }
            ),
        );
    };
    if check.exists == Some(false) {
        return (false, format!("{subject}: exists, expected absent"));
    }
    let sum = |f: fn(&crate::model::DeploymentState) -> u32| {
        deployment
            .task_groups
            .values()
            .map(|s| u64::from(f(s)))
            .sum::<u64>()
    };
    expect(
        &mut errors,
        "status",
        check.status.as_ref(),
        deployment.status.as_str().to_string(),
    );
    expect(
        &mut errors,
        "status_description",
        check.status_description.as_ref(),
        deployment.status_description.clone(),
    );
    expect(
        &mut errors,
        "job_version",
        check.job_version.as_ref(),
        deployment.job_version,
    );
    expect(
        &mut errors,
        "placed_allocs",
        check.placed_allocs.as_ref(),
        sum(|s| s.placed_allocs),
    );
    expect(
        &mut errors,
        "healthy_allocs",
        check.healthy_allocs.as_ref(),
        sum(|s| s.healthy_allocs),
    );
    expect(
        &mut errors,
        "unhealthy_allocs",
        check.unhealthy_allocs.as_ref(),
        sum(|s| s.unhealthy_allocs),
    );
    let detail = format!(
        "{} v{} {} ({}), placed {} healthy {} unhealthy {}",
        short(&deployment.id),
        deployment.job_version,
        deployment.status,
        deployment.status_description,
        sum(|s| s.placed_allocs),
        sum(|s| s.healthy_allocs),
        sum(|s| s.unhealthy_allocs)
    );
    describe(&subject, errors, detail)
}
