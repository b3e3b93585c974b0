//! The cluster view: client nodes with their status, link and allocations,
//! and the Offline zone a node is dragged onto to cut its link.

use crate::state::{Action, AppState, Selection, Session};
use nomad_playground::playground::Command;
use nomad_playground::view::{AllocView, NodeView};
use std::sync::Arc;
use yew::prelude::*;

/// Properties of [`ClusterPanel`].
#[derive(Properties, PartialEq)]
pub struct ClusterPanelProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

const DRAG_TYPE: &str = "text/plain";

/// The glyph of a node status light.
pub fn status_glyph(status: &str) -> &'static str {
    match status {
        "ready" => "✓",
        "down" => "✕",
        "disconnected" => "⊘",
        "initializing" => "↪",
        _ => "•",
    }
}

/// The glyph drawn on an allocation block.
pub fn alloc_glyph(client_status: &str) -> &'static str {
    match client_status {
        "running" => "▶",
        "complete" => "✓",
        "failed" => "✕",
        "lost" => "−",
        "unknown" => "?",
        _ => "…",
    }
}

/// Draws every client node with its allocations, and the Offline zone.
#[component]
pub fn ClusterPanel(props: &ClusterPanelProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let view = session.view();
    // Each node with its position in the view's list (where its TTL is looked up).
    let (online, offline): (Vec<_>, Vec<_>) = view
        .nodes
        .iter()
        .enumerate()
        .partition(|(_, node): &(usize, &NodeView)| node.link_up);
    let drop_to = |up: bool| {
        let state = state.clone();
        Callback::from(move |event: DragEvent| {
            event.prevent_default();
            let Some(data) = event.data_transfer() else {
                return;
            };
            let Ok(node_id) = data.get_data(DRAG_TYPE) else {
                return;
            };
            let Some(node_id) = node_id.strip_prefix("node:") else {
                return;
            };
            let command = if up {
                Command::RestoreLink(node_id.to_string())
            } else {
                Command::CutLink(node_id.to_string())
            };
            state.dispatch(Action::Core(command));
        })
    };
    let allow_drop = Callback::from(|event: DragEvent| event.prevent_default());
    // Each card gets only its own part of the selection, so selecting
    // something re-renders the cards it concerns, not all of them.
    let dispatcher = state.dispatcher();
    let card = |(index, node): &(usize, &NodeView)| {
        let selected_alloc = match &state.selection {
            Selection::Alloc(id) if node.allocs.iter().any(|a| &a.id == id) => Some(id.clone()),
            _ => None,
        };
        html! {
            <NodeCard key={node.id.clone()} node={(*node).clone()} index={*index}
                      selected={matches!(&state.selection, Selection::Node(id) if *id == node.id)}
                      {selected_alloc} dispatcher={dispatcher.clone()} />
        }
    };
    let mut counts = [0; 6];
    for alloc in view.nodes.iter().flat_map(|n| n.allocs.iter()) {
        if let Some(i) = STATUSES.iter().position(|s| *s == alloc.client_status) {
            counts[i] += 1;
        }
    }
    html! {
        <section class="cluster" data-testid="cluster" aria-label="Client nodes">
            <h2 class="panel-title">{ "Clients" }</h2>
            // The heartbeat TTLs change at every step, for every node: they read the
            // session from this context, so a card whose node is otherwise unchanged
            // is skipped and only its small TTL component renders.
            <ContextProvider<Session> context={state.session.clone()}>
                <div class="online-zone" data-testid="online-zone" ondragover={allow_drop.clone()} ondrop={drop_to(true)}>
                    { for online.iter().map(&card) }
                </div>
                <div class="offline-zone" data-testid="offline-zone" ondragover={allow_drop} ondrop={drop_to(false)}
                     aria-label="Offline: drop a node here to cut its link to the servers">
                    <div class="offline-label">{ "⊗ Offline — drop a node here to cut its link" }</div>
                    { for offline.iter().map(&card) }
                </div>
            </ContextProvider<Session>>
            <Legend {counts} />
        </section>
    }
}

/// Properties of [`NodeCard`].
#[derive(Properties)]
pub struct NodeCardProps {
    /// The node. Its heartbeat TTL is not part of the card's props (see
    /// the `PartialEq` below): [`NodeTtl`] draws it.
    pub node: NodeView,
    /// The node's position in the view's node list (where [`NodeTtl`] looks first).
    pub index: usize,
    /// Whether the node is selected.
    pub selected: bool,
    /// The selected allocation, when it is on this node.
    pub selected_alloc: Option<String>,
    /// Sends actions to the reducer.
    pub dispatcher: UseReducerDispatcher<AppState>,
}

impl PartialEq for NodeCardProps {
    /// Everything but the node's TTL, which changes at every step.
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.node, &other.node);
        a.id == b.id
            && a.name == b.name
            && a.status == b.status
            && a.link_up == b.link_up
            && a.eligible == b.eligible
            && a.draining == b.draining
            && a.allocs == b.allocs
            && self.index == other.index
            && self.selected == other.selected
            && self.selected_alloc == other.selected_alloc
            && self.dispatcher == other.dispatcher
    }
}

/// One node card. A component of its own so that a step re-renders only the
/// nodes whose view changed.
#[component]
pub fn NodeCard(props: &NodeCardProps) -> Html {
    let node = &props.node;
    let state = &props.dispatcher;
    let node_id = node.id.clone();
    let on_drag_start = {
        let node_id = node_id.clone();
        Callback::from(move |event: DragEvent| {
            if let Some(data) = event.data_transfer() {
                let _ = data.set_data(DRAG_TYPE, &format!("node:{node_id}"));
            }
        })
    };
    let toggle_link = {
        let state = state.clone();
        let node_id = node_id.clone();
        let up = node.link_up;
        Callback::from(move |_: MouseEvent| {
            let command = if up {
                Command::CutLink(node_id.clone())
            } else {
                Command::RestoreLink(node_id.clone())
            };
            state.dispatch(Action::Core(command));
        })
    };
    let on_key = {
        let state = state.clone();
        let node_id = node_id.clone();
        let up = node.link_up;
        Callback::from(move |event: KeyboardEvent| {
            // `o` takes the node offline or back, without dragging (WCAG 2.5.7).
            if event.key() == "o" {
                event.prevent_default();
                event.stop_propagation();
                let command = if up {
                    Command::CutLink(node_id.clone())
                } else {
                    Command::RestoreLink(node_id.clone())
                };
                state.dispatch(Action::Core(command));
            }
        })
    };
    let select = {
        let state = state.clone();
        let node_id = node_id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Select(Selection::Node(node_id.clone())))
        })
    };
    let selected = props.selected;
    html! {
        <article class={classes!("node", format!("status-{}", node.status), selected.then_some("selected"), (!node.link_up).then_some("link-down"))}
                 data-testid={format!("node-{}", node.id)}
                 data-status={node.status.clone()}
                 data-link={if node.link_up { "up" } else { "down" }}
                 draggable="true" ondragstart={on_drag_start} tabindex="0" onkeydown={on_key}
                 aria-label={format!("node {}, {}, link {}", node.name, node.status, if node.link_up { "up" } else { "down" })}>
            <header class="node-head" onclick={select}>
                <span class={classes!("status-light", format!("light-{}", node.status))} aria-hidden="true">{ status_glyph(&node.status) }</span>
                <span class="node-name">{ &node.name }</span>
                <span class="node-status" data-testid="node-status">{ &node.status }</span>
                <NodeTtl node_id={node.id.clone()} index={props.index} />
            </header>
            <div class="node-flags">
                <span class={classes!("link", if node.link_up { "link-up" } else { "link-cut" })} data-testid="node-link">
                    { if node.link_up { "● link up" } else { "○ link cut" } }
                </span>
                { if node.draining { html!{ <span class="flag">{ "draining" }</span> } } else { html!{} } }
                { if !node.eligible { html!{ <span class="flag">{ "ineligible" }</span> } } else { html!{} } }
                <button class="link-toggle" data-testid="link-toggle" onclick={toggle_link}>
                    { if node.link_up { "Cut link" } else { "Restore link" } }
                </button>
            </div>
            <AllocList allocs={node.allocs.clone()} selected={props.selected_alloc.clone()} dispatcher={state.clone()} />
        </article>
    }
}

/// Properties of [`NodeTtl`].
#[derive(Properties, PartialEq)]
pub struct NodeTtlProps {
    /// The node.
    pub node_id: String,
    /// Where the node was in the view's node list when its card rendered.
    pub index: usize,
}

/// A node's heartbeat TTL countdown, read from the session in context: the
/// one part of a card that changes at every step.
#[component]
pub fn NodeTtl(props: &NodeTtlProps) -> Html {
    let session = use_context::<Session>();
    let ttl = session.and_then(|session| {
        let playground = session.get();
        let nodes = &playground.view().nodes;
        let node = match nodes.get(props.index) {
            Some(node) if node.id == props.node_id => Some(node),
            _ => nodes.iter().find(|node| node.id == props.node_id),
        };
        node.and_then(|node| node.ttl_left_ms)
    });
    let text = ttl
        .map(|ms| format!("TTL {:.1}s", ms as f64 / 1000.0))
        .unwrap_or_default();
    html! { <span class="node-ttl mono" data-testid="node-ttl">{ text }</span> }
}

/// Properties of [`AllocList`].
#[derive(Properties, PartialEq)]
pub struct AllocListProps {
    /// The node's allocations: unchanged ones are the same `Arc` from step
    /// to step, so comparing the props is a few pointer comparisons.
    pub allocs: Vec<Arc<AllocView>>,
    /// The selected allocation, when it is in the list.
    pub selected: Option<String>,
    /// Sends actions to the reducer.
    pub dispatcher: UseReducerDispatcher<AppState>,
}

/// A node's allocation blocks. A component of its own so that a step that
/// changes only the node's status or TTL leaves them alone.
#[component]
pub fn AllocList(props: &AllocListProps) -> Html {
    html! {
        <ul class="allocs" aria-label="allocations">
            { for props.allocs.iter().map(|alloc| alloc_block(alloc, &props.dispatcher, props.selected.as_ref() == Some(&alloc.id))) }
        </ul>
    }
}

fn alloc_block(alloc: &AllocView, state: &UseReducerDispatcher<AppState>, selected: bool) -> Html {
    let select = {
        let state = state.clone();
        let alloc_id = alloc.id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Select(Selection::Alloc(alloc_id.clone())))
        })
    };
    let stopping = alloc.desired_status != "run";
    // Deployment facts, only for allocs that have them: `, canary, healthy`.
    let mut deployment = String::new();
    if alloc.canary {
        deployment.push_str(", canary");
    }
    if let Some(health) = &alloc.deployment_health {
        deployment.push_str(", ");
        deployment.push_str(health);
    }
    html! {
        <li key={alloc.id.as_str()}>
            <button class={classes!("alloc", format!("client-{}", alloc.client_status), stopping.then_some("desired-stop"), selected.then_some("selected"), alloc.canary.then_some("canary"))}
                data-testid={format!("alloc-{}", alloc.id)}
                data-client-status={alloc.client_status.clone()}
                data-desired-status={alloc.desired_status.clone()}
                data-health={alloc.deployment_health.clone()}
                onclick={select}
                aria-label={format!("{} {}, client {}, desired {}, job version {}{deployment}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status, alloc.job_version)}
                title={format!("{} · {} · client {} · desired {} · v{}{deployment}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status, alloc.job_version)}>
                <span class="alloc-glyph" aria-hidden="true">{ alloc_glyph(&alloc.client_status) }</span>
                <span class="alloc-index">{ format!("[{}]", alloc.name_index) }</span>
                <span class="alloc-version">{ format!("v{}", alloc.job_version) }</span>
                { match alloc.deployment_health.as_deref() {
                    Some("healthy") => html!{ <span class="alloc-health" aria-hidden="true">{ "♥" }</span> },
                    Some(_) => html!{ <span class="alloc-health unhealthy" aria-hidden="true">{ "♡" }</span> },
                    None => html!{},
                } }
                { if stopping { html!{ <span class="alloc-desired">{ &alloc.desired_status }</span> } } else { html!{} } }
            </button>
        </li>
    }
}

/// The client statuses the legend counts, in its order.
const STATUSES: [&str; 6] = [
    "pending", "running", "complete", "failed", "lost", "unknown",
];

/// Properties of [`Legend`].
#[derive(Properties, PartialEq)]
pub struct LegendProps {
    /// How many allocations have each client status of [`STATUSES`].
    pub counts: [usize; 6],
}

/// Counts of allocations by client status, with each status's glyph and word.
#[component]
pub fn Legend(props: &LegendProps) -> Html {
    html! {
        <ul class="legend" data-testid="legend" aria-label="allocations by client status">
            { for STATUSES.iter().zip(props.counts).map(|(status, count)| {
                html! {
                    <li class={classes!("legend-item", (count == 0).then_some("faded"))}
                        title={if *status == "unknown" { "node disconnected, may still be running" } else { "" }}>
                        <span class={classes!("swatch", format!("client-{status}"))} aria-hidden="true">{ alloc_glyph(status) }</span>
                        <span class="mono">{ count }</span>{ " " }{ *status }
                    </li>
                }
            }) }
        </ul>
    }
}
