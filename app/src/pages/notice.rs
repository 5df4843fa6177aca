//! The outcome of a form's action as the pages show it: the hydrated
//! action's answer, or the one a script-less post came back with in the URL.

use crate::model::ActionNotice;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// The notice of the last action, or the one a script-less post came back with.
pub(crate) fn notice_view(
    action: Option<Result<ActionNotice, ServerFnError>>,
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

/// Refusals the user can act on (a state that no longer allows it, an end
/// that no longer fits) become a notice, and a script-less post is sent back
/// to the page with it; sign-in, permission, not-found and server failures
/// stay errors with their HTTP status.
#[cfg(feature = "ssr")]
pub(crate) fn act<T>(
    result: crate::backend::error::ServiceResult<T>,
    done: &str,
) -> Result<ActionNotice, ServerFnError> {
    use super::calendar::data::no_script_notice;
    use crate::backend::identity::to_server_error;
    let notice = match result {
        Ok(_) => ActionNotice { ok: true, message: done.to_string() },
        Err(err) if err.status() == 401 || err.status() == 403 || err.status() == 404 || err.status() >= 500 => {
            return Err(to_server_error(err))
        }
        Err(err) => ActionNotice { ok: false, message: err.public_message() },
    };
    no_script_notice(&notice);
    Ok(notice)
}
