//! "What is free then" (issue 48): a window first, then what every pool
//! and kind the person may book has free in it.

use super::{FormRefusal, Window};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The page's form as the URL carries it (wall-clock times in the reader's
/// zone); empty means not given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FreeThenForm {
    pub from: String,
    pub to: String,
    /// Minutes a part of the window must last to be offered.
    pub at_least: String,
    pub units: String,
    /// GB of GPU memory a unit must have (empty: any kind).
    pub memory_gb: String,
}

/// A kind free for the whole window, or for a part of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FreeRow {
    pub pool_id: Uuid,
    pub pool: String,
    pub kind: String,
    pub quantity: i32,
    /// What can be booked: the whole window, or its longest free part.
    pub window: Window,
    /// `window` in the reader's zone.
    pub when: String,
    pub whole: bool,
    /// "24 GB · inference of an 8B model …", empty when unknown.
    pub fits: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FreeThenPage {
    pub form: FreeThenForm,
    /// Once asked: what is free (whole windows first), or why the question
    /// cannot be answered.
    pub rows: Option<Result<Vec<FreeRow>, FormRefusal>>,
    pub form_key: String,
    pub tz: String,
}
