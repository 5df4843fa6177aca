//! Peak concurrent usage over a window, the free-capacity step function, and
//! the earliest window that fits. All windows are half-open `[start, end)`.

use crate::model::Window;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// One capacity-holding booking as the sweep sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub quantity: i32,
}

/// Free units over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub free: i32,
}

/// +quantity at each clipped start, -quantity at each clipped end, sorted so
/// that at equal instants ends come first: `[a,b)` and `[b,c)` never overlap.
fn clipped_events(usages: &[Usage], window: Window) -> Vec<(DateTime<Utc>, i32)> {
    let mut events = Vec::with_capacity(usages.len() * 2);
    for usage in usages {
        let start = usage.start.max(window.start);
        let end = usage.end.min(window.end);
        if start < end {
            events.push((start, usage.quantity));
            events.push((end, -usage.quantity));
        }
    }
    events.sort_unstable();
    events
}

/// The highest total quantity in use at any instant of `window`.
pub fn peak_usage(usages: &[Usage], window: Window) -> i32 {
    let mut current = 0;
    let mut peak = 0;
    for (_, delta) in clipped_events(usages, window) {
        current += delta;
        peak = peak.max(current);
    }
    peak
}

/// Whether `quantity` more units fit at every instant of `window`.
pub fn fits(usages: &[Usage], capacity: i32, window: Window, quantity: i32) -> bool {
    peak_usage(usages, window) + quantity <= capacity
}

/// One kind's capacity as a batch decides it: requests in arrival order,
/// each seeing the units taken before it. Waitlist entries are decided the
/// same way in the order they joined, which makes promotion FIFO among the
/// entries that fit: one that does not fit at its turn is skipped, and a
/// later one may take what is left.
#[derive(Clone, Debug)]
pub struct Ledger {
    capacity: i32,
    usages: Vec<Usage>,
}

impl Ledger {
    pub fn new(capacity: i32, held: Vec<Usage>) -> Self {
        Self { capacity, usages: held }
    }

    /// `Err(peak)` with the units held at the busiest moment of the window
    /// when `wanted` does not fit now.
    pub fn check(&self, wanted: Usage) -> Result<(), i32> {
        let window = Window { start: wanted.start, end: wanted.end };
        let peak = peak_usage(&self.usages, window);
        if peak + wanted.quantity > self.capacity {
            Err(peak)
        } else {
            Ok(())
        }
    }

    /// Holds `taken` for the requests after it (after `check` and any other rule passed).
    pub fn take(&mut self, taken: Usage) {
        self.usages.push(taken);
    }
}

/// Free units over `window` as a step function with adjacent equal steps merged.
pub fn free_steps(usages: &[Usage], capacity: i32, window: Window) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut current = 0;
    let mut cursor = window.start;
    let push = |steps: &mut Vec<Step>, start, end, free| {
        if start >= end {
            return;
        }
        match steps.last_mut() {
            Some(last) if last.free == free && last.end == start => last.end = end,
            _ => steps.push(Step { start, end, free }),
        }
    };
    for (at, delta) in clipped_events(usages, window) {
        push(&mut steps, cursor, at, capacity - current);
        cursor = at;
        current += delta;
    }
    push(&mut steps, cursor, window.end, capacity - current);
    steps
}

/// Rounds up to the next multiple of `granularity` since the Unix epoch.
pub fn align_up(at: DateTime<Utc>, granularity: Duration) -> DateTime<Utc> {
    let down = align_down(at, granularity);
    if down == at {
        at
    } else {
        down + granularity
    }
}

/// Rounds down to a multiple of `granularity` since the Unix epoch.
pub fn align_down(at: DateTime<Utc>, granularity: Duration) -> DateTime<Utc> {
    let step = granularity.num_milliseconds().max(1);
    let millis = at.timestamp_millis();
    let floored = millis - millis.rem_euclid(step);
    DateTime::from_timestamp_millis(floored).unwrap_or(at)
}

/// The earliest window of `duration` starting at or after `earliest` (aligned
/// up) and ending by `latest_end` in which `quantity` more units fit.
///
/// One sweep builds the free-capacity steps; the answer is the first run of
/// consecutive steps with at least `quantity` free that is long enough from
/// its first aligned instant. O(n log n) in the number of bookings.
pub fn next_free(
    usages: &[Usage],
    capacity: i32,
    quantity: i32,
    duration: Duration,
    earliest: DateTime<Utc>,
    latest_end: DateTime<Utc>,
    granularity: Duration,
) -> Option<Window> {
    let earliest = align_up(earliest, granularity);
    if quantity > capacity || duration <= Duration::zero() || earliest + duration > latest_end {
        return None;
    }
    let span = Window { start: earliest, end: latest_end };
    let mut run_start: Option<DateTime<Utc>> = None;
    for step in free_steps(usages, capacity, span) {
        if step.free < quantity {
            run_start = None;
            continue;
        }
        let start = align_up(*run_start.get_or_insert(step.start), granularity);
        if start + duration <= step.end {
            return Some(Window { start, end: start + duration });
        }
    }
    None
}
