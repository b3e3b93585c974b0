//! A virtualised list of fixed-pitch rows (the dense cluster and the call
//! dock above `DENSE_ABOVE` nodes): the rows sit at fixed places in a box as
//! tall as all of them, and only those in and near view are drawn.

use std::ops::Range;
use yew::prelude::*;

/// Where a virtualised list is scrolled, read from its scroll box (the
/// element behind the returned ref, which gets the returned scroll
/// handler): on each scroll event, when the list starts being virtualised
/// (`active`) and after each window resize, so the rows drawn follow the
/// box's height, not the one it had at the last scroll. (Above
/// `DENSE_ABOVE` nodes the rows always overflow the box, so its
/// `clientHeight` is its full height.)
#[hook]
pub fn use_row_window(rows: RowWindow, active: bool) -> (Scrolled, NodeRef, Callback<Event>) {
    let scrolled = use_state_eq(|| (0, 0));
    let scroll_box = use_node_ref();
    {
        let (scrolled, scroll_box) = (scrolled.clone(), scroll_box.clone());
        use_effect_with(active, move |&active| {
            let note = move || {
                if let Some(element) = scroll_box.cast::<web_sys::Element>() {
                    scrolled.set(rows.place(&element));
                }
            };
            let listener = active.then(|| {
                note();
                gloo::events::EventListener::new(&gloo::utils::window(), "resize", move |_| note())
            });
            move || drop(listener)
        });
    }
    let on_scroll = rows.on_scroll(scrolled.clone());
    (*scrolled, scroll_box, on_scroll)
}

/// How one list is laid out.
#[derive(Debug, Clone, Copy)]
pub struct RowWindow {
    /// The distance between two rows, in pixels (as style.css draws them).
    pub pitch: i32,
    /// Rows drawn beyond the visible ones, above and below.
    pub overscan: i32,
    /// The scroll position is noted in steps of this many rows (a re-render
    /// each time it crosses one); at most `overscan`.
    pub step: i32,
}

/// The scrolled-to place of a list: its first visible row in steps of
/// [`RowWindow::step`] and how many rows it shows (0 before the first
/// scroll event).
pub type Scrolled = (i32, i32);

impl RowWindow {
    /// The scroll handler that notes where `scrolled` is.
    fn on_scroll(self, scrolled: UseStateHandle<Scrolled>) -> Callback<Event> {
        Callback::from(move |event: Event| {
            let element: web_sys::Element = event.target_unchecked_into();
            scrolled.set(self.place(&element));
        })
    }

    /// Where the scroll box `element` is scrolled, and how many rows it shows.
    fn place(self, element: &web_sys::Element) -> Scrolled {
        (
            element.scroll_top() / self.pitch / self.step,
            element.client_height() / self.pitch + 1,
        )
    }

    /// The rows to draw out of `len`, given where the list is scrolled and
    /// how many rows show before the first scroll event.
    pub fn range(self, (first, seen): Scrolled, unscrolled_seen: i32, len: usize) -> Range<usize> {
        let seen = if seen > 0 { seen } else { unscrolled_seen };
        let from = usize::try_from(first * self.step - self.overscan).unwrap_or(0);
        let to = usize::try_from((first * self.step + seen + self.overscan).max(0))
            .unwrap_or(0)
            .min(len);
        from.min(to)..to
    }

    /// The place of row `index` from the list's top, in pixels.
    pub fn top(self, index: usize) -> i32 {
        index as i32 * self.pitch
    }

    /// The style that makes the list as tall as `len` rows.
    pub fn height(self, len: usize) -> String {
        format!("height: {}px", self.top(len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: RowWindow = RowWindow {
        pitch: 40,
        overscan: 4,
        step: 2,
    };

    #[test]
    fn the_range_covers_the_visible_rows_and_the_overscan_within_the_list() {
        // Before any scroll: from the top, the guessed rows and the overscan.
        assert_eq!(W.range((0, 0), 8, 200), 0..12);
        // Scrolled to row 20 (step 10), 5 rows showing.
        assert_eq!(W.range((10, 5), 8, 200), 16..29);
        // Near the end, cut at the list's length; past it, empty.
        assert_eq!(W.range((99, 5), 8, 200), 194..200);
        assert_eq!(W.range((150, 5), 8, 200), 200..200);
        assert_eq!(W.height(3), "height: 120px");
    }
}
