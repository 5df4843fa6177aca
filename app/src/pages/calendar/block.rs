//! One block on the week or day grid: a booking or a maintenance window,
//! from its first slot of the day down, with its used-time bar.

use crate::model::{BlockOwner, CalendarBlock};
use leptos::prelude::*;

/// A booking (or maintenance window) drawn from its first slot of the day
/// down, as tall as the slots it covers (a class per count: the site's CSP
/// refuses inline styles), beside the blocks it overlaps. It lets the
/// pointer through to the cells under it, but for its link: a press on
/// one's own booking starts its move there, and a press beside a block
/// selects. `short` names its lane's kind.
///
/// The cell under its top is named by its content, so what the block shows
/// is what the cell's name says of it, each once: a week with 500 bookings
/// is drawn in every request, and its size is its render time.
pub(super) fn block(b: &CalendarBlock, short: &str) -> impl IntoView {
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
    let text = b.text(short);
    let what = b.what(short);
    if b.owner == BlockOwner::Maintenance {
        // Its reason is already in the cell's words.
        return view! {
            <div class=class title=text aria-hidden="true">
                <strong class="block-label">{b.who().to_string()}</strong>
                <span class="block-what">{what}</span>
            </div>
        }
        .into_any();
    }
    // "; " parts it from the cell's words and from the blocks before it.
    let used = b.used.as_ref().map(|bar| {
        view! { <span class="visually-hidden">"; "{bar.text()}</span>{used_bar(bar)} }
    });
    match b.booking {
        // Its link is named by the whole text (the note is its title); the
        // line under it repeats part of that name, so only eyes read it.
        Some(id) => {
            let title = b.note.clone().unwrap_or_else(|| b.who().to_string());
            let who = b.note.is_some().then(|| format!("{} · ", b.who()));
            let label = text.clone();
            view! {
                <div class=class title=text>
                    <span class="visually-hidden">"; "</span>
                    <a class="block-label" href=format!("/bookings/{id}") aria-label=label><strong>{title}</strong></a>
                    <span class="block-what" aria-hidden="true">{who}{what}</span>
                    {used}
                </div>
            }
            .into_any()
        }
        None => view! {
            <div class=class title=text>
                <span class="visually-hidden">"; "</span>
                <strong class="block-label">{b.who().to_string()}</strong>
                <span class="block-what">{what}</span>
                {used}
            </div>
        }
        .into_any(),
    }
}

/// Taller blocks than this are drawn this tall (a day of 5-minute slots);
/// `style/calendar.scss` has a class for each count up to it.
const MOST_SLOTS: usize = 288;

/// A thin bar: the share of the booked time really used, in 5 % steps as
/// a class (the site's CSP refuses inline styles), marked when booked
/// units sit idle now. Its words are in the cell's name; the bar itself is
/// hidden from assistive technology rather than said twice.
fn used_bar(bar: &crate::model::UsedBar) -> impl IntoView {
    let class = format!(
        "used-bar{}{}",
        if bar.idle_units > 0 { " idle" } else { "" },
        if bar.who.is_some() { " others" } else { "" }
    );
    view! {
        <span class=class aria-hidden="true" title=bar.text()>
            <span class=format!("used-fill fill-{}", u32::from(bar.pct) / 5 * 5)></span>
        </span>
    }
}
