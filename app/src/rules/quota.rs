//! Tenant quotas per pool+kind: at most `max_units` held at once by the
//! tenant's bookings (the tenant's peak over a window), and at most
//! `gpu_hours_per_week` GPU-hours (whole-GPU equivalents: a unit-hour of a
//! kind is `1 / slices_per_gpu` of one) booked in any ISO week of the pool's
//! time zone (Monday 00:00 to the next Monday 00:00 local time, so a week
//! across a DST change has 167 or 169 hours). A unit is one unit of the
//! kind: a whole GPU, or one MIG slice. Plain functions; admission calls them under
//! the kind's lock with the tenant's bookings of that kind.

use super::capacity::{peak_usage, Usage};
use super::local_time::local_midnight;
use crate::model::{QuotaLimit, TenantQuota, Window};
use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};

/// Why a request does not fit the tenant's quota; figures in the limit's unit
/// (units, or hours for the weekly limit).
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaRefusal {
    pub limit: QuotaLimit,
    pub allowed: f64,
    pub used: f64,
    pub left: f64,
    /// The week that would overflow (weekly limit only).
    pub week: Option<Window>,
    /// When that week starts, in the pool's zone as a person reads it
    /// ("Mon 23 Nov 2026 00:00 CET").
    pub week_starts: Option<String>,
}

/// Unit-minutes the usages hold inside `window`.
pub fn unit_minutes(usages: &[Usage], window: Window) -> i64 {
    usages
        .iter()
        .map(|u| {
            let (start, end) = (u.start.max(window.start), u.end.min(window.end));
            if start < end {
                (end - start).num_minutes() * i64::from(u.quantity)
            } else {
                0
            }
        })
        .sum()
}

/// The ISO week (in `tz`) that contains `at`.
pub fn iso_week_of<Tz: TimeZone>(at: DateTime<Utc>, tz: &Tz) -> Window {
    let local = at.with_timezone(tz).date_naive();
    let monday = local - Duration::days(i64::from(local.weekday().num_days_from_monday()));
    Window { start: local_midnight(tz.clone(), monday), end: local_midnight(tz.clone(), monday + Duration::days(7)) }
}

/// Every ISO week (in `tz`) that `window` touches, in order.
pub fn iso_weeks<Tz: TimeZone>(window: Window, tz: &Tz) -> Vec<Window> {
    let mut weeks = vec![iso_week_of(window.start, tz)];
    while let Some(last) = weeks.last().copied() {
        if last.end >= window.end {
            break;
        }
        weeks.push(iso_week_of(last.end, tz));
    }
    weeks
}

/// GPU-hours of `unit_minutes` of a kind with `slices_per_gpu` units per GPU.
fn gpu_hours(unit_minutes: i64, slices_per_gpu: i32) -> f64 {
    // Two decimals are what anybody reads; the comparison itself is in unit-minutes.
    crate::model::figure(unit_minutes as f64 / 60.0 / f64::from(slices_per_gpu.max(1)))
}

/// Whether `request` fits the tenant's quota next to the tenant's other
/// bookings of the same pool+kind (`tenant_usages`: every booking that holds
/// or held capacity, so the weekly count includes what already ran).
pub fn check<Tz: TimeZone>(
    quota: &TenantQuota,
    slices_per_gpu: i32,
    tenant_usages: &[Usage],
    request: Usage,
    tz: &Tz,
) -> Result<(), QuotaRefusal>
where
    Tz::Offset: std::fmt::Display,
{
    let window = Window { start: request.start, end: request.end };
    if let Some(max_units) = quota.max_units {
        let used = peak_usage(tenant_usages, window);
        if used + request.quantity > max_units {
            return Err(QuotaRefusal {
                limit: QuotaLimit::MaxUnits,
                allowed: f64::from(max_units),
                used: f64::from(used),
                left: f64::from((max_units - used).max(0)),
                week: None,
                week_starts: None,
            });
        }
    }
    if let Some(weekly) = quota.gpu_hours_per_week {
        // In unit-minutes: a GPU-hour is `slices_per_gpu` unit-hours.
        let allowed_minutes = (weekly * 60.0 * f64::from(slices_per_gpu.max(1))).round() as i64;
        for week in iso_weeks(window, tz) {
            let used = unit_minutes(tenant_usages, week);
            if used + unit_minutes(&[request], week) > allowed_minutes {
                return Err(QuotaRefusal {
                    limit: QuotaLimit::GpuHoursPerWeek,
                    allowed: weekly,
                    used: gpu_hours(used, slices_per_gpu),
                    left: gpu_hours((allowed_minutes - used).max(0), slices_per_gpu),
                    week: Some(week),
                    week_starts: Some(week.start.with_timezone(tz).format("%a %d %b %Y %H:%M %Z").to_string()),
                });
            }
        }
    }
    Ok(())
}

impl QuotaRefusal {
    /// The refusal as a person reads it.
    pub fn explain(&self) -> String {
        match self.limit {
            QuotaLimit::MaxUnits => format!(
                "your tenant's quota allows {} units at once; {} are booked at the busiest moment of this window, {} left",
                self.allowed, self.used, self.left
            ),
            QuotaLimit::GpuHoursPerWeek => format!(
                "your tenant's quota allows {} GPU-hours (whole-GPU equivalent) in the week from {}; {} are booked, {} left",
                self.allowed,
                self.week_starts.clone().unwrap_or_default(),
                self.used,
                self.left
            ),
        }
    }
}

#[cfg(test)]
mod week_in_words {
    use super::*;

    #[test]
    fn a_weekly_refusal_names_its_week_in_the_pools_zone() {
        let berlin: chrono_tz::Tz = "Europe/Berlin".parse().unwrap();
        let at = |d: u32, h: u32| Utc.with_ymd_and_hms(2026, 11, d, h, 0, 0).unwrap();
        let quota = TenantQuota { max_units: None, gpu_hours_per_week: Some(2.0) };
        let held = [Usage { start: at(24, 8), end: at(24, 10), quantity: 1 }];
        let asked = Usage { start: at(25, 8), end: at(25, 9), quantity: 1 };
        let refusal = check(&quota, 1, &held, asked, &berlin).unwrap_err();
        // Monday 23 November, 00:00 in Berlin (23:00 UTC the day before).
        assert!(refusal.explain().contains("in the week from Mon 23 Nov 2026 00:00 CET;"), "{}", refusal.explain());
        assert!(!refusal.explain().contains("UTC"));
    }
}
