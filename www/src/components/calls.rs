//! The call dock: one row per client with the calls it has in flight, in
//! send order; each can be held, delivered now, moved, delayed or dropped.

use crate::state::{Action as UiAction, AppState};
use nomad_playground::playground::Command;
use nomad_playground::scenario::format::Action;
use nomad_playground::view::CallView;
use yew::prelude::*;

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
    let session = state.session.get();
    let view = session.view();
    html! {
        <section class="panel call-dock" data-testid="call-dock" aria-label="Calls in flight">
            <h2 class="panel-title">{ "Calls in flight" }</h2>
            { for view.nodes.iter().map(|node| {
                let calls: Vec<&CallView> = view.calls.iter().filter(|c| c.node_id == node.id).collect();
                let hold_all = {
                    let state = state.clone();
                    let node_id = node.id.clone();
                    Callback::from(move |_: MouseEvent| state.dispatch(UiAction::Core(Command::Act(Action::Hold { node: node_id.clone(), call: None }))))
                };
                let release_all = {
                    let state = state.clone();
                    let node_id = node.id.clone();
                    Callback::from(move |_: MouseEvent| state.dispatch(UiAction::Core(Command::Act(Action::Release { node: node_id.clone() }))))
                };
                let send = |make: fn(String) -> Action| {
                    let state = state.clone();
                    let node_id = node.id.clone();
                    Callback::from(move |_: MouseEvent| state.dispatch(UiAction::Core(Command::Act(make(node_id.clone())))))
                };
                html! {
                    <div class="dock-row" data-testid={format!("dock-{}", node.id)}>
                        <span class="dock-node">{ &node.name }</span>
                        <ol class="chips" aria-label={format!("calls of {}", node.name)}>
                            { for calls.iter().enumerate().map(|(index, call)| call_chip(call, index, calls.len(), &state)) }
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
            }) }
        </section>
    }
}

fn call_chip(
    call: &CallView,
    index: usize,
    count: usize,
    state: &UseReducerHandle<AppState>,
) -> Html {
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
        <li class={classes!("chip", format!("fate-{}", call.fate))} data-testid={format!("call-{}-{}", call.node_id, call.id)}
            data-code={call.code.clone()} aria-label={format!("{} {} {}, {}", call.rpc, call.id, call.fate, call.detail)}>
            <span class="chip-code mono">{ &call.code }</span>
            <span class="chip-id mono">{ &call.id }</span>
            { if call.fate == "held" { html!{ <span class="chip-held">{ "‖ held" }</span> } } else { html!{} } }
            <span class="chip-actions">
                <button data-testid="deliver" onclick={act(|node, call| Action::Deliver { node, call })} title="Deliver now" aria-label={format!("Deliver {} now", call.id)}>{ "✓" }</button>
                <button data-testid="earlier" disabled={index == 0} onclick={move_to(index.saturating_sub(1))} title="Move earlier" aria-label={format!("Move {} earlier", call.id)}>{ "←" }</button>
                <button data-testid="later" disabled={index + 1 >= count} onclick={move_to(index + 1)} title="Move later" aria-label={format!("Move {} later", call.id)}>{ "→" }</button>
                <button data-testid="drop" onclick={act(|node, call| Action::Drop { node, call })} title="Drop" aria-label={format!("Drop {}", call.id)}>{ "✕" }</button>
            </span>
        </li>
    }
}
