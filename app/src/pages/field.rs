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
