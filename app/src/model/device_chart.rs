//! Charts of a live session's devices: each GPU or MIG instance's engine
//! busy and memory used over a range the reader picks, with the time axis
//! in the reader's zone.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChartRange {
    #[default]
    #[serde(rename = "1h")]
    Hour,
    #[serde(rename = "6h")]
    SixHours,
    #[serde(rename = "24h")]
    Day,
    #[serde(rename = "7d")]
    Week,
}

impl ChartRange {
    pub const ALL: [ChartRange; 4] = [Self::Hour, Self::SixHours, Self::Day, Self::Week];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "1h",
            Self::SixHours => "6h",
            Self::Day => "24h",
            Self::Week => "7d",
        }
    }

    /// Unknown text is the last hour.
    pub fn parse(text: &str) -> Self {
        Self::ALL.into_iter().find(|r| r.as_str() == text).unwrap_or_default()
    }

    pub fn length(self) -> Duration {
        match self {
            Self::Hour => Duration::hours(1),
            Self::SixHours => Duration::hours(6),
            Self::Day => Duration::hours(24),
            Self::Week => Duration::days(7),
        }
    }

    /// Each point averages this long: 60 points a chart, a minute at least.
    pub fn bucket(self) -> Duration {
        (self.length() / 60).max(Duration::minutes(1))
    }

    /// "the last hour", "the last 7 days".
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Hour => "the last hour",
            Self::SixHours => "the last 6 hours",
            Self::Day => "the last 24 hours",
            Self::Week => "the last 7 days",
        }
    }
}

/// The time axis every chart of a view shares.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChartAxis {
    pub range: ChartRange,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Ticks and their labels in the reader's zone ("14:00", "Tue 24").
    pub ticks: Vec<(DateTime<Utc>, String)>,
    pub zone: String,
}

/// One device of a session: a whole GPU, or a MIG instance of one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceChart {
    /// "GPU 0", "GPU 1 · MIG 1g.24gb #3".
    pub device: String,
    pub points: Vec<ChartPoint>,
}

/// A booking's device charts, on its own page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionCharts {
    pub axis: ChartAxis,
    pub devices: Vec<DeviceChart>,
    pub simulated: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChartPoint {
    /// The bucket's start.
    pub at: DateTime<Utc>,
    /// Engine busy, 0–100 %.
    pub busy_pct: f32,
    /// Most memory used in the bucket, GiB.
    pub memory_gib: f32,
}
