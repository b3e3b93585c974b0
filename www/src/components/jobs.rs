//! The jobs panel: each job's version and groups, with the user's job
//! actions (new version, scale, stop, revert), and the job's latest deployment with
//! the operator's deployment calls (promote, pause, resume, fail).

use crate::state::{Action, AppState};
use nomad_playground::playground::Command;
use nomad_playground::scenario::format::Action as ScriptAction;
use nomad_playground::view::{DeploymentView, JobView};
use yew::prelude::*;

/// Properties of [`JobsPanel`].
#[derive(Properties)]
pub struct JobsPanelProps {
    /// The app state (read when rendering and in callbacks: the handle
    /// always gives the newest state).
    pub state: UseReducerHandle<AppState>,
    /// The jobs shown (the panel renders only from them).
    pub deps: Vec<nomad_playground::view::JobView>,
}

impl PartialEq for JobsPanelProps {
    /// Only `deps`: a step that changes nothing the panel shows skips it.
    fn eq(&self, other: &Self) -> bool {
        self.deps == other.deps
    }
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
                { for job.revert_to.map(|version| html! {
                    <button data-testid="job-revert" onclick={act(ScriptAction::RevertJob { job: job.id.clone(), version, enforce_prior_version: Some(job.version) })} title={format!("nomad job revert {} {version}: register version {version}'s spec again as a new version", job.id)}>{ format!("Revert to v{version}") }</button>
                }) }
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
            { for job.deployment.as_ref().map(|deployment| deployment_box(deployment, state)) }
        </div>
    }
}

/// The latest deployment: status and description, one row per group
/// (placed/desired, healthy, unhealthy, canaries), and the operator's calls
/// that apply to its status.
fn deployment_box(deployment: &DeploymentView, state: &UseReducerHandle<AppState>) -> Html {
    let call = |make: fn(String) -> ScriptAction| {
        let state = state.clone();
        let action = make(deployment.id.clone());
        Callback::from(move |_: MouseEvent| {
            state.dispatch(Action::Core(Command::Act(action.clone())))
        })
    };
    let status = deployment.status.as_str();
    let canaries = deployment.groups.iter().any(|g| g.desired_canaries > 0);
    html! {
        <div class="deployment" data-testid="deployment" data-status={deployment.status.clone()}
             aria-label={format!("deployment {} of version {}, {}", deployment.short_id, deployment.job_version, deployment.status)}>
            <div class="deployment-head">
                <span>{ "Deployment " }</span><code>{ &deployment.short_id }</code>
                <span class="mono">{ format!(" v{} ", deployment.job_version) }</span>
                <span class={classes!("badge", format!("deploy-{status}"))} data-testid="deployment-status">{ status }</span>
            </div>
            <p class="deployment-description muted" data-testid="deployment-description">{ &deployment.description }</p>
            <table class="deployment-groups">
                <thead><tr>
                    <th>{ "group" }</th><th title="placed / desired">{ "placed" }</th><th>{ "healthy" }</th><th>{ "unhealthy" }</th>
                    { if canaries { html! { <th title="placed / desired canaries">{ "canaries" }</th> } } else { html! {} } }
                </tr></thead>
                <tbody>
                    { for deployment.groups.iter().map(|g| html! {
                        <tr data-testid={format!("deployment-group-{}", g.name)}>
                            <td>{ &g.name }</td>
                            <td class="mono" data-testid="deployment-placed">{ format!("{}/{}", g.placed, g.desired) }</td>
                            <td class="mono" data-testid="deployment-healthy">{ g.healthy }</td>
                            <td class={classes!("mono", (g.unhealthy > 0).then_some("unhealthy"))} data-testid="deployment-unhealthy">{ g.unhealthy }</td>
                            { if canaries { html! {
                                <td class="mono" data-testid="deployment-canaries">
                                    { format!("{}/{}", g.placed_canaries, g.desired_canaries) }
                                    { if g.desired_canaries > 0 { if g.promoted { " promoted" } else { " not promoted" } } else { "" } }
                                </td>
                            } } else { html! {} } }
                        </tr>
                    }) }
                </tbody>
            </table>
            { for deployment.groups.iter().map(|g| html! {
                <p class="deployment-flags muted">
                    { format!("{}: progress deadline {}", g.name, g.progress_deadline) }
                    { g.require_progress_by.as_ref().map(|by| format!(" (progress by {by})")).unwrap_or_default() }
                    { if g.auto_revert { " · auto_revert" } else { "" } }
                    { if g.auto_promote { " · auto_promote" } else { "" } }
                </p>
            }) }
            { if deployment.active { html! {
                <div class="actions" role="group" aria-label="Deployment calls">
                    { if deployment.needs_promotion { html! {
                        <button data-testid="deployment-promote" onclick={call(|deployment| ScriptAction::PromoteDeployment { deployment, groups: None })}>{ "Promote" }</button>
                    } } else { html! {} } }
                    { if status == "paused" { html! {
                        <button data-testid="deployment-resume" onclick={call(|deployment| ScriptAction::ResumeDeployment { deployment })}>{ "Resume" }</button>
                    } } else { html! {
                        <button data-testid="deployment-pause" onclick={call(|deployment| ScriptAction::PauseDeployment { deployment })}>{ "Pause" }</button>
                    } } }
                    <button data-testid="deployment-fail" onclick={call(|deployment| ScriptAction::FailDeployment { deployment })}>{ "Fail" }</button>
                </div>
            } } else { html! {} } }
        </div>
    }
}
