//! Times as people type them at a shell: "2026-12-01 09:00" in their zone
//! (`--tz`, else the one chosen in Settings, else the computer's), "now",
//! or RFC 3339; and back, for tables, with the zone named.

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// The zone times are read and written in.
#[derive(Clone, Copy, Debug)]
pub enum Zone {
    Local,
    Named(Tz),
}

impl Zone {
    pub fn of(tz: Option<&str>) -> anyhow::Result<Self> {
        match tz {
            None => Ok(Zone::Local),
            Some(name) => name
                .parse()
                .map(Zone::Named)
                .map_err(|_| anyhow::anyhow!("--tz: `{name}` is not an IANA time zone (e.g. Europe/Berlin)")),
        }
    }

    pub fn parse(self, field: &str, text: &str) -> anyhow::Result<DateTime<Utc>> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("now") {
            // Windows start on quarter hours: "now" is the one under way.
            let now = Utc::now().timestamp();
            return Ok(DateTime::from_timestamp(now - now.rem_euclid(900), 0).unwrap_or_default());
        }
        if let Ok(at) = DateTime::parse_from_rfc3339(text) {
            return Ok(at.with_timezone(&Utc));
        }
        let naive = ["%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d"]
            .iter()
            .find_map(|format| match *format {
                "%Y-%m-%d" => chrono::NaiveDate::parse_from_str(text, format).ok().and_then(|d| d.and_hms_opt(0, 0, 0)),
                _ => NaiveDateTime::parse_from_str(text, format).ok(),
            })
            .ok_or_else(|| {
                anyhow::anyhow!("{field}: `{text}` is not a time like \"2026-12-01 09:00\", a date or \"now\"")
            })?;
        let local = match self {
            Zone::Local => Local.from_local_datetime(&naive).earliest().map(|t| t.with_timezone(&Utc)),
            Zone::Named(tz) => tz.from_local_datetime(&naive).earliest().map(|t| t.with_timezone(&Utc)),
        };
        local.ok_or_else(|| anyhow::anyhow!("{field}: {text} does not exist in this time zone (clocks skip it)"))
    }

    /// "Tue 2026-12-01 09:00 CET": the zone is named, as a mail names it.
    pub fn show(self, at: DateTime<Utc>) -> String {
        match self {
            Zone::Local => at.with_timezone(&Local).format("%a %Y-%m-%d %H:%M %Z").to_string(),
            Zone::Named(tz) => at.with_timezone(&tz).format("%a %Y-%m-%d %H:%M %Z").to_string(),
        }
    }
}

/// `1h30m`, `3h`, `90m`, `2d`: a booking's length.
pub fn duration(text: &str) -> Result<chrono::Duration, String> {
    let mut total = chrono::Duration::zero();
    let mut digits = String::new();
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: i64 = digits.parse().map_err(|_| format!("`{text}` is not like 3h, 90m or 1h30m"))?;
        digits.clear();
        total += match c {
            'd' => chrono::Duration::days(n),
            'h' => chrono::Duration::hours(n),
            'm' => chrono::Duration::minutes(n),
            _ => return Err(format!("`{text}`: units are d, h and m")),
        };
    }
    if !digits.is_empty() || total <= chrono::Duration::zero() || total > chrono::Duration::days(366) {
        return Err(format!("`{text}` is not like 3h, 90m or 1h30m (at most 366 days)"));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_times_read_in_the_chosen_zone() {
        let berlin = Zone::of(Some("Europe/Berlin")).unwrap();
        assert_eq!(berlin.parse("from", "2026-12-01 09:00").unwrap().to_rfc3339(), "2026-12-01T08:00:00+00:00");
        assert_eq!(berlin.parse("from", "2026-07-01T09:00").unwrap().to_rfc3339(), "2026-07-01T07:00:00+00:00");
        assert_eq!(berlin.parse("from", "2026-12-01T09:00:00Z").unwrap().to_rfc3339(), "2026-12-01T09:00:00+00:00");
        assert!(berlin.parse("from", "2026-03-29 02:30").unwrap_err().to_string().contains("does not exist"));
        assert!(berlin.parse("from", "tomorrow").unwrap_err().to_string().starts_with("from:"));
        assert!(Zone::of(Some("Mars/Olympus")).is_err());
        let now = berlin.parse("from", "now").unwrap();
        assert!(now.timestamp() % 900 == 0 && Utc::now() - now < chrono::Duration::minutes(15));
    }

    #[test]
    fn durations_add_their_parts() {
        assert_eq!(duration("1h30m").unwrap(), chrono::Duration::minutes(90));
        assert_eq!(duration("2d").unwrap(), chrono::Duration::days(2));
        for bad in ["", "3", "h", "3x", "0h", "400d"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }
}
