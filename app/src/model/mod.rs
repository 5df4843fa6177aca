//! Types shared by the browser, the server fns and the REST API.

mod account;
mod approval;
mod audit;
mod blackout;
mod booking;
mod calendar;
mod calendar_feed;
mod calendar_span;
mod clock;
mod cluster;
mod dashboard;
mod device_chart;
mod form_value;
mod free_then;
mod gpu_presets;
mod home;
mod idle_policy;
mod my_bookings;
mod notifications;
mod overview;
mod pool;
mod pool_form;
mod principal;
mod report;
mod series;
mod session;
mod site;
mod tenant;
mod tokenomics;
mod units;
mod waitlist;
mod worker;

pub use account::{
    CreatedToken, DevUser, Membership, MembershipSource, SignInOptions, SignInPageData, TokenInfo, TokenScope,
    UserSummary, ZoneChoice, MAX_TOKEN_DAYS,
};
pub use approval::{parse_shown_token, shown_token, Decision, PendingApproval};
pub use audit::{via_phrase, AuditBooking, AuditEntry, AuditFilter, AuditPage};
pub use blackout::{Blackout, BlackoutCreated, NewBlackout, OnOverlap};
pub use booking::{Booking, BookingFilter, BookingState, CoOwner, Mode, NewBooking, NewCoOwner, Window};
pub use calendar::{
    short_kind, BlockOwner, BookOutcome, BookingForm, CalendarBlock, CalendarData, Cell, Day, KindLane, Movable,
    MoveOutcome, PoolChoice, Slot, Suggestion, UsedBar,
};
pub use calendar_feed::{CalendarFeed, PoolFeed};
pub use calendar_span::{AgendaDay, AgendaEntry, CalendarSpan, MonthDay, SpanKind};
pub use clock::{booking_phrase, day_text, window_text, Clock};
pub use cluster::{Cluster, ClusterAccess, ClusterForm, ClusterSpec, ClusterSwitches, DEFAULT_CLUSTER};
pub use dashboard::{BookingLine, BudgetLine, Dashboard, LiveSession, UpcomingLine, SPARK_MINUTES};
pub use device_chart::{ChartAxis, ChartPoint, ChartRange, DeviceChart, SessionCharts};
pub use free_then::{FreeRow, FreeThenForm, FreeThenPage};
pub use gpu_presets::{gpu_of, preset, GpuSpec, PresetOnGpu, ThroughputPreset, GPUS, PRESETS, REFERENCE_GPU};
pub use home::{Home, HomePrice, HomeSettings, HomesPage, Kept, SITE_RETENTION_DAYS};
pub use idle_policy::IdlePolicy;
pub use my_bookings::{
    ActionNotice, BookingCard, ClusterMode, EndOption, FindPage, FindQuery, FoundSlots, MyBookings,
    KUEUE_BACKFILL_QUEUE, KUEUE_LOCAL_QUEUE,
};
pub use notifications::{events_for, NewWebhook, NotificationSettings, Preference, Webhook, EVENTS};
pub use overview::{KindSummary, Overview, PoolSummary};
pub use pool::{
    default_booking_minutes, default_slices_per_gpu, mig_profile, KindSpec, NewPool, Placement, Pool, PoolKind,
    PoolPatch, PoolRules, Scheduling, Toleration, MAX_END_GRACE_SECONDS,
};
pub use pool_form::{refusal_on_form, KindForm, PoolForm};
pub use principal::{Principal, Role, TenantRef};
pub use report::{
    HeatCell, PeriodKind, ReportGroup, ReportPage, ReportPageQuery, ReportQuery, ReportRow, StorageLine, TrendPoint,
    UtilizationReport, REPORT_CSV_COLUMNS,
};
pub use series::{
    BookedSeries, NewSeries, Occurrence, OccurrenceLine, Repeat, SeriesForm, SeriesPlan, SeriesPreview, WEEKDAY_NAMES,
};
pub use session::{SessionStatus, SessionStep, StepState};
pub use site::{AssetUrls, Bundle};
pub use tenant::{
    NewTenant, QuotaEntry, QuotaLimit, QuotaTarget, QuotaUsage, Tenant, TenantPatch, TenantQuota, TenantUsage,
    TenantsPage,
};
pub use tokenomics::{CostModel, CostModelForm, MeasuredUtilization, TokenomicsInputs, TokenomicsView};
pub use units::{currency_code, figure, figure_text, DEFAULT_CURRENCY, GPU_HOURS};
pub use waitlist::{WaitlistEntry, WaitlistLine, WaitlistState};
pub use worker::{ClusterHealth, WorkerFailure, WorkerProcess, WorkerStatus};

/// A text column read as one of an enum's states (`$ty::parse`): a value the
/// enum does not know is a decode error naming it (`what`), never a silent
/// fallback to some other state.
#[cfg(feature = "ssr")]
macro_rules! checked_text_decode {
    ($ty:ty, $what:literal) => {
        impl sqlx::Type<sqlx::Postgres> for $ty {
            fn type_info() -> sqlx::postgres::PgTypeInfo {
                <&str as sqlx::Type<sqlx::Postgres>>::type_info()
            }

            fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <&str as sqlx::Type<sqlx::Postgres>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Postgres> for $ty {
            fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                let text = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
                <$ty>::parse(text).ok_or_else(|| format!(concat!("unknown ", $what, " `{}`"), text).into())
            }
        }
    };
}
#[cfg(feature = "ssr")]
pub(crate) use checked_text_decode;

/// A request field that broke a rule, and why; becomes a 422 naming the
/// field (the REST API's body keeps `field` and "field: reason"). As text
/// it is a sentence for people: "Horizon days must be between 1 and 365."
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{}", FormRefusal::about(field, &field_words(field), reason).sentence)]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { field: field.into(), reason: reason.into() }
    }
}

/// A request field's name as words, for a page that has no label of its
/// own for it: "horizon_days" → "Horizon days", "kinds[0].capacity" →
/// "Capacity (kind row 1)", "tenants[2]" → "Tenant 3".
pub fn field_words(field: &str) -> String {
    let words = |name: &str| {
        name.split('_')
            .map(|w| match w {
                "gib" => "GiB",
                "mib" => "MiB",
                "gb" => "GB",
                "id" => "ID",
                "ids" => "IDs",
                "cpu" => "CPU",
                "vram" => "VRAM",
                "pue" => "PUE",
                "pct" => "percent",
                other => other,
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    // "kinds[0]" → ("kind", 1): a list's item by its singular and its place.
    let item = |segment: &str| list_entry(segment).map(|(list, n)| (words(list.strip_suffix('s').unwrap_or(list)), n));
    let (head, last) = match field.rsplit_once('.') {
        Some((head, last)) => (Some(head), last),
        None => (None, field),
    };
    // "filter[user]": a map's entry, by its key.
    let entry = |segment: &str| {
        let (map, rest) = segment.split_once('[')?;
        Some((words(rest.strip_suffix(']')?), words(map)))
    };
    let text = match (head.and_then(item), item(last), entry(last)) {
        (Some((list, n)), _, _) => format!("{} ({list} row {n})", words(last)),
        (None, Some((list, n)), _) => format!("{list} {n}"),
        (None, None, Some((key, map))) => format!("{key} ({map})"),
        (None, None, None) => words(last),
    };
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A list's entry as a request names it ("kinds[0]"): the list, and the
/// entry's place counted from 1, as people count.
pub fn list_entry(segment: &str) -> Option<(&str, usize)> {
    let (list, rest) = segment.split_once('[')?;
    let index: usize = rest.strip_suffix(']')?.parse().ok()?;
    Some((list, index + 1))
}

/// A form the server could not answer: the field at fault (its input's
/// name), if one, and a sentence about it for people, shown beside it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FormRefusal {
    pub field: Option<String>,
    pub sentence: String,
}

impl FormRefusal {
    /// `reason` about the field labelled `label`, as a sentence: "To must
    /// be after the start."; a reason that is not said of the field ("choose
    /// a pool and kind") follows its label: "Pool: choose a pool and kind."
    pub fn about(field: &str, label: &str, reason: &str) -> Self {
        let end = if reason.ends_with('.') { "" } else { "." };
        let said_of = reason.split(' ').next().is_some_and(|verb| {
            ["must", "is", "are", "has", "names", "needs", "cannot", "may", "was", "does", "lies", "overlaps"]
                .contains(&verb)
        });
        let between = if said_of { " " } else { ": " };
        Self { field: Some(field.to_string()), sentence: format!("{label}{between}{reason}{end}") }
    }
}

/// The most characters a booking's note (or a rejection's reason) holds:
/// the server's check and the forms' counters.
pub const NOTE_LIMIT: usize = 1000;

/// A length as people say it: "7 days", "36 hours", "1 h 30 min",
/// "15 minutes" (never "10080 minutes").
pub fn duration_text(minutes: i64) -> String {
    match (minutes / 1440, minutes % 1440, minutes / 60, minutes % 60) {
        (days, 0, _, _) if days > 0 => counted(days, "day", "days"),
        (_, _, hours, 0) if hours > 0 => counted(hours, "hour", "hours"),
        (_, _, 0, m) => counted(m, "minute", "minutes"),
        (_, _, h, m) => format!("{h} h {m} min"),
    }
}

/// "1 unit", "2 units": a count with its noun in the right number.
pub fn counted(n: impl Into<i64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod words {
    #[test]
    fn lengths_read_in_days_hours_and_minutes() {
        use super::duration_text;
        assert_eq!(duration_text(10080), "7 days");
        assert_eq!(duration_text(1440), "1 day");
        assert_eq!(duration_text(2160), "36 hours");
        assert_eq!(duration_text(90), "1 h 30 min");
        assert_eq!(duration_text(15), "15 minutes");
        assert_eq!(duration_text(525600), "365 days");
    }

    #[test]
    fn a_refused_field_reads_as_a_sentence_about_it() {
        use super::{field_words, FieldError};
        assert_eq!(
            FieldError::new("horizon_days", "must be between 1 and 365").to_string(),
            "Horizon days must be between 1 and 365."
        );
        assert_eq!(
            FieldError::new("until", "must be on or after the first window's day.").to_string(),
            "Until must be on or after the first window's day."
        );
        assert_eq!(field_words("kinds[0].storage_gib_per_unit"), "Storage GiB per unit (kind row 1)");
        assert_eq!(field_words("tenants[2]"), "Tenant 3");
        assert_eq!(field_words("preferences[1].event"), "Event (preference row 2)");
        assert_eq!(field_words("pool_id"), "Pool ID");
        assert_eq!(field_words("filter[user]"), "User (filter)");
        assert_eq!(FieldError::new("pool", "choose a pool and kind").to_string(), "Pool: choose a pool and kind.");
    }
}
