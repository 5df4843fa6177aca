//! A form's field the server refused: its input is marked invalid and
//! described by the sentence shown under it (`style/_field.scss`).

use crate::model::{ActionNotice, FieldError, FormRefusal};
use leptos::prelude::*;

/// What is wrong with one field of a form, if anything.
pub struct Fault {
    /// The form's prefix and the field's name: its sentence's id is
    /// "{form}-{field}-error".
    form: &'static str,
    field: &'static str,
    sentence: Option<String>,
}

impl Fault {
    /// The fault of `field`, if `refusal` is about it.
    pub fn of(form: &'static str, field: &'static str, refusal: Option<&FormRefusal>) -> Self {
        let sentence = refusal.filter(|r| r.field.as_deref() == Some(field)).map(|r| r.sentence.clone());
        Self { form, field, sentence }
    }

    /// The fault of `field`, labelled `label` on its form, if `refused` is
    /// about it: "Horizon (days ahead) must be between 1 and 365."
    pub fn labelled(form: &'static str, field: &'static str, label: &str, refused: Option<&FieldError>) -> Self {
        let refusal = refused.map(|e| FormRefusal::about(&e.field, label, &e.reason));
        Self::of(form, field, refusal.as_ref())
    }

    /// For its label's class.
    pub fn is(&self) -> bool {
        self.sentence.is_some()
    }

    /// Its input's aria-invalid.
    pub fn invalid(&self) -> Option<&'static str> {
        self.is().then_some("true")
    }

    /// Its input's aria-describedby: the sentence.
    pub fn id(&self) -> Option<String> {
        self.is().then(|| format!("{}-{}-error", self.form, self.field))
    }

    /// The sentence, under the input.
    pub fn view(&self) -> Option<impl IntoView> {
        let id = self.id();
        self.sentence.clone().map(|sentence| view! { <span class="field-error" id=id role="alert">{sentence}</span> })
    }
}

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
/// beside it. `name` is the field as refusals name it; `refused` is the
/// form's last refusal (`refused_field`).
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
    #[prop(into)] refused: Signal<Option<FieldError>>,
    children: F,
) -> impl IntoView
where
    F: Fn(Aria) -> IV + Send + Sync + 'static,
    IV: IntoView + 'static,
{
    let said = label.clone();
    let sentence = Memo::new(move |_| {
        refused.with(|r| r.as_ref().filter(|e| e.field == name).map(|e| FormRefusal::about(name, &said, &e.reason)))
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
