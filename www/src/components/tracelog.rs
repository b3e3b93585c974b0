//! The trace log: the core's fixed-column text lines up to the current step.

use crate::state::AppState;
use yew::prelude::*;

/// Properties of [`TraceLog`].
#[derive(Properties, PartialEq)]
pub struct TraceLogProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The trace as text, newest last, with violations on top.
#[component]
pub fn TraceLog(props: &TraceLogProps) -> Html {
    let full = use_state(|| false);
    let session = props.state.session.get();
    let view = session.view();
    let toggle = {
        let full = full.clone();
        Callback::from(move |_: MouseEvent| full.set(!*full))
    };
    // The whole trace is formatted only on request: it grows with every
    // step. The newest lines are one keyed element each, so a step adds and
    // drops lines instead of replacing the whole text.
    let text = if *full {
        html! { session.trace_text().trim_end().to_string() }
    } else {
        let last = view.trace.len().saturating_sub(1);
        view.trace
            .iter()
            .enumerate()
            .map(|(i, line)| {
                html! { <span key={view.trace_hidden + i}>{ line }{ if i < last { "\n" } else { "" } }</span> }
            })
            .collect::<Html>()
    };
    html! {
        <section class="panel trace" data-testid="trace" aria-label="Trace">
            <h2 class="panel-title">{ "Trace" }</h2>
            { if view.violations.is_empty() { html!{} } else { html! {
                <ul class="violations" data-testid="violations" role="alert">
                    { for view.violations.iter().map(|v| html! { <li>{ "⚠ " }{ v }</li> }) }
                </ul>
            } } }
            { if view.trace_hidden > 0 || *full { html! {
                <button data-testid="show-full-trace" onclick={toggle}>
                    { if *full { "Show the newest lines only".to_string() } else { format!("Show all ({} older lines hidden)", view.trace_hidden) } }
                </button>
            } } else { html! {} } }
            <pre class="trace-text" data-testid="trace-text">{ text }</pre>
        </section>
    }
}
