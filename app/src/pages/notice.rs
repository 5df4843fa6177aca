//! The outcome of a form's action as the pages show it: the hydrated
//! action's answer, or the one a script-less post came back with in the URL.

use crate::model::ActionNotice;
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// The notice of the last action, or the one a script-less post came back
/// with, at the page's top (a notice shown in a section is not repeated).
pub(crate) fn notice_view(
    action: Option<Result<ActionNotice, RpcError>>,
    query: Option<ActionNotice>,
) -> impl IntoView {
    let query = query.filter(|n| n.at.is_none());
    notice_in("notice", action.filter(|a| !a.as_ref().is_ok_and(|n| n.at.is_some())), query)
}

/// The notice of the last action of a section's form, shown in it as `id`
/// (the id its server fn names in `act_at`).
pub(crate) fn section_notice(
    id: &'static str,
    action: Option<Result<ActionNotice, RpcError>>,
    query: Option<ActionNotice>,
) -> impl IntoView {
    notice_in(id, action, query.filter(|n| n.at.as_deref() == Some(id)))
}

fn notice_in(
    id: &'static str,
    action: Option<Result<ActionNotice, RpcError>>,
    query: Option<ActionNotice>,
) -> impl IntoView {
    let answered = action.is_some();
    let notice = match action {
        Some(Ok(notice)) => Some(notice),
        Some(Err(err)) => Some(ActionNotice::said(false, err.to_string())),
        None => query,
    };
    // An answer to an action taken further down the page (Save, Schedule)
    // is brought into view; a script-less post comes back scrolled to it
    // (`act_at`) or at the top.
    if answered {
        bring_into_view(id);
    }
    notice.map(|n| view! { <div class=if n.ok { "outcome ok" } else { "outcome refused" } role="status" id=id>{n.message}</div> })
}

/// An action's answer for the page's top, unless it is a refusal of a
/// field, which its form says beside that field (`field::Field`).
pub(crate) fn unless_beside(answer: Option<Result<ActionNotice, RpcError>>) -> Option<Result<ActionNotice, RpcError>> {
    answer.filter(|a| !a.as_ref().is_ok_and(|n| n.field.is_some()))
}

/// How many of an action's answers did what was asked: what a page's data
/// is fetched again for. A refusal changed nothing, and fetching again
/// would draw the form anew over what the person typed beside its sentence.
pub(crate) fn deeds<S>(action: leptos::server::ServerAction<S>) -> Memo<usize>
where
    S: leptos::server_fn::ServerFn<Error = RpcError> + Send + Sync + Clone + 'static,
    S::Output: Deed + Send + Sync + 'static,
{
    Memo::new(move |before: Option<&usize>| {
        action.version().track();
        let done =
            action.value().with_untracked(|answer| answer.as_ref().is_some_and(|a| a.as_ref().is_ok_and(Deed::done)));
        before.map_or(0, |n| n + usize::from(done))
    })
}

/// An action's answer that says whether it did what was asked.
pub(crate) trait Deed {
    fn done(&self) -> bool;
}

impl Deed for ActionNotice {
    fn done(&self) -> bool {
        self.ok
    }
}

/// A thing made or changed, or the notice of why not (`rpc::beside`).
impl<T> Deed for Result<T, ActionNotice> {
    fn done(&self) -> bool {
        self.is_ok()
    }
}

pub(crate) fn query_notice() -> Memo<Option<ActionNotice>> {
    let query = use_query_map();
    Memo::new(move |_| query.with(|q| ActionNotice::from_query(|key| q.get(key))))
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
