//! The live sequence diagram: one lane per client, the leader and the eval
//! broker; time runs down; clicking an arrow jumps to its step.

use crate::state::{Action, AppState};
use nomad_playground::playground::Command;
use nomad_playground::view::SeqEventView;
use yew::prelude::*;

/// Properties of [`SequenceDiagram`].
#[derive(Properties, PartialEq)]
pub struct SequenceDiagramProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

const LANE_WIDTH: f64 = 150.0;
const ROW_HEIGHT: f64 = 26.0;
const HEAD_HEIGHT: f64 = 30.0;

/// The diagram, drawn as SVG with a table twin for screen readers.
#[component]
pub fn SequenceDiagram(props: &SequenceDiagramProps) -> Html {
    let state = props.state.clone();
    let session = state.session.get();
    let view = session.view();
    let mut lanes: Vec<(String, String)> = view
        .nodes
        .iter()
        .map(|node| (node.id.clone(), node.name.clone()))
        .collect();
    lanes.push(("leader".into(), "leader".into()));
    lanes.push(("broker".into(), "eval broker".into()));
    let positions: std::collections::BTreeMap<&str, usize> = lanes
        .iter()
        .enumerate()
        .map(|(index, (lane, _))| (lane.as_str(), index))
        .collect();
    let lane_x = |id: &str| {
        let index = positions.get(id).copied().unwrap_or(lanes.len() - 2);
        LANE_WIDTH * index as f64 + LANE_WIDTH / 2.0
    };
    let width = LANE_WIDTH * lanes.len() as f64;
    let height = HEAD_HEIGHT + ROW_HEIGHT * (view.sequence.len() as f64 + 1.0);
    // Rows sit at their position in the whole diagram, shifted up by the
    // events left out: a step adds rows and drops the oldest, and the rows
    // in between keep their props (keyed, so Yew leaves them alone).
    let hidden = view.sequence_hidden;
    let dispatcher = state.dispatcher();
    let row = |(index, event): (usize, &SeqEventView)| {
        let index = hidden + index;
        html! {
            <SeqRow key={index} event={event.clone()} x1={lane_x(&event.from)} x2={lane_x(&event.to)}
                    y={HEAD_HEIGHT + ROW_HEIGHT * (index as f64 + 0.7)} current={event.step == view.step}
                    dispatcher={dispatcher.clone()} />
        }
    };
    html! {
        <section class="panel sequence" data-testid="sequence" aria-label="Sequence diagram">
            <h2 class="panel-title">{ "Sequence" }</h2>
            <div class="sequence-scroll">
                <svg width={width.to_string()} height={height.to_string()} role="img"
                     aria-label={format!("sequence diagram with {} events", view.sequence.len())}>
                    <SeqLanes lanes={lanes.clone()} {height} />
                    <g transform={format!("translate(0,{})", -ROW_HEIGHT * hidden as f64)}>
                        { for view.sequence.iter().enumerate().map(row) }
                    </g>
                </svg>
            </div>
        </section>
    }
}

/// Properties of [`SeqLanes`].
#[derive(Properties, PartialEq)]
struct SeqLanesProps {
    /// Lanes as `(id, name)`, left to right.
    lanes: Vec<(String, String)>,
    height: f64,
}

/// The lanes' heads and lines (re-drawn only when lanes or height change).
#[component]
fn SeqLanes(props: &SeqLanesProps) -> Html {
    let height = props.height.to_string();
    html! {
        { for props.lanes.iter().enumerate().map(|(index, (_, name))| {
            let x = (LANE_WIDTH * index as f64 + LANE_WIDTH / 2.0).to_string();
            html! {
                <g class="lane">
                    <text class="lane-head" x={x.clone()} y="18" text-anchor="middle">{ name }</text>
                    <line class="lane-line" x1={x.clone()} y1={HEAD_HEIGHT.to_string()} x2={x} y2={height.clone()} />
                </g>
            }
        }) }
    }
}

/// Properties of [`SeqRow`].
#[derive(Properties, PartialEq)]
struct SeqRowProps {
    event: SeqEventView,
    x1: f64,
    x2: f64,
    y: f64,
    /// Whether the event belongs to the current step.
    current: bool,
    dispatcher: UseReducerDispatcher<AppState>,
}

/// One arrow (or a note on one lane) of the diagram.
#[component]
fn SeqRow(props: &SeqRowProps) -> Html {
    let SeqRowProps {
        event, x1, x2, y, ..
    } = props;
    let (x1, x2, y) = (*x1, *x2, *y);
    let jump = {
        let state = props.dispatcher.clone();
        let step = event.step;
        Callback::from(move |_: MouseEvent| state.dispatch(Action::Core(Command::JumpTo(step))))
    };
    let class = classes!(
        "seq-event",
        format!("seq-{}", event.kind),
        props.current.then_some("current")
    );
    let label = format!("{} {}", event.time, event.label);
    if x1 == x2 {
        html! {
            <g {class} onclick={jump} data-testid="seq-event" role="button" aria-label={label.clone()}>
                <circle cx={x1.to_string()} cy={y.to_string()} r="4" />
                <text x={(x1 + 8.0).to_string()} y={(y + 4.0).to_string()}>{ &event.label }</text>
                <title>{ label }</title>
            </g>
        }
    } else {
        let direction = if x2 > x1 { -1.0 } else { 1.0 };
        let head = format!(
            "{},{} {},{} {},{}",
            x2,
            y,
            x2 + 7.0 * direction,
            y - 4.0,
            x2 + 7.0 * direction,
            y + 4.0
        );
        html! {
            <g {class} onclick={jump} data-testid="seq-event" role="button" aria-label={label.clone()}>
                <line x1={x1.to_string()} y1={y.to_string()} x2={x2.to_string()} y2={y.to_string()} />
                <polygon points={head} />
                <text x={((x1 + x2) / 2.0).to_string()} y={(y - 4.0).to_string()} text-anchor="middle">{ &event.label }</text>
                <title>{ label }</title>
            </g>
        }
    }
}
