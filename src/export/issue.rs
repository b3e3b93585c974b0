//! "Copy as GitHub issue body": a Markdown block with the scenario link,
//! the profile, the sequence diagram and the outcome (assertions, invariant
//! violations and the allocations at the current step).

use super::mermaid::mermaid;
use super::session_link;
use crate::share::encode_link;
use crate::sim::history::Session;
use crate::sim::queue::Seconds;
use crate::sim::trace::{TraceEvent, short};

/// The issue body for a session at its current step; `base` is the
/// playground's URL (the link is `base#v1.…`).
pub fn issue_body(session: &Session, base: &str) -> String {
    let link = encode_link(base, &session_link(session));
    let scenario = session.scenario();
    let profile = session.profile();
    let trace = session.trace();
    let mut out = String::new();
    out.push_str(&format!("### Reproduction: {}\n\n", md(&scenario.name)));
    if let Some(description) = &scenario.description {
        out.push_str(&format!("{}\n\n", md(description)));
    }
    out.push_str(&format!(
        "[Open the scenario in nomad-playground at step {}]({link}) (the link holds the whole \
         scenario; no server involved).\n\n",
        session.cursor()
    ));
    out.push_str(&format!(
        "- **Profile:** `{}` (Nomad {}; {})\n",
        profile.name, profile.version, profile.summary
    ));
    out.push_str(&format!(
        "- **Step:** {} of {}, at t = {}s\n",
        session.cursor(),
        session.actions().len(),
        Seconds::of(session.sim().tick)
    ));
    if let Some(source) = &scenario.source {
        out.push_str(&format!("- **Source:** {}\n", md(source)));
    }
    out.push_str(&format!("- **nomad-playground:** {}\n\n", crate::VERSION));

    out.push_str("#### Outcome\n\n");
    let failed: Vec<String> = trace
        .iter()
        .filter_map(|e| match &e.event {
            TraceEvent::Assertion { ok: false, detail } => Some(format!(
                "- assertion failed at step {}: {}",
                e.step,
                md(detail)
            )),
            TraceEvent::Violation { detail } => Some(format!(
                "- invariant violated at step {}: {}",
                e.step,
                md(detail)
            )),
            _ => None,
        })
        .collect();
    let passed = trace
        .iter()
        .filter(|e| matches!(e.event, TraceEvent::Assertion { ok: true, .. }))
        .count();
    if failed.is_empty() {
        out.push_str(&format!(
            "All {passed} assertion(s) held; no invariant violated.\n\n"
        ));
    } else {
        out.push_str(&format!("{passed} assertion(s) held; problems:\n\n"));
        for line in &failed {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    let snapshot = session.snapshot();
    if !snapshot.allocs.is_empty() {
        out.push_str("| alloc | name | node | client | desired | version |\n");
        out.push_str("| --- | --- | --- | --- | --- | --- |\n");
        for a in &snapshot.allocs {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                short(&a.id),
                md(&a.name),
                md(&a.node),
                a.client_status,
                a.desired_status,
                a.job_version
            ));
        }
        out.push('\n');
    }

    out.push_str(
        "<details><summary>Sequence diagram (client/server calls and evals)</summary>\n\n",
    );
    out.push_str("```mermaid\n");
    out.push_str(&mermaid(&trace));
    out.push_str("```\n\n</details>\n");
    out
}

/// Escapes Markdown table and HTML specials in free text.
fn md(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}
