//! User-supplied durations and dates anywhere in their types' ranges are
//! either refused naming the field or safe to compute with: never a panic.

use app::rules::window::{check_date_in_range, check_in_range, duration_minutes, MAX_DURATION_MINUTES};
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_minutes_are_a_duration_or_a_refusal_naming_the_field(minutes in any::<i64>()) {
        match duration_minutes("duration_minutes", minutes) {
            Ok(duration) => {
                prop_assert!((1..=MAX_DURATION_MINUTES).contains(&minutes));
                prop_assert_eq!(duration.num_minutes(), minutes);
                // What the search does with it cannot overflow inside the accepted years.
                let latest: DateTime<Utc> = "9999-12-31T23:59:00Z".parse().unwrap();
                prop_assert!(latest.checked_add_signed(duration).is_some());
            }
            Err(err) => {
                prop_assert!(!(1..=MAX_DURATION_MINUTES).contains(&minutes));
                prop_assert_eq!(err.field, "duration_minutes");
            }
        }
    }

    #[test]
    fn any_representable_day_is_a_week_to_show_or_a_refusal(days in (NaiveDate::MIN.num_days_from_ce())..=(NaiveDate::MAX.num_days_from_ce())) {
        let date = NaiveDate::from_num_days_from_ce_opt(days).unwrap();
        match check_date_in_range("date", date) {
            Ok(()) => {
                prop_assert!((1970..=9999).contains(&date.year()));
                // The calendar's arithmetic on an accepted day: a week on, an hour past midnight.
                let end = date.checked_add_signed(Duration::days(7)).unwrap();
                prop_assert!(end.and_hms_opt(1, 0, 0).is_some());
            }
            Err(err) => {
                prop_assert!(!(1970..=9999).contains(&date.year()));
                prop_assert_eq!(err.field, "date");
            }
        }
    }

    #[test]
    fn any_timestamp_is_in_range_or_refused(seconds in (DateTime::<Utc>::MIN_UTC.timestamp())..=(DateTime::<Utc>::MAX_UTC.timestamp())) {
        let at = DateTime::<Utc>::from_timestamp(seconds, 0).unwrap();
        prop_assert_eq!(check_in_range("start", at).is_ok(), (1970..=9999).contains(&at.year()));
    }
}
