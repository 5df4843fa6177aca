use crate::backend::reports::figures::*;
use chrono::TimeZone;

#[test]
fn the_all_row_is_the_sum_of_its_members_as_shown() {
    // Each member booked 1.0625 h of which 0.066 active: shown as 1.06
    // booked, 0.07 active, 1 idle (0.9965 rounded once).
    let member = |name: &str| {
        finish(ReportRow {
            name: name.into(),
            booked_gpu_hours: 1.0625,
            occupied_gpu_hours: 1.004,
            active_gpu_hours: 0.066,
            busy_gpu_hours: 0.006,
            showback_cost: 3.333,
            ..ReportRow::default()
        })
    };
    let rows = [member("a"), member("b"), member("c")];
    let all = total(&rows, &[], &[]);
    let shown = |f: fn(&ReportRow) -> f64| figure(rows.iter().map(f).sum::<f64>());
    assert_eq!(rows[0].idle_booked_gpu_hours, 1.0);
    assert_eq!(all.idle_booked_gpu_hours, shown(|r| r.idle_booked_gpu_hours));
    assert_eq!(all.idle_booked_gpu_hours, 3.0);
    assert_eq!(all.booked_gpu_hours, shown(|r| r.booked_gpu_hours));
    assert_eq!(all.occupied_gpu_hours, shown(|r| r.occupied_gpu_hours));
    assert_eq!(all.active_gpu_hours, shown(|r| r.active_gpu_hours));
    assert_eq!(all.busy_gpu_hours, shown(|r| r.busy_gpu_hours));
    assert_eq!(all.showback_cost, shown(|r| r.showback_cost));
}

fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

#[test]
fn a_year_reads_whole_months_between_whole_days_between_hours() {
    let t = tiers(at(2025, 11, 23, 6), at(2026, 11, 23, 6));
    assert_eq!((t.first, t.end), (at(2025, 11, 24, 0), at(2026, 11, 23, 0)));
    assert_eq!((t.first_day, t.end_day), (date(2025, 11, 24), date(2026, 11, 23)));
    assert_eq!((t.first_month, t.end_month), (date(2025, 12, 1), date(2026, 11, 1)));
}

#[test]
fn a_period_from_a_months_first_midnight_starts_with_that_month() {
    let t = tiers(at(2026, 10, 1, 0), at(2026, 11, 1, 0));
    assert_eq!((t.first_month, t.end_month), (date(2026, 10, 1), date(2026, 11, 1)));
    assert_eq!((t.first_day, t.end_day), (date(2026, 10, 1), date(2026, 11, 1)));
}

#[test]
fn without_a_whole_month_the_days_cover_everything() {
    let t = tiers(at(2026, 10, 24, 12), at(2026, 11, 20, 0));
    assert_eq!((t.first_day, t.end_day), (date(2026, 10, 25), date(2026, 11, 20)));
    assert_eq!((t.first_month, t.end_month), (t.end_day, t.end_day));
    let none = tiers(at(2026, 10, 24, 12), at(2026, 10, 25, 6));
    assert_eq!((none.first, none.end), (at(2026, 10, 24, 12), at(2026, 10, 24, 12)));
    assert_eq!(none.first_month, none.end_month);
}

#[test]
fn epoch_hours_match_the_generated_columns_rule() {
    assert_eq!(epoch_hours(at(1970, 1, 2, 0)), 24.0);
    assert_eq!(epoch_hours(Utc.with_ymd_and_hms(1970, 1, 1, 0, 30, 0).unwrap()), 0.5);
}
