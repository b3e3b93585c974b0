//! The export panel: the scenario JSON, the trace JSON, a Mermaid sequence
//! diagram, a processed eval as a reconciler fixture and a GitHub issue
//! body, each shown in a text area to copy and offered as a download. The
//! texts are the core's exporters' (the same bytes as the CLI's `export`).

use crate::state::{AppState, Selection};
use crate::storage;
use nomad_playground::export;
use nomad_playground::playground::Playground;
use yew::prelude::*;

/// What can be exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The scenario with the user's actions as its script.
    Scenario,
    /// The trace up to the current step.
    Trace,
    /// The calls and evals as a Mermaid sequence diagram.
    Mermaid,
    /// One processed eval as a reconciler fixture.
    Fixture,
    /// A Markdown issue body with the link, the diagram and the outcome.
    Issue,
}

impl ExportKind {
    const ALL: [ExportKind; 5] = [
        ExportKind::Scenario,
        ExportKind::Trace,
        ExportKind::Mermaid,
        ExportKind::Fixture,
        ExportKind::Issue,
    ];

    fn id(self) -> &'static str {
        match self {
            ExportKind::Scenario => "scenario",
            ExportKind::Trace => "trace",
            ExportKind::Mermaid => "mermaid",
            ExportKind::Fixture => "fixture",
            ExportKind::Issue => "issue",
        }
    }

    fn label(self) -> &'static str {
        match self {
            ExportKind::Scenario => "Scenario JSON",
            ExportKind::Trace => "Trace JSON",
            ExportKind::Mermaid => "Mermaid diagram",
            ExportKind::Fixture => "Eval as fixture",
            ExportKind::Issue => "GitHub issue body",
        }
    }

    fn file(self) -> (&'static str, &'static str) {
        match self {
            ExportKind::Scenario => ("scenario.json", "application/json"),
            ExportKind::Trace => ("trace.json", "application/json"),
            ExportKind::Mermaid => ("sequence.mmd", "text/plain"),
            ExportKind::Fixture => ("fixture.json", "application/json"),
            ExportKind::Issue => ("issue.md", "text/markdown"),
        }
    }
}

/// The text of an export, or why there is none. The scenario and the
/// trace are made here; the diagram, the fixture and the issue body by the
/// lazily loaded tools module (`crate::tools`), which replays the session
/// from its link fragment.
pub async fn export_text(
    fragment: String,
    kind: ExportKind,
    eval: String,
) -> Result<String, String> {
    if kind == ExportKind::Fixture && eval.is_empty() {
        return Err("no eval has been processed yet: step until one is".into());
    }
    let base = storage::page_base();
    crate::tools::text("export_text", &[&fragment, kind.id(), &eval, &base]).await
}

/// The text of an export the page makes itself (`None`: the tools module's).
pub fn local_export_text(playground: &Playground, kind: ExportKind) -> Option<String> {
    let session = playground.session();
    match kind {
        ExportKind::Scenario => Some(export::scenario_json(
            &export::session_link(session).scenario,
        )),
        ExportKind::Trace => Some(export::trace_json(&session.trace())),
        ExportKind::Mermaid | ExportKind::Fixture | ExportKind::Issue => None,
    }
}

/// Properties of [`ExportPanel`].
#[derive(Properties, PartialEq)]
pub struct ExportPanelProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The export panel.
#[component]
pub fn ExportPanel(props: &ExportPanelProps) -> Html {
    let state = props.state.clone();
    let output = use_state(|| None::<(ExportKind, Result<String, String>)>);
    let chosen_eval = use_state(String::new);
    let session = state.session.get();
    let processed: Vec<(String, String)> = session
        .view()
        .evals
        .iter()
        .filter(|e| !e.desired_tg_updates.is_empty())
        .map(|e| {
            (
                e.id.clone(),
                format!("{} {} {}", e.short_id, e.triggered_by, e.job_id),
            )
        })
        .collect();
    // The eval: the one picked here, else the one selected in the inspector, else the latest processed.
    let eval = if processed.iter().any(|(id, _)| *id == *chosen_eval) {
        (*chosen_eval).clone()
    } else if let Selection::Eval(id) = &state.selection
        && processed.iter().any(|(p, _)| p == id)
    {
        id.clone()
    } else {
        processed
            .last()
            .map(|(id, _)| id.clone())
            .unwrap_or_default()
    };
    let on_eval = {
        let chosen_eval = chosen_eval.clone();
        Callback::from(move |event: Event| {
            let select: web_sys::HtmlSelectElement = event.target_unchecked_into();
            chosen_eval.set(select.value());
        })
    };
    let make = |kind: ExportKind| {
        let state = state.clone();
        let output = output.clone();
        let eval = eval.clone();
        Callback::from(move |_: MouseEvent| {
            let playground = state.session.get();
            if let Some(text) = local_export_text(&playground, kind) {
                output.set(Some((kind, Ok(text))));
                return;
            }
            let fragment = crate::sharing::fragment(&playground);
            let output = output.clone();
            let eval = eval.clone();
            yew::platform::spawn_local(async move {
                let text = export_text(fragment, kind, eval).await;
                output.set(Some((kind, text)));
            });
        })
    };
    let body = match &*output {
        None => {
            html! { <p class="muted">{ "Pick what to export; the text appears here to copy or download." }</p> }
        }
        Some((_, Err(err))) => {
            html! { <p class="message" role="alert" data-testid="export-error">{ err }</p> }
        }
        Some((kind, Ok(text))) => {
            let (file, mime) = kind.file();
            let download = {
                let text = text.clone();
                Callback::from(move |_: MouseEvent| storage::download(file, mime, &text))
            };
            let copy = {
                let text = text.clone();
                Callback::from(move |_: MouseEvent| {
                    storage::copy(&text);
                })
            };
            html! {
                <div class="export-output">
                    <div class="actions">
                        <span class="mono" data-testid="export-kind" data-kind={kind.id()}>{ file }</span>
                        <button data-testid="export-download" onclick={download}>{ "Download" }</button>
                        <button data-testid="export-copy" onclick={copy}>{ "Copy" }</button>
                    </div>
                    <textarea class="scenario-input" data-testid="export-text" aria-label={kind.label()}
                              readonly=true rows="12" spellcheck="false" value={text.clone()} />
                </div>
            }
        }
    };
    html! {
        <section class="panel export-panel" data-testid="export-panel" aria-label="Export">
            <h2 class="panel-title">{ "Export" }</h2>
            <div class="actions">
                { for ExportKind::ALL.iter().map(|kind| html! {
                    <button data-testid={format!("export-{}", kind.id())} onclick={make(*kind)}
                            disabled={*kind == ExportKind::Fixture && eval.is_empty()}>{ kind.label() }</button>
                }) }
                <label>
                    <span class="muted">{ "eval " }</span>
                    <select data-testid="export-eval" aria-label="Eval to export as a fixture" onchange={on_eval}
                            disabled={processed.is_empty()}>
                        { for processed.iter().map(|(id, label)| html! {
                            <option value={id.clone()} selected={*id == eval}>{ label }</option>
                        }) }
                    </select>
                </label>
            </div>
            { body }
        </section>
    }
}
