//! The script editor: the session's action log, each action editable as
//! JSON, removable and movable; new actions can be inserted anywhere.
//! Editing a step already played forks a branch in the core; the branches
//! listed below stay one click away. The panel also holds the step
//! narration, a `role=status` live region.

use crate::state::{Action, AppState};
use nomad_playground::playground::Command;
use nomad_playground::script_view::{ScriptLine, parse_action};
use nomad_playground::sim::history::ScriptEdit;
use yew::prelude::*;

/// Properties of [`ScriptEditor`].
#[derive(Properties, PartialEq)]
pub struct ScriptEditorProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The script editor.
#[component]
pub fn ScriptEditor(props: &ScriptEditorProps) -> Html {
    let state = props.state.clone();
    // The line being edited, and the text of its editor.
    let editing = use_state(|| None::<usize>);
    let draft = use_state(String::new);
    let new_action = use_state(|| r#"{"action":"advance","by":"5s"}"#.to_string());
    let problem = use_state(|| None::<String>);
    let session = state.session.get();
    // The lines' labels and JSON change only when the log or its branches
    // do, not with every step: rebuild them only then.
    // (The key is two numbers: comparing the log itself cost a copy of it per step.)
    let script = use_memo(state.session.script_key(), |_| session.script());
    let cursor = session.session().cursor();
    let narration = session.narration();

    let ctx = LineCtx {
        dispatcher: state.dispatcher(),
        editing: editing.clone(),
        draft: draft.clone(),
        problem: problem.clone(),
    };
    let line_html = |line: &ScriptLine| {
        let index = line.index;
        let is_editing = *editing == Some(index);
        html! {
            <ScriptLineRow key={index} script={script.clone()} {index} current={index + 1 == cursor}
                           done={index < cursor} draft={is_editing.then(|| (*draft).clone())} ctx={ctx.clone()} />
        }
    };
    let add = {
        let state = state.clone();
        let new_action = new_action.clone();
        let problem = problem.clone();
        let index = cursor;
        Callback::from(move |_: MouseEvent| match parse_action(&new_action) {
            Ok(action) => {
                problem.set(None);
                state.dispatch(Action::Core(Command::EditScript(ScriptEdit::Insert {
                    index,
                    action,
                })));
            }
            Err(err) => problem.set(Some(format!("new action: {err}"))),
        })
    };
    let on_new = {
        let new_action = new_action.clone();
        Callback::from(move |event: InputEvent| {
            let input: web_sys::HtmlInputElement = event.target_unchecked_into();
            new_action.set(input.value());
        })
    };
    html! {
        <section class="panel script-editor" data-testid="script-editor" aria-label="Script">
            <h2 class="panel-title">{ "Script" }</h2>
            <p class="narration" role="status" aria-live="polite" tabindex="0" data-testid="narration">{ narration }</p>
            <ol class="script-lines" data-testid="script-lines" aria-label="actions of the script">
                { for script.lines.iter().map(line_html) }
            </ol>
            <div class="script-add">
                <input class="mono" data-testid="script-add-json" value={(*new_action).clone()} oninput={on_new}
                       aria-label={format!("JSON of a new action, inserted as action {}", cursor + 1)} />
                <button data-testid="script-add" onclick={add} aria-label={format!("Insert the new action as action {}", cursor + 1)}>
                    { format!("Insert at {}", cursor + 1) }
                </button>
            </div>
            { for (*problem).clone().map(|p| html! { <p class="script-problem" role="alert" data-testid="script-problem">{ p }</p> }) }
            { if script.branches.is_empty() { html! {} } else { html! {
                <div class="branches">
                    <h3>{ "Branches" }</h3>
                    <ul data-testid="branches" aria-label="branches left by edits">
                        { for script.branches.iter().map(|branch| {
                            let switch = {
                                let state = state.clone();
                                let index = branch.index;
                                Callback::from(move |_: MouseEvent| state.dispatch(Action::Core(Command::SwitchBranch(index))))
                            };
                            html! {
                                <li>
                                    <button data-testid={format!("branch-{}", branch.index)} onclick={switch}
                                            aria-label={format!("Switch to branch {}: parts at action {} with {}, {} actions", branch.index + 1, branch.forked_at + 1, branch.label, branch.len)}>
                                        { format!("branch {} · from {}: ", branch.index + 1, branch.forked_at + 1) }<code>{ &branch.label }</code>
                                    </button>
                                </li>
                            }
                        }) }
                    </ul>
                </div>
            } } }
        </section>
    }
}

/// The editor's handles a line's buttons use. They read the newest state
/// when used, so they never make a line render again (see the `PartialEq`).
#[derive(Clone)]
struct LineCtx {
    dispatcher: UseReducerDispatcher<AppState>,
    editing: UseStateHandle<Option<usize>>,
    draft: UseStateHandle<String>,
    problem: UseStateHandle<Option<String>>,
}

impl PartialEq for LineCtx {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Properties of [`ScriptLineRow`].
#[derive(Properties, PartialEq)]
struct ScriptLineRowProps {
    /// The script view (the same `Rc` while the log is unchanged).
    script: std::rc::Rc<nomad_playground::script_view::ScriptView>,
    /// Which line.
    index: usize,
    /// Whether the line is the step just applied.
    current: bool,
    /// Whether the line has been applied.
    done: bool,
    /// The editor's text, when this line is being edited.
    draft: Option<String>,
    ctx: LineCtx,
}

/// One action of the script. A component of its own so that a step
/// re-renders only the lines whose marks change.
#[component]
fn ScriptLineRow(props: &ScriptLineRowProps) -> Html {
    let ScriptLineRowProps {
        script,
        index,
        current,
        done,
        ctx,
        ..
    } = props;
    let (index, current, done) = (*index, *current, *done);
    let Some(line) = script.lines.get(index) else {
        return html! {};
    };
    let len = script.lines.len();
    let LineCtx {
        dispatcher: state,
        editing,
        draft,
        problem,
    } = ctx;
    let edit = |make: Box<dyn Fn() -> ScriptEdit>| {
        let state = state.clone();
        let editing = editing.clone();
        Callback::from(move |_: MouseEvent| {
            editing.set(None);
            state.dispatch(Action::Core(Command::EditScript(make())));
        })
    };
    let start_edit = {
        let editing = editing.clone();
        let draft = draft.clone();
        let problem = problem.clone();
        let json = line.json.clone();
        Callback::from(move |_: MouseEvent| {
            draft.set(json.clone());
            problem.set(None);
            editing.set(Some(index));
        })
    };
    let save = {
        let state = state.clone();
        let editing = editing.clone();
        let draft = draft.clone();
        let problem = problem.clone();
        Callback::from(move |_: MouseEvent| match parse_action(&draft) {
            Ok(action) => {
                editing.set(None);
                problem.set(None);
                state.dispatch(Action::Core(Command::EditScript(ScriptEdit::Replace {
                    index,
                    action,
                })));
            }
            Err(err) => problem.set(Some(format!("action {}: {err}", index + 1))),
        })
    };
    let cancel = {
        let editing = editing.clone();
        Callback::from(move |_: MouseEvent| editing.set(None))
    };
    let on_draft = {
        let draft = draft.clone();
        Callback::from(move |event: InputEvent| {
            let input: web_sys::HtmlInputElement = event.target_unchecked_into();
            draft.set(input.value());
        })
    };
    let label = &line.label;
    html! {
        <li class={classes!("script-line", done.then_some("done"), current.then_some("current"))}
            data-testid={format!("script-line-{index}")} data-kind={line.kind.clone()}
            aria-current={if current { "step" } else { "false" }}>
            <span class="script-step mono" aria-hidden="true">{ if done { "✓" } else { "·" } }{ index + 1 }</span>
            { if let Some(text) = &props.draft { html! {
                <span class="script-edit-form">
                    <input class="mono" data-testid="script-json" value={text.clone()} oninput={on_draft}
                           aria-label={format!("JSON of action {}", index + 1)} />
                    <button data-testid="script-save" onclick={save} aria-label={format!("Save action {}", index + 1)}>{ "Save" }</button>
                    <button data-testid="script-cancel" onclick={cancel} aria-label="Cancel editing">{ "Cancel" }</button>
                </span>
            } } else { html! {
                <>
                    <span class="script-label mono" title={line.json.clone()}>{ label }</span>
                    <span class="script-buttons">
                        <button data-testid="script-edit" onclick={start_edit} aria-label={format!("Edit action {}: {label}", index + 1)} title="Edit">{ "✎" }</button>
                        <button data-testid="script-up" disabled={index == 0} onclick={edit(Box::new(move || ScriptEdit::Move { from: index, to: index.saturating_sub(1) }))}
                                aria-label={format!("Move action {} earlier", index + 1)} title="Move earlier">{ "↑" }</button>
                        <button data-testid="script-down" disabled={index + 1 >= len} onclick={edit(Box::new(move || ScriptEdit::Move { from: index, to: index + 1 }))}
                                aria-label={format!("Move action {} later", index + 1)} title="Move later">{ "↓" }</button>
                        <button data-testid="script-remove" onclick={edit(Box::new(move || ScriptEdit::Remove { index }))}
                                aria-label={format!("Remove action {}: {label}", index + 1)} title="Remove">{ "✕" }</button>
                    </span>
                </>
            } } }
        </li>
    }
}
