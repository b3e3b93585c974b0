//! The cluster view: client nodes with their status, link and allocations,
//! and the Offline zone a node is dragged onto to cut its link.

use crate::components::rows::{RowWindow, use_row_window};
use crate::state::{Action, AppState, Selection, Session};
use nomad_playground::playground::Command;
use nomad_playground::view::{AllocView, NodeView, PlaygroundView};
use std::rc::Rc;
use yew::prelude::*;

/// Properties of [`ClusterPanel`].
#[derive(Properties, PartialEq)]
pub struct ClusterPanelProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

const DRAG_TYPE: &str = "text/plain";

/// Above this many nodes the cluster draws dense rows instead of cards, as
/// Nomad's topology view switches (ui-design §4), and only the rows in and
/// near the scrolled-to part of the list.
pub const DENSE_ABOVE: usize = 50;
/// The dense rows' layout: `.node-row` in style.css is 4 px shorter than the
/// pitch (the gap leaves room for the focus ring); rows are drawn a few
/// beyond the visible ones (their TTLs are the lines of one text beside
/// them, one line per drawn row, all rewritten at every step).
const ROWS: RowWindow = RowWindow {
    pitch: 42,
    overscan: 4,
    step: 3,
};
/// Alloc cells a dense row draws before folding the rest into "+N".
const STRIP_CELLS: usize = 24;

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

/// A dense row's one light: Nomad's composite order (down, draining,
/// ineligible, then the status), with `disconnected` right after `down`.
pub fn composite_light(node: &NodeView) -> (&'static str, &'static str) {
    match node.status.as_str() {
        "down" => ("down", status_glyph("down")),
        "disconnected" => ("disconnected", status_glyph("disconnected")),
        _ if node.draining => ("draining", "◷"),
        _ if !node.eligible => ("ineligible", "⊝"),
        "ready" => ("ready", status_glyph("ready")),
        "initializing" => ("initializing", status_glyph("initializing")),
        _ => ("other", status_glyph("")),
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
    let dense = view.nodes.len() > DENSE_ABOVE;
    // Dense mode: where the online list is scrolled.
    let (scroll, scroll_box, on_scroll) = use_row_window(ROWS, dense);
    // Each node with its position in the view's list (where its TTL is looked up).
    let (online, offline): (Vec<_>, Vec<_>) = view
        .nodes
        .iter()
        .enumerate()
        .partition(|(_, node): &(usize, &Rc<NodeView>)| node.link_up);
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
    let card = |(index, node): &(usize, &Rc<NodeView>), top: Option<i32>| {
        let selected_alloc = match &state.selection {
            Selection::Alloc(id) if node.allocs.iter().any(|a| &a.id == id) => Some(id.clone()),
            _ => None,
        };
        html! {
            <NodeCard key={node.id.clone()} node={Rc::clone(node)} index={*index}
                      selected={matches!(&state.selection, Selection::Node(id) if *id == node.id)}
                      {selected_alloc} dispatcher={dispatcher.clone()} {dense} {top} />
        }
    };
    let online_rows = if dense {
        // Rows sit at fixed places in a list as tall as all of them, and only
        // those in and near view are drawn: a step re-renders a few dozen.
        // Until the hook has read the box (the first render of dense rows) its
        // height is not known: the list is at most 70% of the window high (style.css).
        let unscrolled = if scroll.1 > 0 {
            0
        } else {
            (crate::components::sequence::window_height() * 0.7) as i32 / ROWS.pitch + 1
        };
        let range = ROWS.range(scroll, unscrolled, online.len());
        let from = range.start;
        let height = ROWS.height(online.len());
        let drawn = online.get(range).unwrap_or_default();
        // The drawn rows' heartbeat TTLs, which change at every step, are
        // not in the rows: they are the lines of one text beside them, at
        // the rows' pitch (style.css lines it up with each row's empty TTL
        // slot). A step then changes one text node, and the rows, unchanged,
        // are neither laid out nor painted again (with a TTL in each row,
        // every drawn row was repainted at every step: measured at 200
        // nodes, 187 → 104 layout objects and root paint ~1.5 ms less).
        let mut ttls = String::new();
        for (index, node) in drawn {
            if let Some(ms) = node_ttl(view, *index, &node.id) {
                ttls.push_str(&ttl_text(ms));
            }
            ttls.push('\n');
        }
        let ttl_box = format!(
            "top: {}px; height: {}px",
            ROWS.top(from),
            ROWS.top(drawn.len())
        );
        html! {
            <div class="dense-rows" style={height}>
                { for drawn.iter().enumerate().map(|(k, entry)| card(entry, Some(ROWS.top(from + k)))) }
                <div class="ttl-column mono" aria-hidden="true" style={ttl_box}>{ ttls }</div>
            </div>
        }
    } else {
        online
            .iter()
            .map(|entry| card(entry, None))
            .collect::<Html>()
    };
    // Counted again only when a node changed (an unchanged node is the same
    // `Rc`, so comparing the lists stops at the pointers): at 2,000
    // allocations counting at every step cost more than the rest of the panel.
    let counts = *use_memo(view.nodes.clone(), |nodes| status_counts(nodes));
    html! {
        <section class="cluster" data-testid="cluster" aria-label="Client nodes">
            <h2 class="panel-title">{ "Clients" }</h2>
            // The heartbeat TTLs change at every step, for every node: outside the
            // virtualised rows they read the session from this context, so a card
            // whose node is otherwise unchanged is skipped and only its small TTL
            // component renders.
            <ContextProvider<Session> context={state.session.clone()}>
                <div class={classes!("online-zone", dense.then_some("dense"))} data-testid="online-zone"
                     ondragover={allow_drop.clone()} ondrop={drop_to(true)} onscroll={dense.then_some(on_scroll)}
                     ref={scroll_box}>
                    { online_rows }
                </div>
                <div class="offline-zone" data-testid="offline-zone" ondragover={allow_drop} ondrop={drop_to(false)}
                     aria-label="Offline: drop a node here to cut its link to the servers">
                    <div class="offline-label">{ "⊗ Offline — drop a node here to cut its link" }</div>
                    { for offline.iter().map(|entry| card(entry, None)) }
                </div>
            </ContextProvider<Session>>
            <Legend {counts} />
        </section>
    }
}

/// Properties of [`NodeCard`].
#[derive(Properties)]
pub struct NodeCardProps {
    /// The node (its heartbeat TTL is not part of it: [`NodeTtl`] draws
    /// it, or for a virtualised row the list's TTL text). The same `Rc`
    /// while the node is unchanged.
    pub node: Rc<NodeView>,
    /// The node's position in the view's node list (where [`NodeTtl`] looks first).
    pub index: usize,
    /// Whether the node is selected.
    pub selected: bool,
    /// The selected allocation, when it is on this node.
    pub selected_alloc: Option<String>,
    /// Sends actions to the reducer.
    pub dispatcher: UseReducerDispatcher<AppState>,
    /// Whether to draw a dense row (many nodes) rather than a card.
    pub dense: bool,
    /// A dense row's place in its list, in pixels from the top, when the
    /// list is virtualised.
    pub top: Option<i32>,
}

impl PartialEq for NodeCardProps {
    /// The node by pointer first: an unchanged node is the same `Rc`.
    fn eq(&self, other: &Self) -> bool {
        (Rc::ptr_eq(&self.node, &other.node) || self.node == other.node)
            && self.index == other.index
            && self.selected == other.selected
            && self.selected_alloc == other.selected_alloc
            && self.dispatcher == other.dispatcher
            && self.dense == other.dense
            && self.top == other.top
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
        let dense = props.dense;
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
            } else if dense {
                row_keydown(&event, &state, &node_id);
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
    if props.dense {
        let (light, glyph) = composite_light(node);
        let mut flags = String::new();
        if node.draining {
            flags.push_str(", draining");
        }
        if !node.eligible {
            flags.push_str(", ineligible");
        }
        let link = if node.link_up { "up" } else { "down" };
        let shown = node.allocs.len().min(STRIP_CELLS);
        let selected_alloc = props.selected_alloc.as_deref();
        return html! {
            <article class={classes!("node", "node-row", format!("status-{}", node.status), selected.then_some("selected"), (!node.link_up).then_some("link-down"))}
                     style={props.top.map(|top| format!("top: {top}px"))}
                     data-testid={format!("node-{}", node.id)}
                     data-status={node.status.clone()}
                     data-link={link}
                     draggable="true" ondragstart={on_drag_start} tabindex="0" onkeydown={on_key}
                     aria-label={format!("node {}, {}{flags}, link {link}, {} allocations", node.name, node.status, node.allocs.len())}>
                <div class="node-head" onclick={select}>
                    <span class={classes!("status-light", format!("light-{light}"))} aria-hidden="true" title={light}>{ glyph }</span>
                    <span class="node-name">{ &node.name }</span>
                    <span class="node-status" data-testid="node-status">{ &node.status }</span>
                    { if props.top.is_some() {
                        // A virtualised row's TTL is drawn by the list beside the rows.
                        html! { <span class="node-ttl mono" title="heartbeat TTL left"></span> }
                    } else {
                        html! { <NodeTtl node_id={node.id.clone()} index={props.index} /> }
                    } }
                    <button class="link-toggle" data-testid="link-toggle" onclick={toggle_link}
                            title={if node.link_up { "Cut link" } else { "Restore link" }}
                            aria-label={format!("{} of {}", if node.link_up { "Cut link" } else { "Restore link" }, node.name)}>
                        { if node.link_up { "✂" } else { "↺" } }
                    </button>
                </div>
                <div class="alloc-strip">
                    { for node.allocs[..shown].iter().map(|alloc| alloc_cell(alloc, state, selected_alloc == Some(alloc.id.as_str()))) }
                    { if shown < node.allocs.len() { html!{ <span class="strip-more">{ format!("+{}", node.allocs.len() - shown) }</span> } } else { html!{} } }
                </div>
            </article>
        };
    }
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

/// Keys on a dense row: Enter selects the node, ↑ ↓ move to the row above
/// or below (the rows next to a focused one are always drawn).
fn row_keydown(event: &KeyboardEvent, state: &UseReducerDispatcher<AppState>, node_id: &str) {
    use wasm_bindgen::JsCast;
    // Only keys on the row itself, not on its buttons.
    let Some(row) = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::HtmlElement>().ok())
        .filter(|element| {
            element
                .class_name()
                .split(' ')
                .any(|class| class == "node-row")
        })
    else {
        return;
    };
    let next = match event.key().as_str() {
        "Enter" => {
            state.dispatch(Action::Select(Selection::Node(node_id.to_string())));
            None
        }
        "ArrowDown" => row.next_element_sibling(),
        "ArrowUp" => row.previous_element_sibling(),
        _ => return,
    };
    event.prevent_default();
    if let Some(next) = next.and_then(|next| next.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = next.focus();
    }
}

/// Selects the allocation `alloc_id` when clicked.
fn select_alloc(state: &UseReducerDispatcher<AppState>, alloc_id: &str) -> Callback<MouseEvent> {
    let state = state.clone();
    let alloc_id = alloc_id.to_string();
    Callback::from(move |_: MouseEvent| {
        state.dispatch(Action::Select(Selection::Alloc(alloc_id.clone())))
    })
}

/// One allocation as a small cell of a dense row's strip: its status is its
/// fill and its accessible name (the inspector's node tab lists the same
/// allocs as full-size buttons).
fn alloc_cell(alloc: &AllocView, state: &UseReducerDispatcher<AppState>, selected: bool) -> Html {
    let select = select_alloc(state, &alloc.id);
    let stopping = alloc.desired_status != "run";
    html! {
        <button key={alloc.id.as_str()} tabindex="-1"
            class={classes!("cell", format!("client-{}", alloc.client_status), stopping.then_some("desired-stop"), selected.then_some("selected"), alloc.canary.then_some("canary"))}
            data-testid={format!("alloc-{}", alloc.id)}
            data-client-status={alloc.client_status.clone()}
            data-desired-status={alloc.desired_status.clone()}
            data-health={alloc.deployment_health.clone()}
            onclick={select}
            aria-label={format!("{} {}, client {}, desired {}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status)}
            title={format!("{} · {} · client {} · desired {} · v{}", alloc.name, alloc.short_id, alloc.client_status, alloc.desired_status, alloc.job_version)} />
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
        let view = playground.view();
        node_ttl(view, props.index, &props.node_id)
    });
    // (Dense rows hide the word "TTL" to save room; the title says it.)
    match ttl {
        Some(ms) => html! {
            <span class="node-ttl mono" data-testid="node-ttl" title="heartbeat TTL left">
                <span class="ttl-word">{ "TTL " }</span>{ ttl_text(ms) }
            </span>
        },
        None => html! { <span class="node-ttl mono" data-testid="node-ttl"></span> },
    }
}

/// A heartbeat TTL of `ms` milliseconds as seconds with one decimal: `12.3s`.
pub fn ttl_text(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

/// The heartbeat TTL of node `id`, looked up first at `index` (its
/// position in the view's node list when its card rendered).
pub fn node_ttl(view: &PlaygroundView, index: usize, id: &str) -> Option<u64> {
    let index = match view.nodes.get(index) {
        Some(node) if node.id == id => index,
        _ => view.nodes.iter().position(|node| node.id == id)?,
    };
    view.node_ttls.get(index).copied().flatten()
}

/// Properties of [`AllocList`].
#[derive(Properties, PartialEq)]
pub struct AllocListProps {
    /// The node's allocations: unchanged ones are the same `Rc` from step
    /// to step, so comparing the props is a few pointer comparisons.
    pub allocs: Vec<Rc<AllocView>>,
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
    let select = select_alloc(state, &alloc.id);
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

/// How many allocations of `nodes` have each client status of [`STATUSES`].
fn status_counts(nodes: &[Rc<NodeView>]) -> [usize; 6] {
    let mut counts = [0; 6];
    for alloc in nodes.iter().flat_map(|n| n.allocs.iter()) {
        if let Some(i) = STATUSES.iter().position(|s| *s == alloc.client_status) {
            counts[i] += 1;
        }
    }
    counts
}

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
