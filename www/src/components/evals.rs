//! The eval queue: every evaluation with its status, trigger and job.

use crate::state::{Action, AppState, Selection};
use nomad_playground::view::EvalView;
use yew::prelude::*;

/// Properties of [`EvalQueue`].
#[derive(Properties)]
pub struct EvalQueueProps {
    /// The app state (read when rendering and in callbacks: the handle
    /// always gives the newest state).
    pub state: UseReducerHandle<AppState>,
    /// The evaluations and the selection (the queue renders only from them).
    pub deps: (
        Vec<std::rc::Rc<nomad_playground::view::EvalView>>,
        crate::state::Selection,
    ),
}

impl PartialEq for EvalQueueProps {
    /// Only `deps`: a step that changes nothing the panel shows skips it.
    fn eq(&self, other: &Self) -> bool {
        self.deps == other.deps
    }
}

/// Evaluations grouped by status, newest last.
#[component]
pub fn EvalQueue(props: &EvalQueueProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let evals = &session.view().evals;
    let groups = [
        ("Ready", &["pending"][..]),
        ("Blocked", &["blocked"][..]),
        ("Done", &["complete", "failed", "canceled"][..]),
    ];
    html! {
        <section class="panel eval-queue" data-testid="eval-queue" aria-label="Evaluations">
            <h2 class="panel-title">{ "Evaluations" }</h2>
            { for groups.iter().map(|(title, statuses)| {
                let rows: Vec<&EvalView> = evals.iter().map(|e| &**e).filter(|e| statuses.contains(&e.status.as_str())).collect();
                html! {
                    <div class="eval-group">
                        <h3>{ format!("{title} ({})", rows.len()) }</h3>
                        <ul>{ for rows.iter().map(|eval| eval_row(eval, &state)) }</ul>
                    </div>
                }
            }) }
        </section>
    }
}

fn eval_row(eval: &EvalView, state: &UseReducerHandle<AppState>) -> Html {
    let select = {
        let state = state.clone();
        let id = eval.id.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Select(Selection::Eval(id.clone())))
        })
    };
    let selected = state.selection == Selection::Eval(eval.id.clone());
    html! {
        <li>
            <button class={classes!("eval-row", format!("eval-{}", eval.status), selected.then_some("selected"))}
                    data-testid={format!("eval-{}", eval.id)} onclick={select}
                    aria-label={format!("evaluation {} {} {} for {}", eval.short_id, eval.status, eval.triggered_by, eval.job_id)}>
                <span class={classes!("badge", format!("eval-{}", eval.status))}>{ &eval.status }</span>
                <code>{ &eval.short_id }</code>
                <span class="trigger">{ &eval.triggered_by }</span>
                <span class="job">{ &eval.job_id }</span>
                { if let Some(wait) = &eval.wait_until { html!{ <span class="wait mono">{ format!("⏲ {wait}") }</span> } } else { html!{} } }
            </button>
        </li>
    }
}
