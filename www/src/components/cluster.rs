//! The cluster view: client nodes with their status, link and allocations,
//! and the Offline zone a node is dragged onto to cut its link.

use crate::state::{Action, AppState, Selection};
use nomad_playground::playground::Command;
use nomad_playground::view::{AllocView, NodeView};
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
    let (online, offline): (Vec<&NodeView>, Vec<&NodeView>) =
        view.nodes.iter().partition(|node| node.link_up);
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
    html! {
        <section class="cluster" data-testid="cluster" aria-label="Client nodes">
            <h2 class="panel-title">{ "Clients" }</h2>
            <div class="online-zone" data-testid="online-zone" ondragover={allow_drop.clone()} ondrop={drop_to(true)}>
                { for online.iter().map(|node| html! { <NodeCard key={node.id.clone()} node={(*node).clone()} selection={state.selection.clone()} dispatcher={state.dispatcher()} /> }) }
            </div>
            <div class="offline-zone" data-testid="offline-zone" ondragover={allow_drop} ondrop={drop_to(false)}
                 aria-label="Offline: drop a node here to cut its link to the servers">
                <div class="offline-label">{ "⊗ Offline — drop a node here to cut its link" }</div>
                { for offline.iter().map(|node| html! { <NodeCard key={node.id.clone()} node={(*node).clone()} selection={state.selection.clone()} dispatcher={state.dispatcher()} /> }) }
            </div>
            <Legend nodes={view.nodes.clone()} />
        </section>
    }
}

/// Properties of [`NodeCard`].
#[derive(Properties, PartialEq)]
pub struct NodeCardProps {
    /// The node.
    pub node: NodeView,
    /// What is selected (to outline the node or one of its allocations).
    pub selection: Selection,
    /// Sends actions to the reducer.
    pub dispatcher: UseReducerDispatcher<AppState>,
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
    let selected = props.selection == Selection::Node(node.id.clone());
    let ttl = node
        .ttl_left_ms
        .map(|ms| format!("TTL {:.1}s", ms as f64 / 1000.0))
        .unwrap_or_default();
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
                <span class="node-ttl mono" data-testid="node-ttl">{ ttl }</span>
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
            <ul class="allocs" aria-label="allocations">
                { for node.allocs.iter().map(|alloc| alloc_block(alloc, state, &props.selection)) }
            </ul>
        </article>
    }
}

fn alloc_block(
    alloc: &AllocView,
    state: &UseReducerDispatcher<AppState>,
    selection: &Selection,
) -> Html {
    let select = {
        let state = state.clone();
        let alloc_id = alloc.id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Select(Selection::Alloc(alloc_id.clone())))
        })
    };
    let selected = *selection == Selection::Alloc(alloc.id.clone());
    let stopping = alloc.desired_status != "run";
    html! {
        <li>
            <button class={classes!("alloc", format!("client-{}", alloc.client_status), stopping.then_some("desired-stop"), selected.then_some("selected"))}
                data-testid={format!("alloc-{}", alloc.id)}
                data-client-status={alloc.client_status.clone()}
                data-desired-status={alloc.desired_status.clone()}
                onclick={select}
                aria-label={format!("{} {}, client {}, desired {}, job version {}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status, alloc.job_version)}
                title={format!("{} · {} · client {} · desired {} · v{}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status, alloc.job_version)}>
                <span class="alloc-glyph" aria-hidden="true">{ alloc_glyph(&alloc.client_status) }</span>
                <span class="alloc-index">{ format!("[{}]", alloc.name_index) }</span>
                <span class="alloc-version">{ format!("v{}", alloc.job_version) }</span>
                { if stopping { html!{ <span class="alloc-desired">{ &alloc.desired_status }</span> } } else { html!{} } }
            </button>
        </li>
    }
}

/// Properties of [`Legend`].
#[derive(Properties, PartialEq)]
pub struct LegendProps {
    /// The nodes whose allocations are counted.
    pub nodes: Vec<NodeView>,
}

/// Counts of allocations by client status, with each status's glyph and word.
#[component]
pub fn Legend(props: &LegendProps) -> Html {
    let statuses = [
        "pending", "running", "complete", "failed", "lost", "unknown",
    ];
    html! {
        <ul class="legend" data-testid="legend" aria-label="allocations by client status">
            { for statuses.iter().map(|status| {
                let count = props.nodes.iter().flat_map(|n| n.allocs.iter()).filter(|a| a.client_status == *status).count();
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
