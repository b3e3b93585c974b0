//! A Mermaid sequence diagram of a trace: the clients' RPCs to the leader
//! and the replies, held/dropped/failed calls, heartbeat expiry and node
//! status changes, and each eval from creation to its reconciler result.
//! GitHub renders ```` ```mermaid ```` blocks in issues.
//!
//! Participants are `Server` (the leader), `Scheduler` (the eval broker and
//! worker) and one per client node, in order of appearance. Message text is
//! sanitised for Mermaid (`;`, `#`, `:` and newlines are special there), and
//! the diagram is cut at [`MAX_MESSAGES`] with a note saying so.

use crate::sim::queue::Seconds;
use crate::sim::trace::{EvalProcessed, TraceEntry, TraceEvent, fmt_updates, short};

/// Most messages in one diagram (GitHub refuses very large diagrams).
pub const MAX_MESSAGES: usize = 300;

fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ';' => out.push(','),
            '#' => out.push('№'),
            '\n' | '\r' => out.push(' '),
            '<' => out.push('‹'),
            '>' => out.push('›'),
            _ => out.push(c),
        }
    }
    // Mermaid ends the message at the first `:`... only in the arrow part;
    // in the text a colon is fine, but keep it short.
    if out.chars().count() > 120 {
        let cut: String = out.chars().take(117).collect();
        return cut + "...";
    }
    out
}

fn seconds(tick: u64) -> String {
    format!("{}s", Seconds::of(tick))
}

/// Routine traffic left out: heartbeats that change nothing (a client's
/// `Node.UpdateStatus` with `status=ready` and its reply), repeats of a
/// failing call until the client gets through again, and repeats of a missed
/// heartbeat until the node's status changes.
fn routine(entry: &TraceEntry, failing: &mut Vec<(String, String)>) -> bool {
    match &entry.event {
        TraceEvent::CallSent {
            rpc, detail, held, ..
        } => *rpc == "Node.UpdateStatus" && &**detail == "status=ready" && !held,
        TraceEvent::Reply {
            node, rpc, detail, ..
        } => {
            failing.retain(|(n, _)| **n != **node);
            *rpc == "Node.UpdateStatus" && detail.text().starts_with("ttl=")
        }
        TraceEvent::NodeStatus(change) => {
            failing.retain(|(n, _)| **n != *change.node);
            false
        }
        TraceEvent::HeartbeatMissed(missed) => {
            let key = (
                missed.node.to_string(),
                format!("heartbeat {}", missed.requested),
            );
            if failing.contains(&key) {
                true
            } else {
                failing.push(key);
                false
            }
        }
        TraceEvent::CallFailed { node, rpc, .. } => {
            let key = (node.to_string(), rpc.to_string());
            if failing.contains(&key) {
                true
            } else {
                failing.push(key);
                false
            }
        }
        _ => false,
    }
}

/// The diagram text (without the ```` ``` ```` fence).
pub fn mermaid(entries: &[TraceEntry]) -> String {
    let mut failing = Vec::new();
    let mut nodes: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut truncated = false;
    let alias = |node: &str, nodes: &mut Vec<String>| -> String {
        let index = match nodes.iter().position(|n| n == node) {
            Some(i) => i,
            None => {
                nodes.push(node.to_string());
                nodes.len() - 1
            }
        };
        format!("C{index}")
    };
    let mut last_tick = None;
    for entry in entries {
        if count >= MAX_MESSAGES {
            truncated = true;
            break;
        }
        if routine(entry, &mut failing) {
            continue;
        }
        let line = match &entry.event {
            TraceEvent::Action { text } => Some(format!(
                "Note over Server: step {} at {}: {}",
                entry.step,
                seconds(entry.tick),
                clean(text)
            )),
            TraceEvent::CallSent {
                node,
                call,
                rpc,
                detail,
                held,
            } => {
                let c = alias(node, &mut nodes);
                let arrow = if *held { "-)" } else { "->>" };
                Some(format!(
                    "{c}{arrow}Server: {rpc} №{call}{}{}",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", clean(detail))
                    },
                    if *held { " [held]" } else { "" }
                ))
            }
            TraceEvent::CallFailed {
                node,
                call,
                rpc,
                reason,
            } => {
                let c = alias(node, &mut nodes);
                Some(format!(
                    "{c}-xServer: {rpc} №{call} failed: {}",
                    clean(reason)
                ))
            }
            TraceEvent::CallControl { node, call, what } => {
                let c = alias(node, &mut nodes);
                Some(format!("Note over {c}: call №{call} {}", clean(what)))
            }
            TraceEvent::CallHandled {
                accepted: false,
                node,
                call,
                rpc,
                detail,
            } => {
                let c = alias(node, &mut nodes);
                Some(format!(
                    "Note over Server,{c}: {rpc} №{call} refused: {}",
                    clean(&detail.text())
                ))
            }
            TraceEvent::Reply {
                node,
                call,
                rpc,
                detail,
            } => {
                let c = alias(node, &mut nodes);
                Some(format!(
                    "Server-->>{c}: {rpc} №{call} reply{}",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", clean(&detail.text()))
                    }
                ))
            }
            TraceEvent::HeartbeatMissed(missed) => Some(format!(
                "Note over Server: heartbeat of {} missed → {}",
                clean(&missed.node),
                missed.requested
            )),
            TraceEvent::NodeStatus(change) => Some(format!(
                "Note over Server: node {} {} → {}",
                clean(&change.node),
                change.from,
                change.to
            )),
            TraceEvent::EvalCreated(created) => Some(format!(
                "Server->>Scheduler: eval {} {} for {} ({})",
                short(&created.eval),
                clean(&created.trigger),
                clean(&created.job),
                created.status
            )),
            TraceEvent::EvalProcessed(processed) => {
                let EvalProcessed {
                    eval,
                    desired_tg_updates,
                    status,
                    ..
                } = &**processed;
                let updates: Vec<String> = desired_tg_updates
                    .iter()
                    .map(|(group, u)| format!("{group}: {}", fmt_updates(u)))
                    .collect();
                Some(format!(
                    "Scheduler->>Server: eval {} {status}, plan {}",
                    short(eval),
                    clean(&updates.join(", "))
                ))
            }
            TraceEvent::Operator {
                rpc,
                accepted,
                detail,
            } => Some(if *accepted {
                format!("Note over Server: operator {rpc} accepted")
            } else {
                format!(
                    "Note over Server: operator {rpc} refused: {}",
                    clean(detail)
                )
            }),
            TraceEvent::PlanRejected { node, reason } => Some(format!(
                "Note over Scheduler: plan for {} rejected: {}",
                clean(node),
                clean(reason)
            )),
            TraceEvent::Link { node, detail } => {
                let c = alias(node, &mut nodes);
                Some(format!("Note over {c}: link {}", clean(detail)))
            }
            TraceEvent::Assertion { ok: false, detail } => Some(format!(
                "Note over Server: ASSERTION FAILED: {}",
                clean(detail)
            )),
            TraceEvent::Violation { detail } => {
                Some(format!("Note over Server: INVARIANT: {}", clean(detail)))
            }
            _ => None,
        };
        if let Some(line) = line {
            if last_tick.is_some_and(|t| entry.tick >= t + 1000)
                && !line.starts_with("Note over Server: step")
            {
                // A second or more passed: say when we are.
                lines.push(format!(
                    "Note right of Scheduler: t={}",
                    seconds(entry.tick)
                ));
            }
            if last_tick.is_none_or(|t| entry.tick >= t + 1000)
                || line.starts_with("Note over Server: step")
            {
                last_tick = Some(entry.tick);
            }
            lines.push(format!("    {line}"));
            count += 1;
        }
    }
    let mut out = String::from("sequenceDiagram\n");
    for (i, node) in nodes.iter().enumerate() {
        out.push_str(&format!("    participant C{i} as {}\n", clean(node)));
    }
    out.push_str("    participant Server as Server (leader)\n");
    out.push_str("    participant Scheduler\n");
    for line in lines {
        if !line.starts_with("    ") {
            out.push_str("    ");
        }
        out.push_str(&line);
        out.push('\n');
    }
    if truncated {
        out.push_str(&format!(
            "    Note over Server: … cut after {MAX_MESSAGES} messages (see the trace JSON)\n"
        ));
    }
    out
}
