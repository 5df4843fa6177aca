//! The grid's body is written once for a data and focus (`cells::Written`):
//! the server builds the calendar twice a request, and the second build
//! must take the first one's body, not write 354 KB again.

use super::cells::{self, Written};
use crate::model::CalendarData;
use chrono::Duration;
use leptos::prelude::Owner;
use serde_json::json;
use std::sync::Arc;

/// A day of one pool with one kind and two slots, the first one free.
fn week() -> Arc<CalendarData> {
    let pool = json!({
        "id": "00000000-0000-0000-0000-000000000001", "name": "lab", "description": "", "gpu_model": "",
        "requires_approval": false, "granularity_minutes": 30, "max_booking_minutes": 480, "horizon_days": 28,
        "min_notice_minutes": 0, "price_per_gpu_hour": 0.0, "images": [], "tenants": [], "kinds": [],
        "time_zone": "Europe/Berlin"
    });
    let data = json!({
        "pools": [], "pool": pool, "tz": "Europe/Berlin", "now": "2026-12-01T08:00:00Z",
        "kinds": [{ "kind": "nvidia.com/gpu", "capacity": 2, "short": "GPU" }],
        "days": [{ "date": "2026-12-01", "label": "Tue 1", "slots": [
            { "a": 1_764_576_000, "l": "09:00", "b": true }, { "a": 1_764_577_800, "l": "09:30" }
        ] }],
        "cells": [[[{ "f": 2 }, { "f": 0 }]]],
        "today": "2026-12-01", "prev": "2026-11-24", "next": "2026-12-08"
    });
    Arc::new(serde_json::from_value(data).expect("a calendar"))
}

#[test]
fn the_same_data_and_focus_take_the_body_already_written() {
    let owner = Owner::new();
    owner.set();
    let (data, step, written) = (week(), Duration::minutes(30), Written::new());
    let first = written.body(&data, step, (0, 0, 0));
    assert_eq!(*first, cells::body(&data, step, (0, 0, 0)), "the body as written directly");
    assert!(first.contains("09:00"), "{first}");
    assert!(Arc::ptr_eq(&first, &written.body(&data, step, (0, 0, 0))), "the same body, not written again");

    // Another focus, or a week loaded again (a new value, even if equal),
    // writes the body again.
    let moved = written.body(&data, step, (0, 0, 1));
    assert!(!Arc::ptr_eq(&first, &moved), "a new focus writes again");
    assert_ne!(*first, *moved, "the focus is marked where the keyboard starts");
    let reloaded = week();
    let again = written.body(&reloaded, step, (0, 0, 1));
    assert!(!Arc::ptr_eq(&moved, &again), "a reloaded week writes again");
    assert_eq!(*moved, *again);
}
