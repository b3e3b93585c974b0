//! The top bar: scenario, profile, step controls, time, speed, theme.

use crate::state::{Action, AppState};
use nomad_playground::playground::Command;
use nomad_playground::scenario::duration::Dur;
use nomad_playground::scenario::format::Action as ScriptAction;
use yew::prelude::*;

/// Properties of [`TopBar`].
#[derive(Properties, PartialEq)]
pub struct TopBarProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
    /// Toggle between the light and the dark theme.
    pub on_theme: Callback<()>,
    /// Go back to the list of lessons.
    pub on_home: Callback<()>,
}

/// The top bar.
#[component]
pub fn TopBar(props: &TopBarProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let view = session.view();
    let dispatch = |action: Action| {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(action.clone()))
    };
    let on_profile = {
        let state = state.clone();
        Callback::from(move |event: Event| {
            let select: web_sys::HtmlSelectElement = event.target_unchecked_into();
            state.dispatch(Action::Core(Command::SetProfile(select.value())));
        })
    };
    let on_home = props.on_home.reform(|_: MouseEvent| ());
    let on_theme = props.on_theme.reform(|_: MouseEvent| ());
    html! {
        <header class="topbar" data-testid="topbar">
            <button class="brand" onclick={on_home} title="Lessons" data-testid="home">{ "nomad-playground" }</button>
            <span class="scenario-name" data-testid="scenario-name">{ &view.scenario }</span>
            <label class="profile">
                <span>{ "Nomad" }</span>
                <select data-testid="profile" aria-label="Nomad version profile" onchange={on_profile}>
                    { for view.profiles.iter().map(|p| html! {
                        <option value={p.clone()} selected={*p == view.profile}>{ p }</option>
                    }) }
                </select>
            </label>
            <nav class="controls" aria-label="Step controls">
                <button data-testid="reset" onclick={dispatch(Action::Core(Command::Reset))} title="Reset (Home)" aria-label="Reset">{ "|◀" }</button>
                <button data-testid="back" onclick={dispatch(Action::Core(Command::Back))} disabled={view.step == 0} title="Back one step (←)" aria-label="Back one step">{ "◀" }</button>
                <button data-testid="play" onclick={dispatch(Action::TogglePlay)} disabled={!view.can_step && !state.playing}
                        title="Play or pause (Space)" aria-label={if state.playing { "Pause" } else { "Play" }}>
                    { if state.playing { "⏸" } else { "▶" } }
                </button>
                <button data-testid="step" onclick={dispatch(Action::Core(Command::Step))} disabled={!view.can_step} title="Step one event (→)" aria-label="Step one event">{ "▶▶" }</button>
                <button data-testid="run-to-end" onclick={dispatch(Action::Core(Command::RunToEnd))} disabled={view.step >= view.steps_total} title="Run the rest of the script (End)" aria-label="Run to the end">{ "▶|" }</button>
                <button data-testid="step-eval" onclick={dispatch(Action::Core(Command::StepEval))} disabled={!view.can_step} title="Step one eval (Shift+→)" aria-label="Step one evaluation">{ "◆▶" }</button>
            </nav>
            <span class="advance" role="group" aria-label="Advance time">
                { for [("+5s", Dur::secs(5)), ("+30s", Dur::secs(30)), ("+2m", Dur::mins(2))].iter().map(|(label, by)| html! {
                    <button data-testid={format!("advance-{}", label.trim_start_matches('+'))}
                            onclick={dispatch(Action::Core(Command::Act(ScriptAction::Advance { by: *by })))}
                            title={format!("Advance simulated time by {}", label.trim_start_matches('+'))}>{ *label }</button>
                }) }
            </span>
            <span class="clock mono" data-testid="clock">{ &view.time }</span>
            <span class="step-counter mono" data-testid="step-counter">{ format!("step {}/{}", view.step, view.steps_total) }</span>
            <label class="speed">
                <span>{ "speed" }</span>
                <select data-testid="speed" aria-label="Auto-play speed" onchange={
                    let state = state.clone();
                    Callback::from(move |event: Event| {
                        let select: web_sys::HtmlSelectElement = event.target_unchecked_into();
                        if let Ok(ms) = select.value().parse() { state.dispatch(Action::SetSpeed(ms)); }
                    })
                }>
                    { for [(1000, "1×"), (500, "2×"), (250, "4×"), (100, "10×")].iter().map(|(ms, label)| html! {
                        <option value={ms.to_string()} selected={state.speed_ms == *ms}>{ *label }</option>
                    }) }
                </select>
            </label>
            <button class="theme" data-testid="theme" onclick={on_theme} title="Light or dark theme" aria-label="Switch theme">{ "◐" }</button>
            <span class="core-version" data-testid="core-version">{ format!("core v{}", nomad_playground::VERSION) }</span>
        </header>
    }
}
