//! Explore mode's panel: settings (profile, invariants, max orders, seed),
//! a search that runs in a Web Worker (`static/explore-worker.js`) with a
//! progress bar and a stop button, and the results: each broken invariant
//! with its explanation, how many orders broke it, the distinct violations
//! found and the shortest order, which opens in the playground or as a
//! link; how many orders were pruned (postponed, subsumed); and the same
//! search under another profile. The search is the core's [`nomad_playground::explore`].

use crate::state::{Action, AppState};
use crate::worker::{FromWorker, ToWorker};
use nomad_playground::explore::invariant::Invariant;
use nomad_playground::explore::{
    ExploreConfig, ExploreResult, InvariantReport, MAX_DETAILS, Progress,
};
use std::rc::Rc;
use yew::prelude::*;

/// Properties of [`ExplorePanel`].
#[derive(Properties)]
pub struct ExplorePanelProps {
    /// The app state (read when rendering and in callbacks: the handle
    /// always gives the newest state).
    pub state: UseReducerHandle<AppState>,
    /// The run's profile and the profiles to pick from (all the panel reads
    /// from the view; its callbacks read the state when used).
    pub deps: (String, Vec<String>),
}

impl PartialEq for ExplorePanelProps {
    /// Only `deps`: a step that changes nothing the panel shows skips it.
    fn eq(&self, other: &Self) -> bool {
        self.deps == other.deps
    }
}

/// What the user set up.
#[derive(Debug, Clone, PartialEq)]
struct Settings {
    profile: Option<String>,
    invariants: Vec<Invariant>,
    max_orders: u64,
    seed: u64,
    compare: String,
}

impl Default for Settings {
    fn default() -> Self {
        let config = ExploreConfig::default();
        Settings {
            profile: None,
            invariants: config.invariants,
            max_orders: config.max_orders,
            seed: config.seed,
            compare: "latest".to_string(),
        }
    }
}

/// The searches and their outcome.
#[derive(Debug, Clone, PartialEq, Default)]
struct Runs {
    /// The newest run's number: older runs' messages are ignored.
    run: u32,
    /// The newest run compares another profile (its result goes to `compared`).
    comparing: bool,
    running: bool,
    progress: Option<Progress>,
    result: Option<ExploreResult>,
    stopped: bool,
    compared: Vec<ExploreResult>,
    error: Option<String>,
}

enum RunsAction {
    Start {
        run: u32,
        comparing: bool,
    },
    // Sent by the worker's listener, which exists only in the browser.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    Worker(FromWorker),
}

impl Reducible for Runs {
    type Action = RunsAction;

    fn reduce(self: Rc<Self>, action: RunsAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            RunsAction::Start { run, comparing } => {
                next.run = run;
                next.comparing = comparing;
                next.running = true;
                next.progress = None;
                next.error = None;
                if !comparing {
                    next.result = None;
                    next.stopped = false;
                    next.compared.clear();
                }
            }
            RunsAction::Worker(message) => match message {
                FromWorker::Progress { run, progress } if run == next.run => {
                    next.progress = Some(progress);
                }
                FromWorker::Done {
                    run,
                    stopped,
                    result,
                } if run == next.run => {
                    next.running = false;
                    if let Some(progress) = next.progress.as_mut() {
                        progress.done = !stopped;
                        progress.orders = result.orders;
                        progress.states = result.states;
                        progress.violating_orders = result.violating_orders;
                        progress.space_estimate = result.space_size;
                    }
                    if next.comparing {
                        next.compared.retain(|r| r.profile != result.profile);
                        next.compared.push(*result);
                    } else {
                        next.stopped = stopped;
                        next.result = Some(*result);
                    }
                }
                FromWorker::Error { run, message } if run == next.run => {
                    next.running = false;
                    next.error = Some(message);
                }
                _ => {}
            },
        }
        Rc::new(next)
    }
}

/// The explore panel (collapsed until opened).
#[component]
pub fn ExplorePanel(props: &ExplorePanelProps) -> Html {
    let state = props.state.clone();
    let settings = use_state(Settings::default);
    let runs = use_reducer(Runs::default);
    let worker = use_mut_ref(|| None::<browser::Handle>);
    let session = state.session.get();
    let view = session.view();
    let profile = settings
        .profile
        .clone()
        .unwrap_or_else(|| view.profile.clone());

    let start = {
        let state = state.clone();
        let runs = runs.clone();
        let worker = worker.clone();
        let settings = settings.clone();
        move |profile: String, comparing: bool| {
            let playground = state.session.get();
            let scenario = nomad_playground::export::session_link(playground.session()).scenario;
            let config = ExploreConfig {
                profile: Some(profile),
                max_orders: settings.max_orders.max(1),
                seed: settings.seed,
                invariants: settings.invariants.clone(),
                ..ExploreConfig::default()
            };
            let run = runs.run + 1;
            runs.dispatch(RunsAction::Start { run, comparing });
            browser::post(
                &worker,
                &runs,
                &ToWorker::Start {
                    run,
                    scenario: nomad_playground::scenario::print(&scenario),
                    config: serde_json::to_string(&config).unwrap_or_default(),
                },
            );
        }
    };
    let on_start = {
        let start = start.clone();
        let profile = profile.clone();
        Callback::from(move |_: MouseEvent| start(profile.clone(), false))
    };
    let on_compare = {
        let start = start.clone();
        let other = settings.compare.clone();
        Callback::from(move |_: MouseEvent| start(other.clone(), true))
    };
    let on_stop = {
        let worker = worker.clone();
        let runs = runs.clone();
        Callback::from(move |_: MouseEvent| browser::post(&worker, &runs, &ToWorker::Stop))
    };
    let set = |change: fn(&mut Settings, String)| {
        let settings = settings.clone();
        Callback::from(move |event: Event| {
            let input: web_sys::HtmlInputElement = event.target_unchecked_into();
            let mut next = (*settings).clone();
            change(&mut next, input.value());
            settings.set(next);
        })
    };
    let on_profile = set(|s, v| s.profile = Some(v));
    let on_compare_profile = set(|s, v| s.compare = v);
    let on_max = set(|s, v| {
        if let Ok(n) = v.trim().parse::<u64>() {
            s.max_orders = n.max(1);
        }
    });
    let on_seed = set(|s, v| {
        if let Ok(n) = v.trim().parse::<u64>() {
            s.seed = n;
        }
    });
    let toggle = |invariant: Invariant| {
        let settings = settings.clone();
        Callback::from(move |_: Event| {
            let mut next = (*settings).clone();
            if next.invariants.contains(&invariant) {
                next.invariants.retain(|i| *i != invariant);
            } else {
                next.invariants.push(invariant);
            }
            settings.set(next);
        })
    };

    let progress = runs.progress.as_ref();
    let bar = progress.map(|p| {
        let space = if p.space_estimate > 0.0 {
            p.space_estimate.min(p.max_orders as f64)
        } else {
            p.max_orders as f64
        };
        html! {
            <div class="explore-progress">
                <progress data-testid="explore-progress" max={format!("{:.0}", space.max(1.0))}
                          value={if p.done { format!("{:.0}", space.max(1.0)) } else { p.orders.to_string() }}
                          aria-label="Orders tried" />
                <span class="mono" data-testid="explore-status">{ format!(
                    "{} orders tried of {} (budget {}), {} states, {} violating",
                    p.orders,
                    if p.space_estimate > 0.0 { format!("~{}", size_text(p.space_estimate)) } else { "?".to_string() },
                    p.max_orders,
                    p.states,
                    p.violating_orders,
                ) }</span>
            </div>
        }
    });

    html! {
        <details class="panel explore" data-testid="explore">
            <summary class="panel-title">{ "Explore orders" }</summary>
            <p class="hint">{ "Tries the orders in which the reconnecting clients' calls, their loops and the scheduler can happen, and checks invariants after each step." }</p>
            <div class="explore-settings">
                <label>{ "Nomad " }
                    <select data-testid="explore-profile" aria-label="Profile to search" onchange={on_profile}>
                        { for view.profiles.iter().map(|p| html! {
                            <option value={p.clone()} selected={*p == profile}>{ p }</option>
                        }) }
                    </select>
                </label>
                <label>{ "max orders " }
                    <input type="number" min="1" data-testid="explore-max-orders" value={settings.max_orders.to_string()} onchange={on_max} />
                </label>
                <label>{ "seed " }
                    <input type="number" min="0" data-testid="explore-seed" value={settings.seed.to_string()} onchange={on_seed} />
                </label>
                <fieldset class="explore-invariants">
                    <legend>{ "invariants" }</legend>
                    { for Invariant::ALL.iter().map(|&invariant| html! {
                        <label title={invariant.explanation()}>
                            <input type="checkbox" data-testid={format!("explore-inv-{}", invariant.name())}
                                   checked={settings.invariants.contains(&invariant)} onchange={toggle(invariant)} />
                            { invariant.name() }
                        </label>
                    }) }
                </fieldset>
                <button data-testid="explore-start" onclick={on_start} disabled={runs.running}>{ "Search" }</button>
                <button data-testid="explore-stop" onclick={on_stop} disabled={!runs.running}>{ "Stop" }</button>
            </div>
            { for bar }
            { for runs.error.as_ref().map(|e| html! { <p class="message" role="alert" data-testid="explore-error">{ e }</p> }) }
            { for runs.result.as_ref().map(|result| results(result, runs.stopped, &state)) }
            { if runs.result.is_some() { html! {
                <div class="explore-compare">
                    <label>{ "same search under " }
                        <select data-testid="explore-compare-profile" aria-label="Profile to compare" onchange={on_compare_profile}>
                            { for view.profiles.iter().map(|p| html! {
                                <option value={p.clone()} selected={*p == settings.compare}>{ p }</option>
                            }) }
                        </select>
                    </label>
                    <button data-testid="explore-compare" onclick={on_compare} disabled={runs.running}>{ "Search" }</button>
                    <ul>{ for runs.compared.iter().map(|other| html! {
                        <li data-testid={format!("explore-compared-{}", other.profile)}>{ format!(
                            "under {}: {} ({})",
                            other.profile,
                            if other.violated().is_empty() { "no violation".to_string() } else { format!("violates {}", other.violated().join(", ")) },
                            summary(other),
                        ) }</li>
                    }) }</ul>
                </div>
            } } else { html! {} } }
        </details>
    }
}

/// An estimated count: whole below 1e9 (`{:.0}`'s text), else with three
/// significant digits (`1.23e15`, `{:.2e}`'s shape; a third digit exactly
/// halfway may round the other way). Written without `{:.2e}`, whose
/// exponential formatter is compiled for nothing else on the page (~1.3 KB
/// gzipped; `Display` for `f64` is compiled in anyway: serde's error
/// messages reach it).
fn size_text(n: f64) -> String {
    if n < 1e9 {
        return (n.max(0.0).round_ties_even() as u64).to_string();
    }
    if !n.is_finite() {
        return "inf".to_string();
    }
    let mut exponent = n.log10().floor() as i32;
    let mut hundredths = (n / 10f64.powi(exponent) * 100.0).round_ties_even() as u64;
    if hundredths >= 1000 {
        hundredths /= 10;
        exponent += 1;
    } else if hundredths < 100 {
        hundredths = (n / 10f64.powi(exponent - 1) * 100.0).round_ties_even() as u64;
        exponent -= 1;
    }
    format!("{}.{:02}e{exponent}", hundredths / 100, hundredths % 100)
}

fn summary(result: &ExploreResult) -> String {
    format!(
        "{} {} orders ({} pruned: {} postponed, {} subsumed), {} states, {:.0}% deduplicated",
        if result.exhaustive {
            "exhaustive:"
        } else {
            "sampled:"
        },
        result.orders,
        result.pruned_orders,
        result.postponed_orders,
        result.subsumed_orders,
        result.states,
        result.dedup_ratio * 100.0
    )
}

fn results(result: &ExploreResult, stopped: bool, state: &UseReducerHandle<AppState>) -> Html {
    let broken: Vec<&InvariantReport> = result
        .invariants
        .iter()
        .filter(|r| r.violating_orders > 0)
        .collect();
    html! {
        <div class="explore-results" data-testid="explore-results">
            <p data-testid="explore-summary">{ format!(
                "{}under {}: {}; {}",
                if stopped { "stopped — " } else { "" },
                result.profile,
                if broken.is_empty() { "no violation".to_string() } else { format!("{} invariant(s) broken", broken.len()) },
                summary(result),
            ) }</p>
            <ul>{ for broken.iter().map(|report| violation(report, state)) }</ul>
        </div>
    }
}

fn violation(report: &InvariantReport, state: &UseReducerHandle<AppState>) -> Html {
    let Some(repro) = &report.shortest else {
        return html! {};
    };
    let detail = repro
        .violations
        .iter()
        .filter(|v| v.invariant == report.invariant)
        .map(|v| v.detail.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let link = repro
        .link
        .as_deref()
        .and_then(|l| l.split_once('#'))
        .map(|(_, fragment)| format!("{}#{fragment}", crate::storage::page_base()));
    let open = {
        let state = state.clone();
        let scenario = repro.scenario.clone();
        Callback::from(move |_: MouseEvent| {
            match crate::sharing::open_scenario(&scenario, Some(scenario.script.len()), None) {
                Ok(playground) => state.dispatch(Action::Open(Box::new(playground), Vec::new())),
                Err(err) => state.dispatch(Action::ShowMessage(format!(
                    "could not open the reproduction: {err}"
                ))),
            }
        })
    };
    html! {
        <li class="explore-violation" data-testid={format!("explore-violation-{}", report.name)}>
            <strong>{ &report.name }</strong>
            { format!(" — broken in {} order(s): {detail}", report.violating_orders) }
            <p class="hint">{ &report.explanation }</p>
            { if report.details.is_empty() { html! {} } else { html! {
                <details data-testid={format!("explore-details-{}", report.name)}>
                    <summary>{ format!("{} distinct violation(s){}", report.details.len(),
                        if report.details.len() >= MAX_DETAILS { ", the first kept" } else { "" }) }</summary>
                    <ul class="mono">{ for report.details.iter().map(|detail| html! { <li>{ detail }</li> }) }</ul>
                </details>
            } } }
            <details>
                <summary>{ format!("shortest order ({} choices)", repro.length) }</summary>
                <ol class="mono">{ for repro.order.iter().map(|step| html! { <li>{ step }</li> }) }</ol>
            </details>
            <button data-testid={format!("explore-open-{}", report.name)} onclick={open}>{ "Open reproduction" }</button>
            { for link.map(|link| html! {
                <a class="explore-link" data-testid={format!("explore-link-{}", report.name)} href={link.clone()}>{ "link" }</a>
            }) }
        </li>
    }
}

mod browser {
    //! The worker itself (in the browser only; natively nothing runs).

    use super::Runs;
    #[cfg(target_arch = "wasm32")]
    use super::RunsAction;
    use crate::worker::ToWorker;
    use std::cell::RefCell;
    use std::rc::Rc;
    use yew::prelude::*;

    /// The worker and its message listener.
    #[cfg(target_arch = "wasm32")]
    pub struct Handle {
        worker: web_sys::Worker,
        _listener: gloo::events::EventListener,
    }

    /// Natively there is no worker.
    #[cfg(not(target_arch = "wasm32"))]
    pub struct Handle;

    /// Posts a message to the worker, starting it first if needed.
    #[cfg(target_arch = "wasm32")]
    pub fn post(
        handle: &Rc<RefCell<Option<Handle>>>,
        runs: &UseReducerHandle<Runs>,
        message: &ToWorker,
    ) {
        use wasm_bindgen::JsCast;
        let mut slot = handle.borrow_mut();
        if slot.is_none() {
            let options = web_sys::WorkerOptions::new();
            options.set_type(web_sys::WorkerType::Module);
            match web_sys::Worker::new_with_options("explore-worker.js", &options) {
                Ok(worker) => {
                    let runs = runs.clone();
                    let listener =
                        gloo::events::EventListener::new(&worker, "message", move |event| {
                            let text = event
                                .dyn_ref::<web_sys::MessageEvent>()
                                .and_then(|e| e.data().as_string())
                                .unwrap_or_default();
                            if let Ok(message) = serde_json::from_str(&text) {
                                runs.dispatch(RunsAction::Worker(message));
                            }
                        });
                    *slot = Some(Handle {
                        worker,
                        _listener: listener,
                    });
                }
                Err(_) => {
                    runs.dispatch(RunsAction::Worker(crate::worker::FromWorker::Error {
                        run: runs.run + 1,
                        message: "this browser cannot start the explore worker".to_string(),
                    }));
                    return;
                }
            }
        }
        if let (Some(handle), Ok(text)) = (slot.as_ref(), serde_json::to_string(message)) {
            let _ = handle
                .worker
                .post_message(&wasm_bindgen::JsValue::from_str(&text));
        }
    }

    /// Natively there is no worker: nothing happens.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn post(
        _handle: &Rc<RefCell<Option<Handle>>>,
        _runs: &UseReducerHandle<Runs>,
        _message: &ToWorker,
    ) {
    }

    #[cfg(target_arch = "wasm32")]
    impl Drop for Handle {
        fn drop(&mut self) {
            self.worker.terminate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::size_text;

    #[test]
    fn size_text_is_the_float_formatters_text() {
        for n in [0.0, 0.4, 0.5, 1.5, 2.5, 41_792.0, 123_456.7, 999_999_999.4] {
            assert_eq!(size_text(n), format!("{n:.0}"), "{n}");
        }
        // Three significant digits above 1e9, away from halfway cases.
        let mut n = 1e9;
        while n < 1e300 {
            for scale in [1.0, 1.234, 4.5678, 9.994, 9.996] {
                let value = n * scale;
                assert_eq!(size_text(value), format!("{value:.2e}"), "{value}");
            }
            n *= 10.0;
        }
        assert_eq!(size_text(f64::INFINITY), "inf");
    }
}
