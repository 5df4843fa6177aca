//! The grid's body as HTML: every row, cell and block of the week (or
//! day), written as one string on the server and taken as it is by the
//! browser. A week with 500 bookings has 1 344 cells and 500 blocks; drawn
//! as views, each cell a tree of type-erased attributes and handlers that
//! the server resolved one by one, the week took ~65 ms of CPU, and its
//! p99 was 106 ms; written so, the whole page's p99 is 45 ms
//! (docs/benchmarks.md). The grid listens on its table for what happens
//! in a cell (`grid`) and marks the selection, a move's target and the
//! focus on the cells themselves.

use super::keys::{cell_id, Focus};
use crate::model::{BlockOwner, CalendarBlock, CalendarData, Movable, UsedBar};
use chrono::{DateTime, Duration, Utc};
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use leptos::prelude::{SetValue, StoredValue, WithValue};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// What a cell's handlers need to know of it.
#[derive(Clone, Copy)]
pub(super) struct CellFacts {
    pub at: DateTime<Utc>,
    /// A press here starts a selection.
    pub bookable: bool,
    /// One's own booking under this slot that may still move.
    pub own: Option<Movable>,
    /// That booking's lower edge (the resize handle) is in this slot.
    pub edge: bool,
}

pub(super) fn facts(data: &CalendarData, (d, k, i): Focus, step: Duration) -> Option<CellFacts> {
    let slot = data.days.get(d)?.slots.get(i)?;
    let cell = data.cells.get(d)?.get(k)?.get(i)?;
    let at = slot.start;
    let own = data.movable.iter().find(|m| m.kind == k && m.start <= at && at < m.end).copied();
    Some(CellFacts { at, bookable: slot.bookable && cell.free > 0, own, edge: own.is_some_and(|m| m.end <= at + step) })
}

/// The body last written and what it was written from, kept by the page:
/// the server builds the calendar's view twice a request (`data::Shared`),
/// and the same data with the same focus writes the same body.
#[derive(Clone, Copy)]
pub(super) struct Written(StoredValue<Option<Drawn>>);

/// A body, and the data and focus it was written from.
type Drawn = (Arc<CalendarData>, Focus, Arc<str>);

impl Written {
    pub fn new() -> Self {
        Self(StoredValue::new(None))
    }

    /// `body`, written once for each data and focus.
    pub fn body(self, data: &Arc<CalendarData>, step: Duration, focus: Focus) -> Arc<str> {
        let kept = self.0.with_value(|written| {
            written.as_ref().filter(|(d, f, _)| Arc::ptr_eq(d, data) && *f == focus).map(|(_, _, body)| body.clone())
        });
        kept.unwrap_or_else(|| {
            let body: Arc<str> = body(data, step, focus).into();
            self.0.set_value(Some((data.clone(), focus, body.clone())));
            body
        })
    }
}

/// The `<tbody>`'s rows; `focus` is the cell the keyboard starts on.
pub(super) fn body(data: &CalendarData, step: Duration, focus: Focus) -> String {
    // Each cell's blocks, found once rather than by a scan per cell.
    let mut starting = HashMap::<Focus, Vec<&CalendarBlock>>::new();
    for b in &data.blocks {
        starting.entry((b.day, b.kind, b.slot)).or_default().push(b);
    }
    let rows = data.days.iter().map(|d| d.slots.len()).max().unwrap_or(0);
    let mut out = String::with_capacity(rows * data.days.len() * data.kinds.len() * 200 + data.blocks.len() * 400);
    for i in 0..rows {
        let label = data.days.iter().find_map(|d| d.slots.get(i)).map(|s| s.label.as_str()).unwrap_or_default();
        let hour_start = label.ends_with(":00");
        out.push_str(if hour_start { r#"<tr class="hour">"# } else { "<tr>" });
        // Every row is named for screen readers; only the hours show.
        let shown = if hour_start || i == 0 { "" } else { r#" class="visually-hidden""# };
        let _ = write!(out, r#"<th scope="row" class="time"><span{shown}>{}</span></th>"#, text(label));
        for d in 0..data.days.len() {
            for k in 0..data.kinds.len() {
                let here = starting.get(&(d, k, i)).map(Vec::as_slice).unwrap_or_default();
                cell(&mut out, data, (d, k, i), here, step, focus);
            }
        }
        out.push_str("</tr>");
    }
    out
}

fn cell(out: &mut String, data: &CalendarData, at: Focus, here: &[&CalendarBlock], step: Duration, focus: Focus) {
    let (d, k, i) = at;
    let (Some(cell), Some(facts)) = (data.cells[d][k].get(i), facts(data, at, step)) else {
        out.push_str(r#"<td class="slot gap"></td>"#);
        return;
    };
    let (day, slot, lane) = (&data.days[d], &data.days[d].slots[i], &data.kinds[k]);
    let now_at = now_line(slot.start, step, data.now);
    // The cell in words: its name, and its tooltip on hover and focus
    // (`style/_calendar.scss`).
    let mut words = format!("{} {}, {}: {} of {} free", day.label, slot.label, lane.short, cell.free, lane.capacity);
    match (&cell.blackout, cell.mine > 0) {
        (Some(reason), _) => {
            let _ = write!(words, ", closed for maintenance: {reason}");
        }
        (None, true) => {
            let _ = write!(words, ", yours: {}", cell.mine);
        }
        (None, false) => {}
    }
    if now_at.is_some() {
        words.push_str(", now");
    }
    let _ = write!(out, r#"<td id="{}""#, cell_id(d, k, i));
    // A cell where bookings start is named by its content: its words, then
    // each block's (an aria-label would hide the blocks' visible text from
    // the name); the others by an aria-label.
    let named = here.iter().any(|b| b.owner != BlockOwner::Maintenance);
    if !named {
        let _ = write!(out, r#" aria-label="{}""#, attr(&words));
    }
    let _ = write!(
        out,
        r#" aria-selected="false" tabindex="{}" class="slot free-{}{}{}{}{}{}">"#,
        if focus == at { 0 } else { -1 },
        level(cell.free, lane.capacity),
        if cell.blackout.is_some() { " blackout" } else { "" },
        if slot.bookable { "" } else { " past" },
        if cell.mine > 0 { " mine" } else { "" },
        // Where in the slot the line runs, as a class (the site's CSP
        // refuses inline styles): 5 % steps.
        now_at.map(|at| format!(" now now-at-{}", at / 5 * 5)).unwrap_or_default(),
        if facts.own.is_some() { " movable" } else { "" },
    );
    if named {
        let _ = write!(out, r#"<span class="cell-words">{}</span>"#, text(&words));
    }
    for b in here {
        block(out, b, &lane.short);
    }
    if facts.edge {
        out.push_str(r#"<span class="resize-handle" title="Drag to change the end" aria-hidden="true"></span>"#);
    }
    out.push_str("</td>");
}

/// A booking (or maintenance window) drawn from its first slot of the day
/// down, as tall as the slots it covers (a class per count: the site's CSP
/// refuses inline styles), beside the blocks it overlaps. It lets the
/// pointer through to the cells under it, but for its link: a press on
/// one's own booking starts its move there, and a press beside a block
/// selects. `short` names its lane's kind. What the block shows is what
/// its cell's name says of it, each once.
fn block(out: &mut String, b: &CalendarBlock, short: &str) {
    let class = format!(
        "block {}{} span-{} cols-{} col-{}{}{}",
        match b.owner {
            BlockOwner::Mine => "mine",
            BlockOwner::Others => "others",
            BlockOwner::Maintenance => "maintenance",
        },
        match b.state.as_str() {
            "pending" => " waiting",
            "completed" => " over",
            _ => "",
        },
        b.slots.min(MOST_SLOTS),
        b.columns,
        b.column,
        if b.continued { " continued" } else { "" },
        if b.continues { " continues" } else { "" },
    );
    let (whole, what) = (b.text(short), b.what(short));
    let _ = write!(out, r#"<div class="{}" title="{}""#, attr(&class), attr(&whole));
    if b.owner == BlockOwner::Maintenance {
        // Its reason is already in the cell's words.
        let _ = write!(
            out,
            r#" aria-hidden="true"><strong class="block-label">{}</strong><span class="block-what">{}</span></div>"#,
            text(b.who()),
            text(&what)
        );
        return;
    }
    // "; " parts it from the cell's words and from the blocks before it.
    out.push_str(r#"><span class="visually-hidden">; </span>"#);
    match b.booking {
        // Its link is named by the whole text (the note is its title); the
        // line under it repeats part of that name, so only eyes read it.
        Some(id) => {
            let title = b.note.as_deref().unwrap_or(b.who());
            let who = if b.note.is_some() { format!("{} · ", b.who()) } else { String::new() };
            let _ = write!(
                out,
                r#"<a class="block-label" href="/bookings/{id}" aria-label="{}"><strong>{}</strong></a><span class="block-what" aria-hidden="true">{}{}</span>"#,
                attr(&whole),
                text(title),
                text(&who),
                text(&what)
            );
        }
        None => {
            let _ = write!(
                out,
                r#"<strong class="block-label">{}</strong><span class="block-what">{}</span>"#,
                text(b.who()),
                text(&what)
            );
        }
    }
    if let Some(bar) = &b.used {
        used_bar(out, bar);
    }
    out.push_str("</div>");
}

/// Taller blocks than this are drawn this tall (a day of 5-minute slots);
/// `style/_calendar.scss` has a class for each count up to it.
const MOST_SLOTS: usize = 288;

/// A thin bar: the share of the booked time really used, in 5 % steps as
/// a class, marked when booked units sit idle now. Its words are said once,
/// hidden from eyes; the bar itself is hidden from assistive technology.
fn used_bar(out: &mut String, bar: &UsedBar) {
    let words = bar.text();
    let _ = write!(
        out,
        r#"<span class="visually-hidden">; {}</span><span class="used-bar{}{}" aria-hidden="true" title="{}"><span class="used-fill fill-{}"></span></span>"#,
        text(&words),
        if bar.idle_units > 0 { " idle" } else { "" },
        if bar.who.is_some() { " others" } else { "" },
        attr(&words),
        u32::from(bar.pct) / 5 * 5
    );
}

/// Where "now" falls inside a slot starting at `start`, in percent of its
/// height; `None` when it falls outside (the week view's red line).
fn now_line(start: DateTime<Utc>, step: Duration, now: DateTime<Utc>) -> Option<i64> {
    let into = now - start;
    (into >= Duration::zero() && into < step).then(|| into.num_seconds() * 100 / step.num_seconds().max(1))
}

/// How full a cell's lane is drawn: "all" free, "ok" (some booked),
/// "low" (a quarter or less free), or "none".
fn level(free: i32, capacity: i32) -> &'static str {
    if free <= 0 {
        "none"
    } else if free >= capacity {
        "all"
    } else if free * 4 <= capacity {
        "low"
    } else {
        "ok"
    }
}
