//! The call dock: one row per client with the calls it has in flight, in
//! send order; each can be held, delivered now, moved, delayed or dropped.

use crate::components::cluster::DENSE_ABOVE;
use crate::components::rows::{RowWindow, use_row_window};
use crate::state::{Action as UiAction, AppState};
use nomad_playground::playground::Command;
use nomad_playground::scenario::format::Action;
use nomad_playground::view::{CallView, NodeView};
use std::collections::BTreeMap;
use yew::prelude::*;

/// A call picked up with the keyboard: it moves in its row until dropped.
#[derive(Debug, Clone, PartialEq)]
struct Pick {
    node: String,
    call: String,
    id: String,
    from: usize,
    at: usize,
}

/// Keyboard state of the dock: the roving tab stop of each row, the
/// picked-up call and what the live region says.
#[derive(Clone)]
struct DockKeys {
    pick: UseStateHandle<Option<Pick>>,
    active: UseStateHandle<BTreeMap<String, usize>>,
    announce: UseStateHandle<String>,
    want_focus: std::rc::Rc<std::cell::RefCell<Option<String>>>,
}

impl PartialEq for DockKeys {
    fn eq(&self, other: &Self) -> bool {
        self.pick == other.pick && self.active == other.active && self.announce == other.announce
    }
}

/// The layout of a virtualised dock (`.dock-rows` in style.css).
const ROWS: RowWindow = RowWindow {
    pitch: 44,
    overscan: 4,
    step: 2,
};

fn chip_testid(node: &str, id: &str) -> String {
    format!("call-{node}-{id}")
}

/// Keys on a chip (the brief's sortable pattern): ← → move the tab stop, or
/// the picked-up call; Space or Enter picks up and drops; Esc cancels.
fn chip_keydown(
    keys: &DockKeys,
    state: &UseReducerDispatcher<AppState>,
    node: &str,
    ids: &[(String, String)],
    index: usize,
    event: &KeyboardEvent,
) {
    use wasm_bindgen::JsCast;
    // Keys pressed on the chip's own buttons belong to the buttons. (Yew delegates events, so
    // the chip is recognised by its test ID rather than as the event's current target.)
    let on_chip = ids.get(index).is_some_and(|(_, id)| {
        event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| element.get_attribute("data-testid"))
            == Some(chip_testid(node, id))
    });
    if !on_chip {
        return;
    }
    let count = ids.len();
    let last = count - 1;
    let key = event.key();
    let moved = |at: usize| match key.as_str() {
        "ArrowLeft" => Some(at.saturating_sub(1)),
        "ArrowRight" => Some((at + 1).min(last)),
        "Home" => Some(0),
        "End" => Some(last),
        _ => None,
    };
    let chip = &ids[index];
    match (*keys.pick).clone() {
        Some(pick) if pick.node == node => {
            if let Some(at) = moved(pick.at) {
                let place = if at == last {
                    "last".to_string()
                } else {
                    // The chip now at `at` in the displayed order, once the picked one moves there.
                    let mut order: Vec<&(String, String)> =
                        ids.iter().filter(|(_, id)| *id != pick.id).collect();
                    order.insert(at, &ids[index]);
                    format!("before {}", order[at + 1].1)
                };
                keys.announce
                    .set(format!("{}: {} of {count}, {place}", pick.id, at + 1));
                *keys.want_focus.borrow_mut() = Some(chip_testid(node, &pick.id));
                keys.pick.set(Some(Pick { at, ..pick }));
            } else if key == " " || key == "Enter" {
                if pick.at != pick.from {
                    state.dispatch(UiAction::Core(Command::Act(Action::Reorder {
                        node: node.to_string(),
                        call: pick.call.clone(),
                        position: pick.at,
                    })));
                    keys.announce.set(format!(
                        "Dropped {}; now {} of {count} on {node}; re-simulated",
                        pick.id,
                        pick.at + 1
                    ));
                } else {
                    keys.announce.set(format!(
                        "Dropped {}; still {} of {count}",
                        pick.id,
                        pick.at + 1
                    ));
                }
                let mut active = (*keys.active).clone();
                active.insert(node.to_string(), pick.at);
                keys.active.set(active);
                *keys.want_focus.borrow_mut() = Some(chip_testid(node, &pick.id));
                keys.pick.set(None);
            } else if key == "Escape" {
                keys.announce.set(format!(
                    "Cancelled, {} back at {} of {count}",
                    pick.id,
                    pick.from + 1
                ));
                *keys.want_focus.borrow_mut() = Some(chip_testid(node, &pick.id));
                keys.pick.set(None);
            } else if key == "ArrowUp" || key == "ArrowDown" {
                keys.announce.set(format!(
                    "{} cannot leave {node}: a call stays with its client",
                    pick.id
                ));
            } else {
                return;
            }
        }
        Some(_) => return,
        None => {
            if let Some(at) = moved(index) {
                let mut active = (*keys.active).clone();
                active.insert(node.to_string(), at);
                keys.active.set(active);
                *keys.want_focus.borrow_mut() = Some(chip_testid(node, &ids[at].1));
            } else if key == " " || key == "Enter" {
                keys.announce.set(format!(
                    "Picked up {}, {} of {count} on {node}. Arrows move it, Space drops, Escape cancels",
                    chip.1,
                    index + 1
                ));
                keys.pick.set(Some(Pick {
                    node: node.to_string(),
                    call: chip.0.clone(),
                    id: chip.1.clone(),
                    from: index,
                    at: index,
                }));
            } else {
                return;
            }
        }
    }
    // Handled: keep the page's global keys (Space plays, arrows step) out of it.
    event.prevent_default();
}

/// Properties of [`CallDock`].
#[derive(Properties, PartialEq)]
pub struct CallDockProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The dock.
#[component]
pub fn CallDock(props: &CallDockProps) -> Html {
    let state = props.state.clone();
    let keys = DockKeys {
        pick: use_state(|| None::<Pick>),
        active: use_state(BTreeMap::new),
        announce: use_state(String::new),
        want_focus: use_mut_ref(|| None::<String>),
    };
    {
        let want_focus = keys.want_focus.clone();
        use_effect(move || {
            if let Some(testid) = want_focus.borrow_mut().take() {
                focus_testid(&testid);
            }
        });
    }
    let session = state.session.get();
    let view = session.view();
    // Many nodes: where the list is scrolled.
    let dense = view.nodes.len() > DENSE_ABOVE;
    let (scroll, scroll_box, on_scroll) = use_row_window(ROWS, dense);
    let dispatcher = state.dispatcher();
    // Each node's calls, found in one pass; the rows share one copy of the keyboard state.
    let mut by_node: BTreeMap<&str, Vec<&CallView>> = BTreeMap::new();
    for call in &view.calls {
        by_node.entry(call.node_id.as_str()).or_default().push(call);
    }
    let keys = std::rc::Rc::new(keys);
    let row = |node: &NodeView, top: Option<i32>| {
        let calls: Vec<CallView> = by_node
            .get(node.id.as_str())
            .map(|calls| calls.iter().map(|call| (*call).clone()).collect())
            .unwrap_or_default();
        html! { <DockRow key={node.id.as_str()} node_id={node.id.clone()} name={node.name.clone()} {calls} keys={keys.clone()} dispatcher={dispatcher.clone()} {top} /> }
    };
    // Above `DENSE_ABOVE` nodes, rows sit at fixed places in a scrolling list
    // and only those in and near view are drawn.
    let rows = if dense {
        let range = ROWS.range(scroll, 8, view.nodes.len());
        let from = range.start;
        let height = ROWS.height(view.nodes.len());
        html! {
            <div class="dock-rows" onscroll={on_scroll} ref={scroll_box}>
                <div class="dense-rows" style={height}>
                    { for view.nodes.get(range).unwrap_or_default().iter().enumerate().map(|(k, node)| {
                        row(node, Some(ROWS.top(from + k)))
                    }) }
                </div>
            </div>
        }
    } else {
        view.nodes
            .iter()
            .map(|node| row(node, None))
            .collect::<Html>()
    };
    html! {
        <section class="panel call-dock" data-testid="call-dock" aria-label="Calls in flight">
            <h2 class="panel-title">{ "Calls in flight" }</h2>
            <p class="dock-status muted" role="status" aria-live="polite" data-testid="dock-status">
                { if keys.announce.is_empty() { "Tab to a call, then Space to pick it up and arrows to move it" } else { keys.announce.as_str() } }
            </p>
            { rows }
        </section>
    }
}

/// Properties of [`DockRow`].
#[derive(Properties, PartialEq)]
struct DockRowProps {
    node_id: String,
    name: String,
    /// The node's calls, in send order.
    calls: Vec<CallView>,
    keys: std::rc::Rc<DockKeys>,
    dispatcher: UseReducerDispatcher<AppState>,
    /// The row's place in a virtualised list, in pixels from its top.
    top: Option<i32>,
}

/// One client's row of the dock: re-rendered only when its calls or the
/// keyboard state change.
#[component]
fn DockRow(props: &DockRowProps) -> Html {
    let (keys, state) = (&props.keys, &props.dispatcher);
    let mut calls: Vec<&CallView> = props.calls.iter().collect();
    // A picked-up call is drawn where the keyboard has moved it.
    if let Some(pick) = (*keys.pick).as_ref().filter(|p| p.node == props.node_id)
        && let Some(from) = calls.iter().position(|c| c.id == pick.id)
    {
        let call = calls.remove(from);
        calls.insert(pick.at.min(calls.len()), call);
    }
    let ids: std::rc::Rc<Vec<(String, String)>> = std::rc::Rc::new(
        calls
            .iter()
            .map(|c| (c.call.clone(), c.id.clone()))
            .collect(),
    );
    let active = keys
        .active
        .get(&props.node_id)
        .copied()
        .unwrap_or(0)
        .min(calls.len().saturating_sub(1));
    let hold_all = {
        let state = state.clone();
        let node_id = props.node_id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(UiAction::Core(Command::Act(Action::Hold {
                node: node_id.clone(),
                call: None,
            })))
        })
    };
    let release_all = {
        let state = state.clone();
        let node_id = props.node_id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(UiAction::Core(Command::Act(Action::Release {
                node: node_id.clone(),
            })))
        })
    };
    let send = |make: fn(String) -> Action| {
        let state = state.clone();
        let node_id = props.node_id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(UiAction::Core(Command::Act(make(node_id.clone()))))
        })
    };
    html! {
        <div class="dock-row" data-testid={format!("dock-{}", props.node_id)} style={props.top.map(|top| format!("top: {top}px"))}>
            <span class="dock-node">{ &props.name }</span>
            <ol class="chips" aria-label={format!("calls of {}", props.name)}>
                { for calls.iter().enumerate().map(|(index, call)| {
                    let on_key = {
                        let (keys, state, node_id, ids) = (keys.clone(), state.clone(), props.node_id.clone(), ids.clone());
                        Callback::from(move |event: KeyboardEvent| chip_keydown(&keys, &state, &node_id, &ids, index, &event))
                    };
                    let picked = (*keys.pick).as_ref().is_some_and(|p| p.node == props.node_id && p.id == call.id);
                    call_chip(call, index, calls.len(), state, ChipKeys { active: index == active, picked, on_key })
                }) }
            </ol>
            <span class="dock-actions">
                <span class="muted">{ "send" }</span>
                <button data-testid="send-heartbeat" onclick={send(|node| Action::Heartbeat { node })} title="The client sends Node.UpdateStatus now">{ "HB" }</button>
                <button data-testid="send-update-alloc" onclick={send(|node| Action::UpdateAlloc { node, allocs: None })} title="The client sends Node.UpdateAlloc with its queued updates now">{ "UPD" }</button>
                <button data-testid="send-get-allocs" onclick={send(|node| Action::GetAllocs { node })} title="The client pulls its allocations now">{ "GET" }</button>
                <button onclick={hold_all} data-testid="hold-all" title="Hold this client's new calls">{ "‖ hold" }</button>
                <button onclick={release_all} data-testid="release-all" title="Release held calls">{ "release" }</button>
            </span>
        </div>
    }
}

/// Moves the keyboard focus to the element with this `data-testid`.
fn focus_testid(testid: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        if let Some(element) = gloo::utils::document()
            .query_selector(&format!("[data-testid=\"{testid}\"]"))
            .ok()
            .flatten()
            .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = element.focus();
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = testid;
}

/// A chip's part in the keyboard model.
struct ChipKeys {
    /// The row's one tab stop.
    active: bool,
    /// Picked up with the keyboard.
    picked: bool,
    on_key: Callback<KeyboardEvent>,
}

fn call_chip(
    call: &CallView,
    index: usize,
    count: usize,
    state: &UseReducerDispatcher<AppState>,
    keys: ChipKeys,
) -> Html {
    let tabindex = if keys.active { "0" } else { "-1" };
    let act = |make: fn(String, String) -> Action| {
        let state = state.clone();
        let node = call.node_id.clone();
        let id = call.call.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(UiAction::Core(Command::Act(make(node.clone(), id.clone()))))
        })
    };
    let move_to = |position: usize| {
        let state = state.clone();
        let node = call.node_id.clone();
        let id = call.call.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(UiAction::Core(Command::Act(Action::Reorder {
                node: node.clone(),
                call: id.clone(),
                position,
            })))
        })
    };
    html! {
        <li class={classes!("chip", format!("fate-{}", call.fate), keys.picked.then_some("picked"))} data-testid={chip_testid(&call.node_id, &call.id)}
            data-code={call.code.clone()} aria-label={format!("{} {} {}, {}, {} of {count}{}", call.rpc, call.id, call.fate, call.detail, index + 1, if keys.picked { ", picked up" } else { "" })}
            tabindex={tabindex} onkeydown={keys.on_key}>
            <span class="chip-code mono">{ &call.code }</span>
            <span class="chip-id mono">{ &call.id }</span>
            { if call.fate == "held" { html!{ <span class="chip-held">{ "‖ held" }</span> } } else { html!{} } }
            <span class="chip-actions">
                <button tabindex={tabindex} data-testid="deliver" onclick={act(|node, call| Action::Deliver { node, call })} title="Deliver now" aria-label={format!("Deliver {} now", call.id)}>{ "✓" }</button>
                <button tabindex={tabindex} data-testid="earlier" disabled={index == 0} onclick={move_to(index.saturating_sub(1))} title="Move earlier" aria-label={format!("Move {} earlier", call.id)}>{ "←" }</button>
                <button tabindex={tabindex} data-testid="later" disabled={index + 1 >= count} onclick={move_to(index + 1)} title="Move later" aria-label={format!("Move {} later", call.id)}>{ "→" }</button>
                <button tabindex={tabindex} data-testid="drop" onclick={act(|node, call| Action::Drop { node, call })} title="Drop" aria-label={format!("Drop {}", call.id)}>{ "✕" }</button>
            </span>
        </li>
    }
}
