//! The trace log: the core's fixed-column text lines up to the current step.

use crate::state::AppState;
use std::rc::Rc;
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
    // step. The newest lines go in chunks of `CHUNK` lines (cut at multiples
    // of `CHUNK` in the whole trace), one text node each, keyed by their
    // place in the window. The window's first line moves only in whole
    // windows (`TRACE_WINDOW` lines), so while it stays a step changes the
    // last chunk's text and adds chunks after it; the others are the same
    // lines (the same `Rc`s), neither joined nor written again. (Keyed by
    // their place in the whole trace, a step dropped two chunk elements at
    // the start and added two at the end, each styled anew and each a cause
    // of the page's paint being layerized again in full: measured at 200
    // nodes, 2.3 → 0.3 chunks added, 1 → 0.7 full layerizations and style
    // ~2.0 → ~1.3 ms per step. With a window moved at every step, every
    // chunk's text was written again: 11 text nodes, 31,000 characters a
    // step.)
    let text = if *full {
        html! { session.trace_text().trim_end().to_string() }
    } else {
        let (lines, first) = (&view.trace, view.trace_hidden);
        let end = first + lines.len();
        let mut chunks = Vec::new();
        let mut start = first;
        while start < end {
            let stop = ((start / CHUNK + 1) * CHUNK).min(end);
            let lines = lines[start - first..stop - first].to_vec();
            chunks.push(html! { <TraceChunk key={chunks.len()} {lines} last={stop == end} /> });
            start = stop;
        }
        chunks.into_iter().collect::<Html>()
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

/// Lines of the trace per chunk.
const CHUNK: usize = 32;

/// Properties of [`TraceChunk`].
#[derive(Properties, PartialEq)]
struct TraceChunkProps {
    /// The chunk's lines (an unchanged line is the same `Rc`, so comparing
    /// an unchanged chunk stops at the pointers).
    lines: Vec<Rc<str>>,
    /// Whether the chunk ends the trace (its last line has no newline).
    last: bool,
}

/// A run of trace lines as one text node, in a block of its own: a step
/// lays out the chunks in view (style.css skips the others), not the whole
/// trace.
#[component]
fn TraceChunk(props: &TraceChunkProps) -> Html {
    let mut text = props.lines.join("\n");
    if !props.last {
        text.push('\n');
    }
    html! { <span class="trace-chunk">{ text }</span> }
}
