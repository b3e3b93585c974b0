//! The jobs panel: each job's version and groups, with the user's job
//! actions (new version, scale, stop).

use crate::state::{Action, AppState};
use nomad_playground::playground::Command;
use nomad_playground::scenario::format::Action as ScriptAction;
use nomad_playground::view::JobView;
use yew::prelude::*;

/// Properties of [`JobsPanel`].
#[derive(Properties, PartialEq)]
pub struct JobsPanelProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

/// The jobs panel.
#[component]
pub fn JobsPanel(props: &JobsPanelProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let jobs = &session.view().jobs;
    html! {
        <section class="panel jobs" data-testid="jobs" aria-label="Jobs">
            <h2 class="panel-title">{ "Jobs" }</h2>
            { for jobs.iter().map(|job| job_row(job, &state)) }
        </section>
    }
}

fn job_row(job: &JobView, state: &UseReducerHandle<AppState>) -> Html {
    let act = |action: ScriptAction| {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Core(Command::Act(action.clone())))
        })
    };
    let new_version = ScriptAction::UpdateJob {
        job: job.id.clone(),
        group: None,
        count: None,
        config: Some(serde_json::json!({ "image": format!("v{}", job.version + 1) })),
    };
    html! {
        <div class="job" data-testid={format!("job-{}", job.id)}>
            <div class="job-head">
                <strong>{ &job.id }</strong>
                <span class="muted">{ format!(" {} · ", job.job_type) }</span>
                <span class="mono" data-testid="job-version">{ format!("v{}", job.version) }</span>
                { if job.stopped { html! { <span class="flag">{ "stopped" }</span> } } else { html! {} } }
            </div>
            <div class="actions">
                <button data-testid="job-new-version" onclick={act(new_version)} title="Register a new version with a changed task config (a destructive update)">{ "New version" }</button>
                <button data-testid="job-stop" onclick={act(ScriptAction::StopJob { job: job.id.clone() })} disabled={job.stopped}>{ "Stop job" }</button>
            </div>
            { for job.groups.iter().map(|(group, count)| {
                let scale = |count: u64| ScriptAction::UpdateJob {
                    job: job.id.clone(),
                    group: Some(group.clone()),
                    count: Some(u32::try_from(count).unwrap_or(u32::MAX)),
                    config: None,
                };
                html! {
                    <div class="group-row">
                        <span>{ format!("group {group}: count ") }</span>
                        <button data-testid="group-scale-down" aria-label={format!("Scale {group} down")} disabled={*count == 0} onclick={act(scale(count.saturating_sub(1)))}>{ "−" }</button>
                        <span class="mono" data-testid="group-count">{ count }</span>
                        <button data-testid="group-scale-up" aria-label={format!("Scale {group} up")} onclick={act(scale(count + 1))}>{ "+" }</button>
                    </div>
                }
            }) }
        </div>
    }
}
