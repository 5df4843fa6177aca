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
    let notice = match action {
        Some(Ok(notice)) => Some(notice),
        Some(Err(err)) => Some(ActionNotice { ok: false, message: err.to_string() }),
        None => query,
    };
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
