//! Admins only: bookings and extension requests waiting for a decision,
//! oldest first, with how busy their kind is then; approve or reject one or
//! many at once (rejecting needs a comment, which the requester reads).

use crate::model::{short_kind, ActionNotice, FieldError, FormRefusal, PendingApproval};
use crate::pages::field::Field;
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use leptos::prelude::*;

#[server(prefix = "/rpc", endpoint = "admin/approvals", output = crate::codec::JsonText)]
pub async fn load_approvals() -> Result<Vec<PendingApproval>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::bookings::approvals::queue(&ctx.db, &principal).await?)
}

/// How many wait, for the navigation: 0 for anyone but admins, and for
/// visitors not signed in (every page asks, so it never fails a page).
#[server(prefix = "/rpc", endpoint = "admin/approvals/count", output = crate::codec::JsonText)]
pub async fn count_approvals() -> Result<i64, RpcError> {
    let (Some(principal), ctx) = crate::rpc::visitor()? else { return Ok(0) };
    Ok(crate::backend::bookings::approvals::count(&ctx.db, &principal).await?)
}

/// Each decision as a line that names what was decided ("Ada Lovelace's
/// booking on lab-h100, Fri 27 Nov 09:00–12:00: approved"), and whether it went.
#[server(prefix = "/rpc", endpoint = "admin/approvals/decide", output = crate::codec::JsonText)]
pub async fn decide(
    #[server(default)] ids: Vec<String>,
    decision: String,
    #[server(default)] comment: String,
) -> Result<Result<Vec<(bool, String)>, ActionNotice>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let approve = match decision.as_str() {
        "approve" => true,
        "reject" => false,
        _ => return Err(FieldError::new("decision", "must be approve or reject").into()),
    };
    // Each choice names the window it was shown (`shown_token`): a booking
    // moved since is not approved.
    let shown = ids
        .iter()
        .map(|token| crate::model::parse_shown_token(token))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| FieldError::new("ids", "must each name a booking and the window shown of it"))?;
    // A refusal of the whole form (no comment to reject, none chosen) is
    // said beside its field, once.
    let decided = crate::backend::bookings::approvals::decide(&ctx.db, &principal, &shown, approve, &comment).await;
    let decisions = match crate::rpc::beside_posted(decided)? {
        Ok(decisions) => decisions,
        Err(refused) => return Ok(Err(refused)),
    };
    let tz = crate::rpc::no_script::reader_zone(String::new()).await;
    let pools = crate::backend::pools::list(&ctx.db, &principal).await?;
    let mut lines = Vec::with_capacity(decisions.len());
    for d in decisions {
        let what = match crate::backend::bookings::get(&ctx.db, &principal, d.id).await {
            Ok(b) => {
                let pool = pools.iter().find(|p| p.id == b.pool_id).map(|p| p.name.clone()).unwrap_or_default();
                let window = crate::model::Window { start: b.start, end: b.end };
                let when = crate::rules::local_time::local_window(window, &tz);
                crate::model::booking_phrase(&b.user_name.unwrap_or_default(), b.extends.is_some(), &pool, &when)
            }
            Err(_) => format!("booking {}", d.id),
        };
        lines.push((d.ok, format!("{what}: {}", d.message)));
    }
    // A script-less post goes back to the queue with the outcome in the query.
    crate::rpc::no_script_notice(&crate::model::ActionNotice::said(
        lines.iter().all(|(ok, _)| *ok),
        lines.iter().map(|(_, line)| line.clone()).collect::<Vec<_>>().join("; "),
    ));
    Ok(Ok(lines))
}

#[component]
pub fn ApprovalsPage() -> impl IntoView {
    let decide = ServerAction::<Decide>::new();
    let live = super::shared().live;
    // A refusal decided nothing: fetching the queue again would draw the
    // form anew over the choices and the comment.
    let decided = super::notice::deeds(decide);
    let queue = Resource::new(move || (decided.get(), live.get()), |_| load_approvals());
    let from_query = super::notice::query_notice();
    // Without JavaScript the outcome comes back in the query (see `decide`):
    // the decisions' lines, or the field a refusal is about.
    let posted = move || {
        from_query
            .get()
            .filter(|n| n.field.is_none())
            .map(|n| n.message.split("; ").map(|line| (n.ok, line.to_string())).collect::<Vec<_>>())
    };
    let refused = Memo::new(move |_| match decide.value().get() {
        Some(answer) => answer.ok().and_then(Result::err).and_then(|notice| notice.field),
        None => from_query.get().and_then(|notice| notice.field),
    });
    let outcome = move || {
        let answer = match decide.value().get() {
            Some(Ok(Err(_))) => None,
            Some(Ok(Ok(lines))) => Some(Ok(lines)),
            Some(Err(err)) => Some(Err(err)),
            None => posted().map(Ok),
        };
        answer.map(|result| match result {
            Ok(decisions) => view! {
                <ul class="outcome" role="status" id="decisions">
                    {decisions.into_iter().map(|(ok, line)| view! {
                        <li class=if ok { "ok" } else { "refused" }>{line}</li>
                    }).collect_view()}
                </ul>
            }
            .into_any(),
            Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
        })
    };
    view! {
        <section class="page-head"><h1>"Approvals"</h1></section>
        <p class="muted">"Oldest request first. A booking still pending when its window opens is rejected automatically."</p>
        {outcome}
        <Transition fallback=|| view! { <p class="loading">"Loading the queue…"</p> }>
            {move || queue.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                Ok(list) if list.is_empty() => view! { <Empty id="no-approvals">"Nothing waits for a decision."</Empty> }.into_any(),
                Ok(list) => view! { <Queue list decide refused clock/> }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load the queue: ", err),
            })}
        </Transition>
    }
}

#[component]
fn Queue(
    list: Vec<PendingApproval>,
    decide: ServerAction<Decide>,
    refused: Memo<Option<FieldError>>,
    clock: crate::model::Clock,
) -> impl IntoView {
    let tz = clock.tz.clone();
    // None chosen (or a choice the page no longer knows): said in the form.
    let unchosen = move || {
        refused.get().filter(|e| e.field == "ids").map(|e| {
            let said = FormRefusal::about("ids", "Chosen requests", &e.reason).sentence;
            view! { <p class="field-error" role="alert" id="approval-ids-error">{said}</p> }
        })
    };
    view! {
        <ActionForm action=decide attr:id="approval-form">
            <table class="bookings stacked" id="approval-list">
                <thead><tr>
                    <th>"Choose"</th><th>"Requester"</th><th>"Tenant"</th><th>"Pool · kind × units"</th>
                    <th>"Window (" {tz} ")"</th><th>"Busiest moment of its kind"</th>
                </tr></thead>
                <tbody>
                    {list.into_iter().map(|p| {
                        let what = match p.extends {
                            Some(_) => "extension of a booking",
                            None => "new booking",
                        };
                        let label = format!("{} {} {}", p.user_email, p.pool, clock.when(p.start));
                        let over = p.peak_with > p.capacity;
                        view! {
                            <tr>
                                <td><input type="checkbox" name="ids[]" value=crate::model::shown_token(p.id, p.start, p.end) aria-label=format!("Choose {label}")/></td>
                                <td data-label="Requester">{p.user_name.clone()} <br/> <span class="muted">{p.user_email.clone()}</span></td>
                                <td data-label="Tenant"><code>{p.tenant.clone()}</code></td>
                                <td data-label="Pool">{p.pool.clone()} " · " {short_kind(&p.kind)} " × " {p.quantity} <br/>
                                    <span class="muted">{what}</span>
                                    {(!p.note.is_empty()).then(|| view! { <br/> <span class="muted user-text">"“" {p.note.clone()} "”"</span> })}</td>
                                <td data-label=format!("Window ({})", clock.tz)>{clock.when(p.start)} <br/> "to " {clock.when(p.end)} <br/>
                                    <span class="muted">"asked " {clock.when(p.requested_at)}</span></td>
                                <td class=if over { "refused" } else { "" } data-label="Busiest moment">
                                    {p.peak_without} " of " {p.capacity} " booked; " {p.peak_with} " with this request"
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            <fieldset class="inline-form">
                <legend>"Decide on the chosen requests"</legend>
                {unchosen}
                <label><input type="radio" name="decision" value="approve" checked/> " Approve"</label>
                <label><input type="radio" name="decision" value="reject"/> " Reject"</label>
                <Field form="approval" name="comment" label="Comment" hint="required to reject: the requester reads it"
                    refused let:aria>
                    <input name="comment" id="approval-comment" maxlength="1000" size="40"
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <button class="button" type="submit" id="decide">"Apply"</button>
            </fieldset>
        </ActionForm>
    }
}

/// "Approvals (3)" in the admins' navigation.
#[component]
pub fn ApprovalsLink(waiting: i64) -> impl IntoView {
    view! {
        <a href="/admin/approvals" id="approvals-nav">"Approvals"
            {(waiting > 0).then(|| view! {
                " " <span class="badge state-pending" id="approvals-count" aria-label=format!("{waiting} waiting")>{waiting}</span>
            })}
        </a>
    }
}

/// The admin's home page line: how many requests wait.
#[component]
pub fn WaitingSummary() -> impl IntoView {
    let count = super::shared().pending_approvals;
    view! {
        <Suspense fallback=|| ()>
            {move || count.get().and_then(|r| r.ok()).map(|n| view! {
                <p class="panel" id="waiting-summary">
                    {match n {
                        0 => "No booking waits for approval.".to_string(),
                        1 => "1 booking waits for approval.".to_string(),
                        n => format!("{n} bookings wait for approval."),
                    }}
                    " " <a href="/admin/approvals">"Open approvals"</a>
                </p>
            })}
        </Suspense>
    }
}
