//! The live sequence diagram: one lane per client (above [`FOLD_ABOVE`]
//! clients, the clients without room share one "+N clients" lane), the
//! leader and the eval broker; time runs down; clicking an arrow jumps to
//! its step.

use crate::state::{Action, AppState, Selection};
use nomad_playground::playground::Command;
use nomad_playground::view::{NodeView, SeqEventView};
use std::rc::Rc;
use yew::prelude::*;

/// Properties of [`SequenceDiagram`].
#[derive(Properties, PartialEq)]
pub struct SequenceDiagramProps {
    /// The app state.
    pub state: UseReducerHandle<AppState>,
}

const LANE_WIDTH: f64 = 150.0;
/// The narrowest a lane of a folded diagram gets.
const MIN_LANE_WIDTH: f64 = 120.0;
const ROW_HEIGHT: f64 = 26.0;
const HEAD_HEIGHT: f64 = 30.0;
/// The diagram's SVG is drawn to a multiple of this height (see `SequenceDiagram`).
const CANVAS_STEP: f64 = 4096.0;

/// How far beyond the visible part of the diagram rows are drawn, in pixels.
/// (When the view's window of events moves, at 200 nodes every drawn row is
/// new and costs its parse, style, layout and paint: 200 px drew ~8 rows
/// below the box's ~21.)
const OVERSCAN: f64 = 80.0;
/// The scroll position is noted in steps of this many pixels (a re-render
/// each time it crosses one), under [`OVERSCAN`].
const SCROLL_STEP: i32 = 40;

/// Above this many clients the diagram gives lanes only to the clients it
/// has room for and folds the others into one "+N clients" lane, as
/// ui-design §3 asks (at 200 nodes one lane each made it 30,000 px wide).
pub const FOLD_ABOVE: usize = 8;

/// The client lanes of a folded diagram: which clients have a lane of their
/// own, left to right, and how many share the "+N clients" lane.
#[derive(Debug, Clone, PartialEq, Default)]
struct ClientLanes {
    /// `(id, name)` of the clients with a lane, in the cluster's order.
    shown: Vec<(String, String)>,
    /// How many clients the "+N clients" lane stands for (0: no such lane).
    folded: usize,
}

/// Picks the client lanes for a diagram `room` lanes wide (leader and
/// broker included). Up to [`FOLD_ABOVE`] clients (or as many as there is
/// room for) each keep a lane; past that, the pinned client (the node
/// selected in the inspector) comes first, then the clients whose link is
/// cut or whose status is not `ready`, then the others in cluster order.
fn client_lanes(nodes: &[Rc<NodeView>], room: usize, pinned: Option<&str>) -> ClientLanes {
    let all = |nodes: &[Rc<NodeView>]| {
        nodes
            .iter()
            .map(|node| (node.id.clone(), node.name.clone()))
            .collect()
    };
    if nodes.len() <= FOLD_ABOVE.max(room.saturating_sub(2)) {
        return ClientLanes {
            shown: all(nodes),
            folded: 0,
        };
    }
    // Room for the leader, the broker and the "+N clients" lane, and at least one client.
    let keep = room.saturating_sub(3).max(1);
    let rank = |node: &NodeView| {
        if pinned == Some(node.id.as_str()) {
            0
        } else if !node.link_up || node.status != "ready" {
            1
        } else {
            2
        }
    };
    // The first `keep` in order of rank, then of the cluster (one pass per
    // rank: sorting all the nodes at every step cost more).
    let mut picked: Vec<usize> = Vec::with_capacity(keep);
    for wanted in 0..3 {
        picked.extend(
            (0..nodes.len())
                .filter(|&index| rank(&nodes[index]) == wanted)
                .take(keep - picked.len()),
        );
    }
    picked.sort_unstable();
    ClientLanes {
        shown: picked
            .iter()
            .map(|&index| (nodes[index].id.clone(), nodes[index].name.clone()))
            .collect(),
        folded: nodes.len() - picked.len(),
    }
}

/// How many lanes fit in a scroll box `width` pixels wide (at least three).
fn lanes_in(width: f64) -> usize {
    ((width / LANE_WIDTH).floor() as usize).max(3)
}

/// The diagram, drawn as SVG with a table twin for screen readers. Only the
/// rows in and near the scrolled-to part are drawn (the SVG keeps its whole
/// size): a step then adds and removes a few dozen elements, not hundreds.
/// Above [`FOLD_ABOVE`] clients, those without room fold into one lane. The
/// drawn rows are one tab stop (a roving tabindex): ↑/↓ move between them,
/// Enter or Space jumps to the focused row's step.
#[component]
pub fn SequenceDiagram(props: &SequenceDiagramProps) -> Html {
    let state = props.state.clone();
    // The scroll container's top (in steps of `SCROLL_STEP`) and height, read
    // from the box (see `place`).
    let scroll = use_state_eq(|| (0, 0));
    // The scroll container's width, once measured (on mount and on a resize).
    let measured = use_state_eq(|| 0);
    let scroll_box = use_node_ref();
    // The rows' group (its markup is set in one piece) and the rows' shared tooltip.
    let rows_group = use_node_ref();
    let tip = use_node_ref();
    let measure = {
        let (measured, scroll_box, scroll) = (measured.clone(), scroll_box.clone(), scroll.clone());
        move || {
            if let Some(element) = scroll_box.cast::<web_sys::Element>() {
                measured.set(element.client_width());
                scroll.set(place(&element));
            }
        }
    };
    #[cfg(target_arch = "wasm32")]
    {
        let (measure, rows_group, tip) = (measure.clone(), rows_group.clone(), tip.clone());
        use_effect_with((), move |_| {
            measure();
            let resize =
                gloo::events::EventListener::new(&gloo::utils::window(), "resize", move |_| {
                    measure()
                });
            // The row under the pointer (or focused) shows its time and label in one
            // tooltip shared by all rows (cheaper than a `<title>` in each).
            let tips: Vec<_> = rows_group
                .cast::<web_sys::Element>()
                .map(|group| {
                    ["mouseover", "mouseout", "focusin", "focusout"]
                        .into_iter()
                        .map(|kind| {
                            let tip = tip.clone();
                            gloo::events::EventListener::new(&group, kind, move |event| {
                                row_tip(&tip, event)
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            move || drop((resize, tips))
        });
    }
    let on_scroll = {
        let scroll = scroll.clone();
        Callback::from(move |event: Event| {
            let element: web_sys::Element = event.target_unchecked_into();
            scroll.set(place(&element));
        })
    };
    let session = state.session.get();
    let view = session.view();
    let box_width = if *measured > 0 {
        f64::from(*measured)
    } else {
        // Before the first measure: the centre column of a 1440 px window.
        578.0
    };
    let room = lanes_in(box_width);
    let pinned = match &state.selection {
        Selection::Node(id) => Some(id.as_str()),
        _ => None,
    };
    let clients = client_lanes(&view.nodes, room, pinned);
    let folded_lane = clients.shown.len();
    let leader_lane = folded_lane + usize::from(clients.folded > 0);
    let lane_count = leader_lane + 2;
    // A lane's index, and for a folded client its name.
    let lane_of = |id: &str| -> (usize, Option<&str>) {
        match id {
            "leader" => (leader_lane, None),
            "broker" => (leader_lane + 1, None),
            _ => match clients.shown.iter().position(|(lane, _)| lane == id) {
                Some(index) => (index, None),
                // A folded client's events name it.
                None => match (clients.folded > 0)
                    .then(|| node_name(&view.nodes, id))
                    .flatten()
                {
                    Some(name) => (folded_lane, Some(name)),
                    None => (leader_lane, None),
                },
            },
        }
    };
    // A folded diagram fits its box: its lanes narrow a little when the box
    // is not a whole number of lanes wide.
    let lane_width = if clients.folded > 0 {
        (box_width / lane_count as f64)
            .floor()
            .clamp(MIN_LANE_WIDTH, LANE_WIDTH)
    } else {
        LANE_WIDTH
    };
    let lane_x = |index: usize| lane_width * index as f64 + lane_width / 2.0;
    let width = lane_width * lane_count as f64;
    // Rows sit at their position in the whole diagram, shifted up by the
    // events left out. (The shift is in each row's coordinates, not a
    // transform on their group: when the window moves, by a whole window of
    // events, every drawn row is new anyway; while it stays, so do the rows.)
    let hidden = view.sequence_hidden;
    let shift = ROW_HEIGHT * hidden as f64;
    let (top, seen) = *scroll;
    let top = f64::from(top * SCROLL_STEP);
    // Until the rows overflow the box its full height is not known: it is
    // never taller than the window.
    let seen = if seen > 0 {
        f64::from(seen)
    } else {
        window_height()
    };
    let (from, to) = (top - OVERSCAN, top + seen + OVERSCAN);
    // One click handler for all rows: the row clicked names its step.
    let jump = {
        let state = state.dispatcher();
        Callback::from(move |event: MouseEvent| {
            if let Some(step) = row_step(&event) {
                state.dispatch(Action::Core(Command::JumpTo(step)));
            }
        })
    };
    // The keyboard path: ↑/↓ (and Home/End) move the tab stop between the drawn rows,
    // Enter/Space jumps to the focused row's step (focusing a row shows the tooltip).
    let keys = {
        let state = state.dispatcher();
        Callback::from(move |event: KeyboardEvent| {
            if let Some(step) = row_key(&event) {
                state.dispatch(Action::Core(Command::JumpTo(step)));
            }
        })
    };
    // A wrapped label makes its row taller by its extra lines, and moves the rows below it down.
    // The rows drawn are written as SVG markup and handed to the browser in one piece (the
    // group's `innerHTML`, after the render): at 200 nodes a step replaces every visible row,
    // and parsing them costs far less than building them element by element.
    let mut extra = 0.0;
    let mut rows = String::new();
    for (index, event) in view.sequence.iter().enumerate() {
        let index = hidden + index;
        let ((from_lane, from_name), (to_lane, to_name)) =
            (lane_of(&event.from), lane_of(&event.to));
        let (x1, x2) = (lane_x(from_lane), lane_x(to_lane));
        // An event of a folded client says whose it is (the label is built
        // only for the rows drawn and the labels that may wrap).
        let name = from_name.or(to_name);
        let label = || match name {
            Some(name) => std::borrow::Cow::Owned(format!("{name} {}", event.label)),
            None => std::borrow::Cow::Borrowed(event.label.as_str()),
        };
        let chars = event.label.chars().count() + name.map_or(0, |name| name.chars().count() + 1);
        // (A label that fits is not wrapped to count its lines.)
        let lines = if fits(chars, x1, x2, width) {
            1
        } else {
            place_label(&label(), x1, x2, width).2.len()
        };
        let grow = LINE_HEIGHT * (lines - 1) as f64;
        let y = HEAD_HEIGHT + ROW_HEIGHT * (index as f64 + 0.7) + extra + grow / 2.0 - shift;
        extra += grow;
        if (from..=to).contains(&y) {
            row_markup(
                &mut rows,
                event,
                index,
                &label(),
                x1,
                x2,
                y,
                width,
                event.step == view.step,
            );
        }
    }
    let height = HEAD_HEIGHT + ROW_HEIGHT * (view.sequence.len() as f64 + 1.0) + extra;
    // The SVG is drawn taller, to the next multiple of `CANVAS_STEP`, and cut to `height` by its
    // box: every `<text>` of an SVG is laid out again when the SVG's size changes, and the window
    // of events, so the diagram, grows at every step.
    let canvas = (height / CANVAS_STEP).ceil() * CANVAS_STEP;
    {
        // While the box shows the whole diagram its height is not yet its full
        // height: read it again after each change of rows until they overflow it.
        let (rows_group, unknown) = (rows_group.clone(), scroll.1 == 0);
        use_effect_with(rows, move |rows| {
            if let Some(group) = rows_group.cast::<web_sys::Element>() {
                // The new markup replaces a focused row: the row drawn for its event takes the focus back.
                let focused = gloo::utils::document()
                    .active_element()
                    .filter(|active| group.contains(Some(active)))
                    .and_then(|row| row.get_attribute("data-index"));
                group.set_inner_html(rows);
                give_stop(&group, focused.as_deref());
            }
            if unknown {
                measure();
            }
        });
    }
    let mut lanes = clients.shown;
    if clients.folded > 0 {
        lanes.push((String::new(), format!("+{} clients", clients.folded)));
    }
    lanes.push(("leader".into(), "leader".into()));
    lanes.push(("broker".into(), "eval broker".into()));
    html! {
        <section class="panel sequence" data-testid="sequence" aria-label="Sequence diagram">
            <h2 class="panel-title">{ "Sequence" }</h2>
            <div class="sequence-scroll" onscroll={on_scroll} ref={scroll_box}>
                <div class="seq-canvas" style={format!("height:{height}px")}>
                    <svg width={width.to_string()} height={canvas.to_string()} role="img"
                         aria-label={format!("sequence diagram with {} events", view.sequence.len())}>
                        <SeqLanes {lanes} {lane_width} height={canvas} />
                        <g onclick={jump} onkeydown={keys} ref={rows_group} />
                    </svg>
                </div>
            </div>
            <div class="seq-tip mono" role="tooltip" data-testid="seq-tip" hidden=true ref={tip} />
        </section>
    }
}

/// Where the diagram's box `element` is scrolled (in steps of
/// [`SCROLL_STEP`]) and how high it is; the height is 0 while the rows do
/// not overflow the box (it then shows them all, and its full height is not
/// known).
fn place(element: &web_sys::Element) -> (i32, i32) {
    let height = element.client_height();
    let full = element.scroll_height() > height;
    (
        element.scroll_top() / SCROLL_STEP,
        if full { height } else { 0 },
    )
}

/// The rows' tooltip `tip` on `event` (a pointer or focus entering or
/// leaving a row): on entering, it shows the row's accessible name below
/// and right of the pointer (or below the row); on leaving, it hides.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn row_tip(tip: &NodeRef, event: &Event) {
    use wasm_bindgen::JsCast;
    let Some(tip) = tip.cast::<web_sys::Element>() else {
        return;
    };
    let row = event_row(event);
    let entering = matches!(event.type_().as_str(), "mouseover" | "focusin");
    let Some(row) = row.filter(|_| entering) else {
        let _ = tip.set_attribute("hidden", "");
        return;
    };
    tip.set_text_content(row.get_attribute("aria-label").as_deref());
    let (x, y) = match event.dyn_ref::<MouseEvent>() {
        Some(mouse) => (
            f64::from(mouse.client_x()) + 12.0,
            f64::from(mouse.client_y()) + 16.0,
        ),
        None => {
            let rect = row.get_bounding_client_rect();
            (rect.left(), rect.bottom() + 4.0)
        }
    };
    let _ = tip.set_attribute("style", &format!("left:{x}px;top:{y}px"));
    let _ = tip.remove_attribute("hidden");
}

/// The browser window's inner height in pixels (1200 outside a browser).
pub fn window_height() -> f64 {
    #[cfg(target_arch = "wasm32")]
    if let Some(height) = gloo::utils::window()
        .inner_height()
        .ok()
        .and_then(|height| height.as_f64())
    {
        return height;
    }
    1200.0
}

/// Properties of [`SeqLanes`].
#[derive(Properties, PartialEq)]
struct SeqLanesProps {
    /// Lanes as `(id, name)`, left to right (the "+N clients" lane's ID is empty).
    lanes: Vec<(String, String)>,
    lane_width: f64,
    height: f64,
}

/// The lanes' heads and lines (re-drawn only when lanes or height change).
#[component]
fn SeqLanes(props: &SeqLanesProps) -> Html {
    let height = props.height.to_string();
    html! {
        { for props.lanes.iter().enumerate().map(|(index, (id, name))| {
            let x = (props.lane_width * index as f64 + props.lane_width / 2.0).to_string();
            // The "+N clients" lane has no ID.
            let (class, testid) = if id.is_empty() { ("lane lane-folded", "seq-lane-folded") } else { ("lane", "seq-lane") };
            html! {
                <g class={class} data-testid={testid}>
                    <text class="lane-head" x={x.clone()} y="18" text-anchor="middle">{ name }</text>
                    <line class="lane-line" x1={x.clone()} y1={HEAD_HEIGHT.to_string()} x2={x} y2={height.clone()} />
                </g>
            }
        }) }
    }
}

/// Width of one character of the diagram's 11 px monospace font, rounded
/// up (bold is as wide in a monospace font).
const CHAR_WIDTH: f64 = 6.8;
/// Height of one line of a wrapped label.
const LINE_HEIGHT: f64 = 12.0;
/// Space kept between a label and the diagram's edge.
const EDGE: f64 = 4.0;

/// Where a label goes: its anchor point, `text-anchor`, and its lines (a
/// label wider than the room it has is wrapped at spaces). A note's label
/// sits beside its lane, on the side with more room; an arrow's is centred
/// over the arrow, pushed back inside the diagram when it would cross an edge.
fn place_label(label: &str, x1: f64, x2: f64, width: f64) -> (f64, &'static str, Vec<String>) {
    let (x, anchor, per_line) = label_anchor(label.chars().count(), x1, x2, width);
    (x, anchor, wrap(label, per_line))
}

/// Where [`place_label`] anchors a label of `chars` characters, and how
/// many characters its lines hold.
fn label_anchor(chars: usize, x1: f64, x2: f64, width: f64) -> (f64, &'static str, usize) {
    let chars = chars as f64;
    let (x, anchor, room) = if x1 == x2 {
        let left = x1 - 8.0 - EDGE;
        let right = width - x1 - 8.0 - EDGE;
        if right >= chars * CHAR_WIDTH || right >= left {
            (x1 + 8.0, "start", right)
        } else {
            (x1 - 8.0, "end", left)
        }
    } else {
        let centre = (x1 + x2) / 2.0;
        let half = chars * CHAR_WIDTH / 2.0;
        if centre - half < EDGE {
            (EDGE, "start", width - 2.0 * EDGE)
        } else if centre + half > width - EDGE {
            (width - EDGE, "end", width - 2.0 * EDGE)
        } else {
            (centre, "middle", width)
        }
    };
    let per_line = ((room / CHAR_WIDTH).floor() as usize).max(12);
    (x, anchor, per_line)
}

/// Whether a label of `chars` characters fits on one line wherever
/// [`place_label`] puts it (a cheap test before wrapping).
fn fits(chars: usize, x1: f64, x2: f64, width: f64) -> bool {
    let wide = chars as f64 * CHAR_WIDTH;
    if x1 == x2 {
        wide <= (x1 - 8.0 - EDGE).max(width - x1 - 8.0 - EDGE)
    } else {
        wide <= width - 2.0 * EDGE
    }
}

/// The name of the client `id` of `nodes` (in ID order, as the view lists them).
fn node_name<'a>(nodes: &'a [Rc<NodeView>], id: &str) -> Option<&'a str> {
    let index = nodes
        .binary_search_by(|node| node.id.as_str().cmp(id))
        .ok()
        .or_else(|| nodes.iter().position(|node| node.id == id))?;
    Some(nodes[index].name.as_str())
}

/// Splits `text` into lines of at most `per_line` characters, at spaces
/// where it can (a longer word is cut).
fn wrap(text: &str, per_line: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        if len > 0 && len + 1 + word.len() <= per_line {
            line.push(' ');
            line.extend(&word);
            len += 1 + word.len();
            continue;
        }
        if len > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > per_line {
            let rest = word.split_off(per_line);
            lines.push(word.into_iter().collect());
            word = rest;
        }
        len = word.len();
        line = word.into_iter().collect();
    }
    lines.push(line);
    lines
}

/// Gives the diagram's one tab stop (`tabindex="0"`; every row is drawn
/// with `-1`) to the row drawn for the event `data-index="{focused}"`, the
/// row that had the focus before the rows were replaced, and the focus with
/// it; else (or when that row is not drawn) to the current step's row, else
/// to the first row.
fn give_stop(group: &web_sys::Element, focused: Option<&str>) {
    let find = |selector: &str| group.query_selector(selector).ok().flatten();
    let row = focused
        .and_then(|index| find(&format!(r#"[data-index="{index}"]"#)))
        .or_else(|| find(".current"))
        .or_else(|| group.first_element_child());
    if let Some(row) = row {
        let _ = row.set_attribute("tabindex", "0");
        if focused.is_some() {
            focus(&row);
        }
    }
}

/// Focuses an element (`focus` is the same method on SVG and HTML elements).
fn focus(element: &web_sys::Element) {
    use wasm_bindgen::JsCast;
    let _ = element.unchecked_ref::<web_sys::HtmlElement>().focus();
}

/// A key pressed on a focused row: ↑/↓ move the focus and the tab stop to
/// the row drawn above or below (Home/End: the first or last drawn), and
/// Enter or Space gives the row's step to jump to.
fn row_key(event: &KeyboardEvent) -> Option<usize> {
    let row = event_row(event)?;
    let next = match event.key().as_str() {
        "Enter" | " " => {
            event.prevent_default();
            return row_step(event);
        }
        "ArrowDown" => row.next_element_sibling(),
        "ArrowUp" => row.previous_element_sibling(),
        "Home" => row.parent_element()?.first_element_child(),
        "End" => row.parent_element()?.last_element_child(),
        _ => return None,
    };
    event.prevent_default();
    if let Some(next) = next {
        let _ = row.set_attribute("tabindex", "-1");
        let _ = next.set_attribute("tabindex", "0");
        focus(&next);
    }
    None
}

/// The diagram row (`[data-step]`) an event happened in.
fn event_row(event: &Event) -> Option<web_sys::Element> {
    use wasm_bindgen::JsCast;
    let target = event.target()?.dyn_into::<web_sys::Element>().ok()?;
    target.closest("[data-step]").ok()?
}

/// The step named by the row an event happened in (`data-step`).
fn row_step(event: &Event) -> Option<usize> {
    event_row(event)?.get_attribute("data-step")?.parse().ok()
}

/// Escapes text for SVG markup (content and attribute values).
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

/// A label's `<text>`: one line, or one `<tspan>` per line of a wrapped
/// label, centred on `y`.
fn label_markup(out: &mut String, label: &str, x1: f64, x2: f64, y: f64, width: f64) {
    let chars = label.chars().count();
    let (x, anchor, per_line) = label_anchor(chars, x1, x2, width);
    // A label that fits its line stays one line: no need to wrap it.
    let lines = if chars <= per_line {
        None
    } else {
        Some(wrap(label, per_line)).filter(|lines| lines.len() > 1)
    };
    // A wrapped label's first line sits above `y` by half its other lines.
    let first = match &lines {
        Some(lines) => y - LINE_HEIGHT * (lines.len() - 1) as f64 / 2.0,
        None => y,
    };
    coords(out, &[("<text x=\"", x), ("\" y=\"", first)]);
    out.push_str("\" text-anchor=\"");
    out.push_str(anchor);
    out.push_str("\">");
    match lines {
        None => escape_into(out, label),
        Some(lines) => {
            for (i, line) in lines.iter().enumerate() {
                let dy = if i == 0 { 0.0 } else { LINE_HEIGHT };
                coords(out, &[("<tspan x=\"", x), ("\" dy=\"", dy)]);
                out.push_str("\">");
                escape_into(out, line);
                out.push_str("</tspan>");
            }
        }
    }
    out.push_str("</text>");
}

/// Writes each `(text, value)` of `parts` as the text, then the value as a
/// [`coord`]: the markup of a run of coordinate attributes.
fn coords(out: &mut String, parts: &[(&str, f64)]) {
    for &(text, value) in parts {
        out.push_str(text);
        coord(out, value);
    }
}

/// Writes a coordinate of the markup, to the hundredth of a pixel (`40`,
/// `36.5`, `48.2`): formatting floats in full cost more than the rest of a
/// row, and wrote rounding noise (`48.20000000000073`).
fn coord(out: &mut String, value: f64) {
    use std::fmt::Write;
    let hundredths = (value * 100.0).round() as i64;
    if hundredths < 0 {
        out.push('-');
    }
    let hundredths = hundredths.unsigned_abs();
    let _ = write!(out, "{}", hundredths / 100);
    match hundredths % 100 {
        0 => {}
        frac if frac % 10 == 0 => {
            let _ = write!(out, ".{}", frac / 10);
        }
        frac => {
            let _ = write!(out, ".{frac:02}");
        }
    }
}

/// One arrow (or a note on one lane) of the diagram, as SVG markup; clicking
/// it jumps to its step.
#[allow(clippy::too_many_arguments)]
fn row_markup(
    out: &mut String,
    event: &SeqEventView,
    index: usize,
    label: &str,
    x1: f64,
    x2: f64,
    y: f64,
    width: f64,
    current: bool,
) {
    use std::fmt::Write;
    let _ = write!(
        out,
        r#"<g class="seq-event seq-{}{}" data-testid="seq-event" data-step="{}" data-index="{index}" tabindex="-1" role="button" aria-label=""#,
        event.kind,
        if current { " current" } else { "" },
        event.step
    );
    escape_into(out, &event.time);
    out.push(' ');
    escape_into(out, label);
    out.push_str(r#"">"#);
    if x1 == x2 {
        coords(out, &[("<circle cx=\"", x1), ("\" cy=\"", y)]);
        out.push_str("\" r=\"4\"/>");
        label_markup(out, label, x1, x2, y + 4.0, width);
    } else {
        // The shaft and the head in one path (one element less per row than
        // a line and a polygon; a shared `marker-end` head costs more paint
        // per row). The head is the path's only closed part, so the only one
        // filled; it is drawn half a pixel inside the 7 × 8 px head, which
        // its stroke (1.2 px, round joins) grows back to.
        let direction = if x2 > x1 { -1.0 } else { 1.0 };
        let (point, base) = (x2 + 0.5 * direction, x2 + 6.5 * direction);
        coords(
            out,
            &[
                ("<path d=\"M", x1),
                (" ", y),
                ("H", x2),
                ("M", point),
                (" ", y),
                ("L", base),
                (" ", y - 3.5),
                ("L", base),
                (" ", y + 3.5),
            ],
        );
        out.push_str("Z\"/>");
        label_markup(out, label, x1, x2, y - 4.0, width);
    }
    out.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_svg_markup_with_its_text_escaped_and_its_step() {
        let event = SeqEventView {
            step: 7,
            time: "t=1.000s".into(),
            from: "a".into(),
            to: "b".into(),
            label: "x <y> & \"z\"".into(),
            kind: "call".into(),
        };
        let mut out = String::new();
        row_markup(
            &mut out,
            &event,
            12,
            &event.label,
            75.0,
            225.0,
            40.0,
            600.0,
            true,
        );
        assert!(
            out.starts_with(
                r#"<g class="seq-event seq-call current" data-testid="seq-event" data-step="7" data-index="12" tabindex="-1""#
            ),
            "{out}"
        );
        assert!(
            out.contains(r#"aria-label="t=1.000s x &lt;y&gt; &amp; &quot;z&quot;""#),
            "{out}"
        );
        assert!(
            out.contains(r#"<path d="M75 40H225M224.5 40L218.5 36.5L218.5 43.5Z"/>"#),
            "{out}"
        );
        assert!(out.ends_with("</text></g>"), "{out}");
        assert!(!out.contains("<title>"), "{out}");
    }

    #[test]
    fn coordinates_are_written_to_the_hundredth() {
        let written = |value: f64| {
            let mut out = String::new();
            coord(&mut out, value);
            out
        };
        assert_eq!(written(40.0), "40");
        assert_eq!(written(36.5), "36.5");
        assert_eq!(written(48.20000000000073), "48.2");
        assert_eq!(written(112.25), "112.25");
        assert_eq!(written(0.04), "0.04");
        assert_eq!(written(-17.8), "-17.8");
        assert_eq!(written(-0.001), "0");
    }

    #[test]
    fn a_label_that_fits_is_one_text_and_a_long_one_wraps_into_lines() {
        let mut out = String::new();
        label_markup(&mut out, "link down", 75.0, 75.0, 40.0, 600.0);
        assert_eq!(
            out,
            r#"<text x="83" y="40" text-anchor="start">link down</text>"#
        );
        let label = "✕ operator Deployment.Promote: 1 error occurred: * Task group \"web\" has 0/1 healthy allocations";
        let mut out = String::new();
        label_markup(&mut out, label, 375.0, 375.0, 40.0, 600.0);
        assert!(!fits(label.chars().count(), 375.0, 375.0, 600.0));
        let lines = place_label(label, 375.0, 375.0, 600.0).2.len();
        assert_eq!(out.matches("<tspan").count(), lines, "{out}");
        assert!(out.starts_with(r#"<text x="367" y="#), "{out}");
    }

    #[test]
    fn a_folded_client_is_named_from_the_node_list() {
        let nodes = nodes(20);
        assert_eq!(node_name(&nodes, "id-013"), Some("node-013"));
        assert_eq!(node_name(&nodes, "id-999"), None);
        // Out of order, the name is still found.
        let mut shuffled = nodes.clone();
        shuffled.swap(2, 17);
        assert_eq!(node_name(&shuffled, "id-017"), Some("node-017"));
    }

    fn nodes(count: usize) -> Vec<Rc<NodeView>> {
        (0..count)
            .map(|i| {
                Rc::new(NodeView {
                    id: format!("id-{i:03}"),
                    name: format!("node-{i:03}"),
                    status: "ready".into(),
                    link_up: true,
                    ..NodeView::default()
                })
            })
            .collect()
    }

    #[test]
    fn up_to_the_fold_every_client_has_a_lane() {
        let lanes = client_lanes(&nodes(FOLD_ABOVE), 3, None);
        assert_eq!(lanes.shown.len(), FOLD_ABOVE);
        assert_eq!(lanes.folded, 0);
        // A wide diagram gives a lane to every client it has room for.
        let lanes = client_lanes(&nodes(12), 14, None);
        assert_eq!((lanes.shown.len(), lanes.folded), (12, 0));
    }

    #[test]
    fn past_the_fold_the_pinned_then_the_troubled_clients_keep_their_lanes() {
        let mut nodes = nodes(200);
        Rc::make_mut(&mut nodes[150]).link_up = false;
        Rc::make_mut(&mut nodes[20]).status = "disconnected".into();
        // Seven lanes: leader, broker, "+N clients" and four clients.
        let lanes = client_lanes(&nodes, 7, Some("id-199"));
        let ids: Vec<&str> = lanes.shown.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["id-000", "id-020", "id-150", "id-199"]);
        assert_eq!(lanes.shown[0].1, "node-000");
        assert_eq!(lanes.folded, 196);
        // However narrow, one client keeps a lane.
        let lanes = client_lanes(&nodes, lanes_in(200.0), None);
        assert_eq!(lanes.shown.len(), 1);
        assert_eq!(lanes.folded, 199);
        assert_eq!(lanes_in(600.0), 4);
    }

    #[test]
    fn a_short_label_stays_on_one_line() {
        assert_eq!(wrap("reconcile 1234abcd", 40), vec!["reconcile 1234abcd"]);
    }

    #[test]
    fn a_long_label_wraps_at_spaces_and_cuts_long_words() {
        assert_eq!(
            wrap("✕ operator Deployment.Promote: 1 error occurred", 20),
            vec!["✕ operator", "Deployment.Promote:", "1 error occurred"]
        );
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
    }

    #[test]
    fn a_note_on_the_last_lane_is_placed_left_of_it() {
        // Four lanes of 150 px: the broker's lane is at 525 of 600.
        let (x, anchor, lines) = place_label(
            "reconcile 1234abcd job-register → complete",
            525.0,
            525.0,
            600.0,
        );
        assert_eq!((x, anchor), (517.0, "end"));
        assert_eq!(lines.len(), 1);
        // A note on the first lane goes right.
        let (x, anchor, _) = place_label("link down", 75.0, 75.0, 600.0);
        assert_eq!((x, anchor), (83.0, "start"));
    }

    #[test]
    fn a_label_too_long_for_its_side_wraps_within_the_diagram() {
        let label = "✕ operator Deployment.Promote: 1 error occurred: * Task group \"web\" has 0/1 healthy allocations";
        let (x, anchor, lines) = place_label(label, 375.0, 375.0, 600.0);
        assert_eq!((x, anchor), (367.0, "end"));
        assert!(lines.len() > 1);
        for line in &lines {
            assert!(
                line.chars().count() as f64 * CHAR_WIDTH <= 367.0 - EDGE,
                "{line}"
            );
        }
    }

    #[test]
    fn an_arrow_label_near_the_edge_is_pushed_inside() {
        let (x, anchor, _) = place_label(
            "◆ 108c40a9 deployment-watcher and more",
            450.0,
            525.0,
            600.0,
        );
        assert_eq!((x, anchor), (596.0, "end"));
        let (x, anchor, _) = place_label("short", 75.0, 225.0, 600.0);
        assert_eq!((x, anchor), (150.0, "middle"));
    }
}
