//! A form's field: its label, its input and, when the server refused it,
//! the sentence why, under it, the input marked invalid and described by
//! it (`style/_field.scss`). Every form draws its fields with `Field`.

use crate::model::{ActionNotice, FieldError, FormRefusal};
use leptos::prelude::*;

/// The field the last answer of a form's action refused, if any: the
/// hydrated action's, else the one a script-less post came back with.
pub fn refused_field(
    answer: Option<Result<ActionNotice, crate::rpc::RpcError>>,
    query: Option<ActionNotice>,
) -> Option<FieldError> {
    match answer {
        Some(answer) => answer.ok().and_then(|notice| notice.field),
        None => query.and_then(|notice| notice.field),
    }
}

/// What a field's input carries about its fault: marked invalid, and
/// described by the sentence shown beside it.
#[derive(Clone, Copy)]
pub struct Aria {
    id: Memo<Option<String>>,
}

impl Aria {
    pub fn invalid(self) -> Option<&'static str> {
        self.id.get().map(|_| "true")
    }

    pub fn described_by(self) -> Option<String> {
        self.id.get()
    }
}

/// One field of a form, the one way every form draws it: its label, its
/// input (the children, given the `Aria` it carries), a hint under it and,
/// when the form's last answer refused this field, the sentence why,
/// beside it. `name` is the field as refusals name it; the form's last
/// refusal is `refused` (`refused_field`: worded here with the label) or
/// `said` (a page's answer that came worded already).
#[component]
pub fn Field<F, IV>(
    /// The form's prefix: the sentence's id is "{form}-{name}-error".
    #[prop(into)]
    form: String,
    name: &'static str,
    #[prop(into)] label: String,
    #[prop(optional)] hint: Option<&'static str>,
    /// The label is read, not shown: a row of a table, whose column
    /// heading says what the field is.
    #[prop(optional)]
    quiet: bool,
    #[prop(optional, into)] refused: Option<Signal<Option<FieldError>>>,
    #[prop(optional, into)] said: Option<Signal<Option<FormRefusal>>>,
    children: F,
) -> impl IntoView
where
    F: Fn(Aria) -> IV + Send + Sync + 'static,
    IV: IntoView + 'static,
{
    let worded_by = label.clone();
    let sentence = Memo::new(move |_| {
        let worded =
            said.and_then(|said| said.with(|r| r.as_ref().filter(|r| r.field.as_deref() == Some(name)).cloned()));
        let refused = refused.and_then(|refused| {
            refused.with(|r| {
                r.as_ref().filter(|e| e.field == name).map(|e| FormRefusal::about(name, &worded_by, &e.reason))
            })
        });
        worded.or(refused)
    });
    let error_id = format!("{form}-{name}-error");
    let id = Memo::new({
        let error_id = error_id.clone();
        move |_| sentence.with(|s| s.as_ref().map(|_| error_id.clone()))
    });
    // The sentence sits outside the label: it describes the input, it is
    // not part of its name.
    view! {
        <div class="field" class:invalid=move || sentence.with(Option::is_some)>
            <label><span class="field-label" class:visually-hidden=quiet>{label}</span> {children(Aria { id })}</label>
            {hint.map(|hint| view! { <span class="hint">{hint}</span> })}
            {move || sentence.get().map(|s| view! { <span class="field-error" id=error_id.clone() role="alert">{s.sentence}</span> })}
        </div>
    }
}

/// Which of a page's forms of one action was sent last, by `key` of its
/// input (a tenant's slug, a user's id), kept by the page: its lists are
/// drawn anew after each answer, and only that form says the answer's fault.
pub fn last_sent<S, K>(action: ServerAction<S>, key: fn(S) -> K) -> RwSignal<Option<K>>
where
    S: leptos::server_fn::ServerFn + Send + Sync + Clone + 'static,
    S::Output: Send + Sync + 'static,
    S::Error: Send + Sync + 'static,
    K: Send + Sync + 'static,
{
    let sent = RwSignal::new(None);
    Effect::new(move |_| {
        if let Some(asked) = action.input().get() {
            sent.set(Some(key(asked)));
        }
    });
    sent
}

/// A `Field`'s `<select>` of fixed options, (value, label) each: `chosen`
/// is selected, the first option when `chosen` names none of them (a
/// hand-edited query). `id` is the page's own for it.
pub fn choice(
    id: &'static str,
    name: &'static str,
    aria: Aria,
    options: &'static [(&'static str, &'static str)],
    chosen: &str,
) -> impl IntoView {
    let known = options.iter().any(|(value, _)| *value == chosen);
    let chosen = if known { chosen } else { options.first().map_or("", |(value, _)| *value) }.to_string();
    view! {
        <select name=name id=id aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
            {options.iter().map(|&(value, label)| {
                let selected = value == chosen;
                view! { <option value=value selected=selected prop:selected=selected>{label}</option> }
            }).collect_view()}
        </select>
    }
}
