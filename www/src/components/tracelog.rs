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
    let session = props.state.session.get();
    let view = session.view();
    html! {
        <section class="panel trace" data-testid="trace" aria-label="Trace">
            <h2 class="panel-title">{ "Trace" }</h2>
            { if view.violations.is_empty() { html!{} } else { html! {
                <ul class="violations" data-testid="violations" role="alert">
                    { for view.violations.iter().map(|v| html! { <li>{ "⚠ " }{ v }</li> }) }
                </ul>
            } } }
            <pre class="trace-text" data-testid="trace-text">{ view.trace.join("\n") }</pre>
        </section>
    }
}
