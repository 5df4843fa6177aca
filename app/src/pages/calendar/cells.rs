//! What each calendar cell shows, worked out once per load: free units, the
//! viewer's own bookings as labelled blocks, and (for admins) who else booked.
//! Pure, so the same grid renders on the server and in the browser.

use crate::model::{Booking, CalendarData};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    pub free: i32,
    pub capacity: i32,
    pub bookable: bool,
    /// Units of the viewer's own bookings in this slot.
    pub mine: i32,
    /// Label for the first slot of one of the viewer's bookings.
    pub block_label: Option<String>,
    /// Others' bookings the viewer may see in full (admins), for the tooltip.
    pub others: Vec<String>,
}

/// `cells[day][kind][slot]`.
pub fn cells(data: &CalendarData) -> Vec<Vec<Vec<Cell>>> {
    data.days
        .iter()
        .map(|day| {
            data.kinds
                .iter()
                .enumerate()
                .map(|(k, lane)| {
                    day.slots
                        .iter()
                        .map(|slot| {
                            let here = |b: &&Booking| b.kind == lane.kind && b.start < slot.end && slot.start < b.end;
                            let covering: Vec<&Booking> = data.bookings.iter().filter(here).collect();
                            let mine: Vec<&&Booking> = covering.iter().filter(|b| b.mine).collect();
                            let block_label = mine
                                .iter()
                                .find(|b| {
                                    b.start >= slot.start && b.start < slot.end
                                        || b.start < slot.start && slot.start == day.slots[0].start
                                })
                                .map(|b| format!("You ×{} · {}", b.quantity, b.state.as_str()));
                            let others = covering
                                .iter()
                                .filter(|b| !b.mine)
                                .filter_map(|b| b.user_name.as_ref().map(|name| format!("{name} ×{}", b.quantity)))
                                .collect();
                            Cell {
                                free: slot.free.get(k).copied().unwrap_or(0),
                                capacity: lane.capacity,
                                bookable: slot.bookable,
                                mine: mine.iter().map(|b| b.quantity).sum(),
                                block_label,
                                others,
                            }
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// How full a cell looks: "none" free, "low" (a quarter or less), or "ok".
pub fn level(free: i32, capacity: i32) -> &'static str {
    if free <= 0 {
        "none"
    } else if free * 4 <= capacity {
        "low"
    } else {
        "ok"
    }
}
