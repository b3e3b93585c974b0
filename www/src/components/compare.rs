//! Compare mode: run B (the same script under a second profile) beside the
//! session's run A, stepped together by the usual controls. The core's
//! `ViewDiff` says what differs; this only draws it, with Nomad's job-diff
//! markers (`+` only in B, `−` only in A, `±` changed).

use crate::state::{Action, AppState};
use nomad_playground::compare::{AllocSide, Change, ViewDiff};
use nomad_playground::playground::Command;
use nomad_playground::view::PlaygroundView;
use yew::prelude::*;

/// What [`ComparePanel`] renders from.
pub type CompareDeps = (
    Option<crate::state::Session>,
    Option<crate::state::Session>,
    String,
    Vec<String>,
);

/// Properties of [`ComparePanel`].
#[derive(Properties)]
pub struct ComparePanelProps {
    /// The app state (read when rendering and in callbacks: the handle
    /// always gives the newest state).
    pub state: UseReducerHandle<AppState>,
    /// Run B's session, run A's session while B is on, A's profile and the
    /// profiles to pick from: everything the panel shows depends on.
    pub deps: CompareDeps,
}

impl PartialEq for ComparePanelProps {
    /// Only `deps`: a step that changes nothing the panel shows skips it.
    fn eq(&self, other: &Self) -> bool {
        self.deps == other.deps
    }
}

fn change_class(change: Change) -> &'static str {
    match change {
        Change::Added => "diff-added",
        Change::Removed => "diff-removed",
        Change::Edited => "diff-edited",
    }
}

fn marker(change: Change) -> Html {
    let word = match change {
        Change::Added => "only in B",
        Change::Removed => "only in A",
        Change::Edited => "differs",
    };
    html! { <span class={classes!("diff-marker", change_class(change))} aria-label={word} title={word}>{ change.marker() }</span> }
}

fn alloc_text(side: &Option<AllocSide>) -> String {
    side.as_ref().map_or_else(
        || "—".to_string(),
        |s| {
            format!(
                "{} / {} on {}",
                s.client_status, s.desired_status, s.node_id
            )
        },
    )
}

/// The compare panel.
#[component]
pub fn ComparePanel(props: &ComparePanelProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let view = session.view();
    let on_profile = {
        let state = state.clone();
        Callback::from(move |event: Event| {
            let select: web_sys::HtmlSelectElement = event.target_unchecked_into();
            let value = select.value();
            state.dispatch(Action::CompareWith((!value.is_empty()).then_some(value)));
        })
    };
    let other = state.compare.as_ref().map(|b| b.get());
    let chosen = other.as_ref().map(|b| b.view().profile.clone());
    let body = match &other {
        None => html! {
            <p class="muted">{ "Pick a second profile to run the same script under both, stepped together, with what differs marked." }</p>
        },
        Some(b) => {
            let diff = session.compare(b);
            html! {
                <>
                    <div class="compare-sides">
                        { side("A", view, &diff, true) }
                        { side("B", b.view(), &diff, false) }
                    </div>
                    { differences(&diff, &state) }
                </>
            }
        }
    };
    html! {
        <section class={classes!("panel", "compare", other.is_some().then_some("active"))} data-testid="compare-panel" aria-label="Compare two profiles">
            <h2 class="panel-title">{ "Compare" }</h2>
            <label class="compare-pick">
                <span>{ format!("Run A: {} · run B under", view.profile) }</span>
                <select data-testid="compare-profile" aria-label="Profile of run B" onchange={on_profile}>
                    <option value="" selected={chosen.is_none()}>{ "off" }</option>
                    { for view.profiles.iter().map(|p| html! {
                        <option value={p.clone()} selected={chosen.as_ref() == Some(p)}>{ p }</option>
                    }) }
                </select>
            </label>
            { body }
        </section>
    }
}

/// One run's cluster in brief: each node's status and its allocs, with what differs marked.
fn side(name: &str, view: &PlaygroundView, diff: &ViewDiff, is_a: bool) -> Html {
    html! {
        <div class="compare-side" data-testid={format!("compare-side-{}", name.to_ascii_lowercase())}
             aria-label={format!("run {name} under {}", view.profile)} role="group">
            <h3>{ format!("{name} · {}", view.profile) }</h3>
            <ul class="compare-nodes">
                { for view.nodes.iter().map(|node| {
                    let node_diff = diff.nodes.iter().find(|d| d.id == node.id);
                    html! {
                        <li class={classes!("compare-node", node_diff.is_some().then_some("differs"))}
                            data-testid={format!("compare-{}-node-{}", name.to_ascii_lowercase(), node.id)}
                            data-status={node.status.clone()}>
                            <span class={classes!("status-light", format!("light-{}", node.status))} aria-hidden="true">{ crate::components::cluster::status_glyph(&node.status) }</span>
                            <span class="node-name">{ &node.name }</span>
                            <span class="node-status">{ &node.status }</span>
                            { for node_diff.map(|d| marker(d.change)) }
                            <span class="compare-allocs">
                                { for node.allocs.iter().map(|alloc| {
                                    let alloc_diff = diff.allocs.iter().find(|d| d.id == alloc.id);
                                    let change = alloc_diff.map(|d| match (d.change, is_a) {
                                        (Change::Edited, _) => Change::Edited,
                                        (_, true) => Change::Removed,
                                        (_, false) => Change::Added,
                                    });
                                    html! {
                                        <span class={classes!("alloc", format!("client-{}", alloc.client_status),
                                                (alloc.desired_status != "run").then_some("desired-stop"),
                                                change.map(change_class))}
                                              role="img"
                                              aria-label={format!("{} {}, client {}, desired {}{}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status,
                                                  change.map_or(String::new(), |c| format!(", {}", match c { Change::Edited => "differs", Change::Added => "only in B", Change::Removed => "only in A" })))}>
                                            { format!("[{}]", alloc.name_index) }
                                            { for change.map(|c| html!{ <span class="alloc-diff">{ c.marker() }</span> }) }
                                        </span>
                                    }
                                }) }
                            </span>
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}

/// The list of differences, and where the runs first part.
fn differences(diff: &ViewDiff, state: &UseReducerHandle<AppState>) -> Html {
    if diff.is_same() {
        return html! {
            <p class="compare-same" data-testid="compare-same">
                { format!("No difference at step {}: {} and {} agree so far.", diff.step, diff.profile_a, diff.profile_b) }
            </p>
        };
    }
    let first = diff.first_difference.as_ref().map(|first| {
        let jump = {
            let state = state.clone();
            let step = first.step;
            Callback::from(move |_: MouseEvent| state.dispatch(Action::Core(Command::JumpTo(step))))
        };
        html! {
            <div class="compare-first" data-testid="compare-first-difference" data-step={first.step.to_string()}>
                <p>
                    { format!("The runs part at step {}. ", first.step) }
                    <button data-testid="compare-jump" onclick={jump} aria-label={format!("Go to step {}", first.step)}>{ format!("Go to step {}", first.step) }</button>
                </p>
                <pre class="mono">{ format!("A: {}\nB: {}", first.a.as_deref().unwrap_or("(trace ends)"), first.b.as_deref().unwrap_or("(trace ends)")) }</pre>
            </div>
        }
    });
    html! {
        <>
            <ul class="compare-diff" data-testid="compare-diff" aria-label={format!("differences at step {}", diff.step)}>
                { for diff.nodes.iter().map(|d| html! {
                    <li data-testid={format!("diff-node-{}", d.id)} data-kind="node">
                        { marker(d.change) }{ " node " }<b>{ &d.name }</b>
                        { format!(": A {} · B {}", d.a.as_deref().unwrap_or("—"), d.b.as_deref().unwrap_or("—")) }
                    </li>
                }) }
                { for diff.allocs.iter().map(|d| html! {
                    <li data-testid={format!("diff-alloc-{}", d.short_id)} data-kind="alloc">
                        { marker(d.change) }{ " alloc " }<b>{ &d.name }</b>{ " " }<code>{ &d.short_id }</code>
                        { format!(": A {} · B {}", alloc_text(&d.a), alloc_text(&d.b)) }
                    </li>
                }) }
                { for diff.evals.iter().map(|d| {
                    let status = |s: &Option<nomad_playground::compare::EvalSide>| s.as_ref().map_or_else(|| "—".to_string(), |s| format!("{} {}", s.short_id, s.status));
                    html! {
                        <li data-testid={format!("diff-eval-{}", d.triggered_by)} data-kind="eval">
                            { marker(d.change) }{ " eval " }<b>{ format!("{} {}", d.triggered_by, d.job_id) }</b>
                            { format!(": A {} · B {}", status(&d.a), status(&d.b)) }
                            { for d.counters.iter().map(|c| html! {
                                <span class="counter-diff mono">{ format!(" {}.{} {}→{}", c.group, c.counter, c.a, c.b) }</span>
                            }) }
                        </li>
                    }
                }) }
            </ul>
            { for first }
        </>
    }
}
