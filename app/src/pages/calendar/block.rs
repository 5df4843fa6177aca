//! One block on the week or day grid: a booking or a maintenance window,
//! from its first slot of the day down, with its used-time bar.

use crate::model::{BlockOwner, CalendarBlock};
use leptos::prelude::*;

/// A booking (or maintenance window) drawn from its first slot of the day
/// down, as tall as the slots it covers (a class per count: the site's CSP
/// refuses inline styles), beside the blocks it overlaps. It lets the
/// pointer through to the cells under it, but for its link: a press on
/// one's own booking starts its move there, and a press beside a block
/// selects. What it says is also in the cell's name, so the block itself
/// is hidden from assistive technology but for its link.
pub(super) fn block(b: &CalendarBlock) -> impl IntoView {
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
    let text = b.text();
    // What the cell's name hears of it (maintenance is in the cell's words).
    let heard = (b.owner != BlockOwner::Maintenance).then(|| {
        let used = b.used.as_ref().map(|bar| format!("; {}", bar.text())).unwrap_or_default();
        match b.booking {
            Some(_) => (String::from("; "), used),
            None => (format!("; {text}"), used),
        }
    });
    let (before, after) = heard.unzip();
    let title = match &b.note {
        Some(note) => view! { <strong class="block-title">{note.clone()}</strong> }.into_any(),
        None => view! { <strong class="block-title">{b.who.clone()}</strong> }.into_any(),
    };
    let who = b.note.is_some().then(|| format!("{} · ", b.who));
    let head = match b.booking {
        Some(id) => view! { <a class="block-label" href=format!("/bookings/{id}") aria-label=text.clone()>{title}</a> }
            .into_any(),
        None => view! { <span class="block-label" aria-hidden="true">{title}</span> }.into_any(),
    };
    view! {
        <div class=class title=text>
            {before.map(|t| view! { <span class="visually-hidden">{t}</span> })}
            {head}
            <span class="block-what" aria-hidden="true">{who}{b.what.clone()}</span>
            {after.map(|t| view! { <span class="visually-hidden">{t}</span> })}
            {b.used.as_ref().map(used_bar)}
        </div>
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
    let text = bar.text();
    let class = format!(
        "used-bar{}{}",
        if bar.idle_units > 0 { " idle" } else { "" },
        if bar.who.is_some() { " others" } else { "" }
    );
    view! {
        <span class=class aria-hidden="true" title=text>
            <span class=format!("used-fill fill-{}", u32::from(bar.pct) / 5 * 5)></span>
        </span>
    }
}
