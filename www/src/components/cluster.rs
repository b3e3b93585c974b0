//! The cluster view: client nodes and their allocation chips.

use nomad_playground::view::{AllocView, ClusterView, NodeView};
use yew::prelude::*;

/// Properties of [`ClusterPanel`].
#[derive(Properties, PartialEq)]
pub struct ClusterPanelProps {
    /// The cluster to draw.
    pub cluster: ClusterView,
}

/// Draws every client node with its allocations.
#[component]
pub fn ClusterPanel(props: &ClusterPanelProps) -> Html {
    html! {
        <section class="cluster" data-testid="cluster" aria-label="Client nodes">
            { for props.cluster.nodes.iter().map(node_card) }
        </section>
    }
}

fn node_card(node: &NodeView) -> Html {
    html! {
        <article class={classes!("node", format!("status-{}", node.status))}
                 data-testid={format!("node-{}", node.id)}
                 aria-label={format!("node {} ({})", node.name, node.status)}>
            <header class="node-head">
                <span class="node-name">{ &node.name }</span>
                <span class="node-status" data-testid="node-status">{ &node.status }</span>
            </header>
            <ul class="allocs">
                { for node.allocs.iter().map(alloc_chip) }
            </ul>
        </article>
    }
}

fn alloc_chip(alloc: &AllocView) -> Html {
    html! {
        <li class={classes!("alloc", format!("client-{}", alloc.client_status))}
            data-testid={format!("alloc-{}", alloc.id)}
            title={format!("{} · client {} · desired {} · v{}", alloc.name, alloc.client_status, alloc.desired_status, alloc.job_version)}>
            <span class="alloc-index">{ format!("[{}]", alloc.name_index) }</span>
            <span class="alloc-status">{ &alloc.client_status }</span>
            <span class="alloc-version">{ format!("v{}", alloc.job_version) }</span>
        </li>
    }
}
