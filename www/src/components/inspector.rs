//! The inspector: why each allocation went where it did (eval tab), an
//! allocation's history (alloc tab), a node's state (node tab).

use crate::components::cluster::alloc_glyph;
use crate::state::{Action, AppState, Selection};
use nomad_playground::playground::Command;
use nomad_playground::scenario::format::Action as ScriptAction;
use nomad_playground::view::{AllocView, EvalView, NodeView};
use yew::prelude::*;

/// Properties of [`Inspector`].
#[derive(Properties)]
pub struct InspectorProps {
    /// The app state (read when rendering and in callbacks: the handle
    /// always gives the newest state).
    pub state: UseReducerHandle<AppState>,
    /// The session and the selection, or `None` when nothing is selected (the
    /// inspector then shows the same hint at every step).
    pub deps: Option<(crate::state::Session, crate::state::Selection)>,
}

impl PartialEq for InspectorProps {
    /// Only `deps`: a step that changes nothing the panel shows skips it.
    fn eq(&self, other: &Self) -> bool {
        self.deps == other.deps
    }
}

/// The inspector panel.
#[component]
pub fn Inspector(props: &InspectorProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let view = session.view();
    let body = match &state.selection {
        Selection::None => {
            html! { <p class="hint">{ "Select an evaluation, an allocation or a node to see why it is where it is." }</p> }
        }
        Selection::Eval(id) => match view.evals.iter().find(|e| &e.id == id) {
            Some(eval) => eval_detail(eval, &state),
            None => {
                html! { <p class="hint">{ "That evaluation does not exist at this step." }</p> }
            }
        },
        Selection::Alloc(id) => match view
            .nodes
            .iter()
            .flat_map(|n| n.allocs.iter())
            .find(|a| &a.id == id)
        {
            Some(alloc) => alloc_detail(alloc, &view.evals, &state),
            None => {
                html! { <p class="hint">{ "That allocation does not exist at this step." }</p> }
            }
        },
        Selection::Node(id) => match view.nodes.iter().find(|n| &n.id == id) {
            Some(node) => node_detail(
                node,
                crate::components::cluster::node_ttl(view, 0, &node.id),
                &state,
            ),
            None => html! { <p class="hint">{ "That node does not exist." }</p> },
        },
    };
    html! {
        <section class="panel inspector" data-testid="inspector" aria-label="Inspector">
            <h2 class="panel-title">{ "Inspector" }</h2>
            { body }
        </section>
    }
}

fn eval_detail(eval: &EvalView, state: &UseReducerHandle<AppState>) -> Html {
    html! {
        <div class="eval-detail" data-testid="eval-detail">
            <header>
                <code>{ &eval.short_id }</code>{ " " }
                <span class={classes!("badge", format!("eval-{}", eval.status))}>{ &eval.status }</span>
            </header>
            <dl class="pairs">
                <dt>{ "Job" }</dt><dd>{ &eval.job_id }</dd>
                <dt>{ "Triggered by" }</dt><dd data-testid="eval-trigger">{ &eval.triggered_by }</dd>
                <dt>{ "Priority" }</dt><dd>{ eval.priority }</dd>
                { if let Some(node) = &eval.node_id { html!{ <><dt>{ "Node" }</dt><dd><code>{ node }</code></dd></> } } else { html!{} } }
                { if let Some(wait) = &eval.wait_until { html!{ <><dt>{ "Wait until" }</dt><dd>{ wait }</dd></> } } else { html!{} } }
            </dl>
            { for eval.desired_tg_updates.iter().map(|(group, counters)| html! {
                <table class="tg-updates" data-testid="desired-tg-updates">
                    <caption>{ format!("DesiredTGUpdates · {group}") }</caption>
                    <tbody>
                        { for counters.iter().map(|(name, value)| html! {
                            <tr class={classes!((*value == 0).then_some("faded"))}><th>{ name }</th><td class="mono">{ value }</td></tr>
                        }) }
                    </tbody>
                </table>
            }) }
            <table class="decisions" data-testid="decisions">
                <thead><tr><th>{ "alloc" }</th><th>{ "set" }</th><th>{ "why" }</th><th>{ "effect" }</th></tr></thead>
                <tbody>
                    { for eval.decisions.iter().map(|d| {
                        let select = {
                            let state = state.clone();
                            let id = d.alloc_id.clone();
                            Callback::from(move |_: MouseEvent| state.dispatch(Action::Select(Selection::Alloc(id.clone()))))
                        };
                        html! {
                            <tr data-testid={format!("decision-{}", d.alloc_id)}>
                                <td><button class="link-button" onclick={select}>{ &d.alloc_name }</button></td>
                                <td class="mono" data-testid="decision-set">{ &d.set }</td>
                                <td>{ &d.why }</td>
                                <td data-testid="decision-effect">{ &d.effect }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}

fn alloc_detail(
    alloc: &AllocView,
    evals: &[std::rc::Rc<EvalView>],
    state: &UseReducerHandle<AppState>,
) -> Html {
    let link = |id: &Option<String>| match id {
        Some(id) => {
            let state = state.clone();
            let target = id.clone();
            let onclick = Callback::from(move |_: MouseEvent| {
                state.dispatch(Action::Select(Selection::Alloc(target.clone())))
            });
            html! { <button class="link-button mono" {onclick}>{ id.chars().take(8).collect::<String>() }</button> }
        }
        None => html! { <span class="muted">{ "—" }</span> },
    };
    let history: Vec<Html> = evals
        .iter()
        .flat_map(|eval| eval.decisions.iter().filter(|d| d.alloc_id == alloc.id).map(move |d| (eval, d)))
        .map(|(eval, d)| html! {
            <li><code>{ &eval.short_id }</code>{ format!(" {} → {} · {} · {}", eval.triggered_by, d.set, d.why, d.effect) }</li>
        })
        .collect();
    let task_action = |make: fn(String) -> ScriptAction| {
        let state = state.clone();
        let id = alloc.id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Core(Command::Act(make(id.clone()))))
        })
    };
    html! {
        <div class="alloc-detail" data-testid="alloc-detail">
            <div class="actions" role="group" aria-label="Task actions">
                <button data-testid="task-fail" onclick={task_action(|alloc| ScriptAction::TaskFail { alloc, task: None })}>{ "Fail task" }</button>
                <button data-testid="task-complete" onclick={task_action(|alloc| ScriptAction::TaskComplete { alloc, task: None })}>{ "Complete task" }</button>
                <button data-testid="task-restart" onclick={task_action(|alloc| ScriptAction::TaskRestart { alloc, task: None })}>{ "Restart task" }</button>
            </div>
            <header>
                <span class={classes!("swatch", format!("client-{}", alloc.client_status))} aria-hidden="true">{ alloc_glyph(&alloc.client_status) }</span>
                { " " }{ &alloc.name }{ " " }<code>{ &alloc.short_id }</code>
            </header>
            <dl class="pairs">
                <dt>{ "Client status" }</dt><dd data-testid="alloc-client-status">{ &alloc.client_status }</dd>
                <dt>{ "Desired status" }</dt><dd>{ &alloc.desired_status }</dd>
                <dt>{ "Job version" }</dt><dd>{ alloc.job_version }</dd>
                <dt>{ "Deployment health" }</dt>
                <dd data-testid="alloc-deployment-health">
                    { alloc.deployment_health.as_deref().unwrap_or("unset") }{ if alloc.canary { " · canary" } else { "" } }
                </dd>
                <dt>{ "Node" }</dt><dd><code>{ &alloc.node_id }</code></dd>
                <dt>{ "Previous" }</dt><dd>{ link(&alloc.previous) }</dd>
                <dt>{ "Next" }</dt><dd>{ link(&alloc.next) }</dd>
                <dt>{ "Follow-up eval" }</dt><dd>{ alloc.followup_eval.clone().unwrap_or_else(|| "—".into()) }</dd>
            </dl>
            <h3>{ "AllocStates" }</h3>
            <ol class="timeline" data-testid="alloc-states">
                { for alloc.alloc_states.iter().rev().map(|(value, time)| html! { <li><span class="mono">{ time }</span>{ " ClientStatus → " }{ value }</li> }) }
            </ol>
            <h3>{ "Tasks" }</h3>
            <ul class="tasks">
                { for alloc.tasks.iter().map(|(task, st, restarts)| html! { <li>{ format!("{task}: {st} ({restarts} restarts)") }</li> }) }
            </ul>
            <h3>{ "Decisions over time" }</h3>
            <ul class="history" data-testid="alloc-history">{ for history }</ul>
        </div>
    }
}

fn node_detail(
    node: &NodeView,
    ttl_left_ms: Option<u64>,
    state: &UseReducerHandle<AppState>,
) -> Html {
    // Each alloc as a full-size button: dense cluster rows draw them as small cells.
    let allocs = node.allocs.iter().map(|alloc| {
        let state = state.clone();
        let target = alloc.id.clone();
        let onclick = Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Select(Selection::Alloc(target.clone())))
        });
        html! {
            <li><button class="link-button" {onclick}>
                <span class={classes!("swatch", format!("client-{}", alloc.client_status))} aria-hidden="true">{ alloc_glyph(&alloc.client_status) }</span>
                { &alloc.name }{ " " }<code>{ &alloc.short_id }</code>{ " " }{ &alloc.client_status }
            </button></li>
        }
    });
    html! {
        <div class="node-detail" data-testid="node-detail">
            <header>{ &node.name }{ " " }<code>{ &node.id }</code></header>
            <dl class="pairs">
                <dt>{ "Status" }</dt><dd>{ &node.status }</dd>
                <dt>{ "Link" }</dt><dd>{ if node.link_up { "up" } else { "cut by you" } }</dd>
                <dt>{ "Heartbeat TTL left" }</dt><dd>{ ttl_left_ms.map(crate::components::cluster::ttl_text).unwrap_or_else(|| "—".into()) }</dd>
                <dt>{ "Eligible" }</dt><dd>{ node.eligible }</dd>
                <dt>{ "Draining" }</dt><dd>{ node.draining }</dd>
                <dt>{ "Allocations" }</dt><dd>{ node.allocs.len() }</dd>
            </dl>
            <ul class="node-allocs" aria-label="allocations on the node">{ for allocs }</ul>
        </div>
    }
}
