//! The outcome of a form's action as the pages show it: the hydrated
//! action's answer, or the one a script-less post came back with in the URL.

use crate::model::ActionNotice;
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// The notice of the last action, or the one a script-less post came back with.
pub(crate) fn notice_view(
    action: Option<Result<ActionNotice, RpcError>>,
    query: Option<ActionNotice>,
) -> impl IntoView {
    let answered = action.is_some();
    let notice = match action {
        Some(Ok(notice)) => Some(notice),
        Some(Err(err)) => Some(ActionNotice { ok: false, message: err.to_string() }),
        None => query,
    };
    // An answer to an action taken further down the page (Save, Schedule)
    // is brought into view; a script-less post comes back at the top anyway.
    if answered {
        bring_into_view("notice");
    }
    notice.map(|n| view! { <div class=if n.ok { "outcome ok" } else { "outcome refused" } role="status" id="notice">{n.message}</div> })
}

pub(crate) fn query_notice() -> Memo<Option<ActionNotice>> {
    let query = use_query_map();
    Memo::new(move |_| {
        query.with(|q| {
            q.get("notice").map(|message| ActionNotice { ok: q.get("notice_ok").as_deref() == Some("1"), message })
        })
    })
}

/// Scrolls element `id` into view once it is rendered (in the browser).
pub(crate) fn bring_into_view(id: &'static str) {
    #[cfg(feature = "hydrate")]
    request_animation_frame(move || {
        if let Some(element) = leptos::tachys::dom::document().get_element_by_id(id) {
            let options = leptos::web_sys::ScrollIntoViewOptions::new();
            options.set_block(leptos::web_sys::ScrollLogicalPosition::Nearest);
            element.scroll_into_view_with_scroll_into_view_options(&options);
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = id;
}
