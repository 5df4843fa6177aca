//! A pool's idle-reclaim policy (off by default; admins set it).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(deny_unknown_fields)]
pub struct IdlePolicy {
    /// Warn and end idle bookings, release no-shows.
    pub enabled: bool,
    /// GPUs below this busy % count as idle (1-100).
    pub threshold_pct: i32,
    /// Idle this long (minutes, 5-1440): warned; never opened this long after the start: a no-show.
    pub idle_minutes: i32,
    /// Still idle this much longer (minutes, 5-1440) after the warning: ended.
    pub grace_minutes: i32,
}

impl Default for IdlePolicy {
    fn default() -> Self {
        Self { enabled: false, threshold_pct: 5, idle_minutes: 30, grace_minutes: 30 }
    }
}

impl IdlePolicy {
    pub fn validate(&self) -> Result<(), super::FieldError> {
        let within = |field: &str, value: i32, low: i32, high: i32| {
            if (low..=high).contains(&value) {
                Ok(())
            } else {
                Err(super::FieldError::new(field, format!("must be between {low} and {high}")))
            }
        };
        within("threshold_pct", self.threshold_pct, 1, 100)?;
        within("idle_minutes", self.idle_minutes, 5, 1440)?;
        within("grace_minutes", self.grace_minutes, 5, 1440)
    }

    pub fn describe(&self) -> String {
        if self.enabled {
            format!(
                "on: below {} % for {} min warns, {} min more ends; never opened and idle {} min after the start is a no-show",
                self.threshold_pct, self.idle_minutes, self.grace_minutes, self.idle_minutes
            )
        } else {
            "off".into()
        }
    }
}
