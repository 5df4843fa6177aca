//! The "Which kind fits my model?" page (issue 48).

use super::FoundSlots;
use crate::rules::fit::{FitAnswer, FitForm};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitPage {
    /// The form as asked, to fill it again.
    pub form: FitForm,
    /// Once asked: the answer, or why the question cannot be answered.
    pub answer: Option<Result<FitAnswer, String>>,
    /// The next free windows of the smallest kind that holds the run.
    pub next: Option<FoundSlots>,
    /// Idempotency keys of its one-click bookings start from this.
    pub form_key: String,
    pub tz: String,
}
