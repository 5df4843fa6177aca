//! A wide table's box: on a narrow screen the table scrolls sideways in it,
//! never the page, and the box can be focused and scrolled by keyboard
//! (a region named like its table), even when nothing inside is focusable.

use leptos::prelude::*;

#[component]
pub fn TableScroll(
    /// The region's name: what the table lists.
    #[prop(into)]
    label: String,
    children: Children,
) -> impl IntoView {
    view! { <div class="table-scroll" tabindex="0" role="region" aria-label=label>{children()}</div> }
}
