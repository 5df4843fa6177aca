//! From DCGM exporter series to one row per booking and minute. Pure, so the
//! label rules are tested without a Prometheus.
//!
//! - A series belongs to the session whose namespace it names: the pod's
//!   namespace is `namespace`, or `exported_namespace` when the
//!   ServiceMonitor does not honour the exporter's labels (then `namespace`
//!   is the exporter's own).
//! - A device is one GPU (`UUID`, else `gpu`) or one MIG instance of it
//!   (`GPU_I_ID`). A MIG instance reports no `GPU_UTIL`: its busy fraction is
//!   `GR_ENGINE_ACTIVE`; a whole GPU uses `GPU_UTIL` / 100, or
//!   `GR_ENGINE_ACTIVE` where profiling metrics are all it exports.
//! - Power is a whole GPU's: it is summed for whole GPUs only (a MIG
//!   instance's series repeats its parent's draw).

use super::prometheus::Series;
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// The metrics Berth reads, one PromQL query each per round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    GpuUtil,
    EngineActive,
    MemoryUsed,
    Power,
}

impl Metric {
    pub const ALL: [Metric; 4] = [Metric::GpuUtil, Metric::EngineActive, Metric::MemoryUsed, Metric::Power];

    pub fn name(self) -> &'static str {
        match self {
            Metric::GpuUtil => "DCGM_FI_DEV_GPU_UTIL",
            Metric::EngineActive => "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            Metric::MemoryUsed => "DCGM_FI_DEV_FB_USED",
            Metric::Power => "DCGM_FI_DEV_POWER_USAGE",
        }
    }

    /// The last minute's average of every Berth session's series, under
    /// either label spelling: one query, however many sessions are live.
    /// A renamed series (`exported_namespace`) must come from a target
    /// outside the sessions' namespaces, and a series named by `namespace`
    /// must not be a renamed one: a tenant's own pod, scraped by annotation,
    /// could otherwise publish DCGM-named series for another tenant's
    /// namespace and have that session reclaimed as idle.
    pub fn query(self, selector: &DcgmSelector) -> String {
        let name = self.name();
        let extra = selector.0.as_str();
        let comma = if extra.is_empty() { "" } else { "," };
        format!(
            "avg_over_time({name}{{namespace=~\"berth-.+\",exported_namespace=\"\"{comma}{extra}}}[1m]) or \
             avg_over_time({name}{{exported_namespace=~\"berth-.+\",namespace!~\"berth-.+\"{comma}{extra}}}[1m])"
        )
    }
}

/// Label matchers that only the DCGM exporter's series carry, such as
/// `job="nvidia-dcgm-exporter"` (`--dcgm-selector`): with `honor_labels` a
/// scraped target names its own namespace, so only the scrape job tells the
/// exporter from a pod that imitates it. Empty: any series of the names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcgmSelector(String);

impl std::str::FromStr for DcgmSelector {
    type Err = String;

    /// Comma-separated `label="value"` matchers (`=`, `!=`, `=~`, `!~`);
    /// nothing else reaches the PromQL.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || format!("`{text}` is not a list of label matchers such as job=\"nvidia-dcgm-exporter\"");
        let mut matchers = Vec::new();
        let mut rest = text.trim();
        while !rest.is_empty() {
            let (matcher, after) = label_matcher(rest).ok_or_else(invalid)?;
            matchers.push(matcher);
            rest = after.trim_start();
            rest = match rest.strip_prefix(',') {
                Some(next) => next.trim_start(),
                None if rest.is_empty() => rest,
                None => return Err(invalid()),
            };
        }
        Ok(Self(matchers.join(",")))
    }
}

/// One `label op "value"` at the start of `text`, normalised, and what follows it.
fn label_matcher(text: &str) -> Option<(String, &str)> {
    let name_len = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    let name = &text[..name_len];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let rest = text[name_len..].trim_start();
    let op = ["=~", "!~", "!=", "="].into_iter().find(|op| rest.starts_with(op))?;
    let quoted = rest[op.len()..].trim_start().strip_prefix('"')?;
    let mut escaped = false;
    for (at, c) in quoted.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some((format!("{name}{op}\"{}\"", &quoted[..at]), &quoted[at + 1..])),
            _ => {}
        }
    }
    None
}

/// A live booking the sampler measures.
#[derive(Clone, Debug)]
pub struct LiveBooking {
    pub id: Uuid,
    pub namespace: String,
    pub units: i32,
}

/// One booking's minute.
#[derive(Clone, Debug, PartialEq)]
pub struct MinuteUsage {
    pub booking_id: Uuid,
    /// Mean over the booking's devices, 0–1.
    pub busy: f64,
    pub memory_used_mib: f64,
    /// Absent when only MIG instances were seen.
    pub power_w: Option<f64>,
    pub devices: i32,
    /// Devices whose engine was busy at or above the site's threshold.
    pub active_devices: i32,
    /// Each device's own minute, for the charts.
    pub per_device: Vec<DeviceMinute>,
}

/// One GPU's or MIG instance's minute.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceMinute {
    /// "GPU 0", "GPU 1 · MIG 1g.24gb #3": what the charts call it.
    pub device: String,
    /// Engine busy, 0–1.
    pub busy: f64,
    pub memory_used_mib: f64,
}

/// How busy a device's engine must be for its minute to count as *active*
/// (`--active-threshold`, a percentage; 10 % by default): a notebook
/// kernel that holds the GPU but waits for its user stays below it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveThreshold(f64);

impl ActiveThreshold {
    /// The fraction of engine time, 0–1.
    pub fn fraction(self) -> f64 {
        self.0
    }
}

impl Default for ActiveThreshold {
    fn default() -> Self {
        Self(0.10)
    }
}

impl std::str::FromStr for ActiveThreshold {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let pct: f64 =
            text.trim().trim_end_matches('%').trim().parse().map_err(|_| format!("`{text}` is not a percentage"))?;
        if pct > 0.0 && pct <= 100.0 {
            Ok(Self(pct / 100.0))
        } else {
            Err(format!("the active threshold is a percentage above 0 and at most 100, not {text}"))
        }
    }
}

fn label<'a>(series: &'a Series, name: &str) -> Option<&'a str> {
    series.labels.get(name).map(String::as_str).filter(|v| !v.is_empty())
}

fn pod_namespace(series: &Series) -> Option<&str> {
    label(series, "exported_namespace").or_else(|| label(series, "namespace"))
}

/// (GPU, MIG instance or "") — the device a series measures.
/// "GPU 0" (its index, else its UUID), and for a MIG instance " · MIG 1g.24gb #3".
fn device_name(series: &Series) -> String {
    let gpu = label(series, "gpu").or_else(|| label(series, "UUID")).unwrap_or("?");
    match (label(series, "GPU_I_PROFILE"), label(series, "GPU_I_ID")) {
        (Some(profile), Some(id)) => format!("GPU {gpu} · MIG {profile} #{id}"),
        (None, Some(id)) => format!("GPU {gpu} · MIG #{id}"),
        _ => format!("GPU {gpu}"),
    }
}

fn device(series: &Series) -> (String, String) {
    let gpu = label(series, "UUID").or_else(|| label(series, "gpu")).unwrap_or("?");
    (gpu.to_string(), label(series, "GPU_I_ID").unwrap_or("").to_string())
}

#[derive(Default)]
struct Device {
    util: Option<f64>,
    engine: Option<f64>,
    memory: Option<f64>,
    power: Option<f64>,
    mig: bool,
    /// The GPU's index and the MIG profile, as people name the device.
    name: String,
}

/// One row per booking that has at least one device with a busy figure;
/// a booking without series gets no row (unknown is not idle). A device is
/// active when its engine (`GR_ENGINE_ACTIVE`, else `GPU_UTIL`) reached
/// `threshold`.
pub fn per_booking(
    results: &HashMap<Metric, Vec<Series>>,
    bookings: &[LiveBooking],
    threshold: ActiveThreshold,
) -> Vec<MinuteUsage> {
    let by_namespace: HashMap<&str, &LiveBooking> = bookings.iter().map(|b| (b.namespace.as_str(), b)).collect();
    let mut devices: BTreeMap<(Uuid, (String, String)), Device> = BTreeMap::new();
    for (metric, series) in results {
        for s in series {
            let Some(booking) = pod_namespace(s).and_then(|ns| by_namespace.get(ns)) else { continue };
            let d = devices.entry((booking.id, device(s))).or_default();
            d.mig |= label(s, "GPU_I_PROFILE").is_some() || label(s, "GPU_I_ID").is_some();
            if d.name.is_empty() {
                d.name = device_name(s);
            }
            let slot = match metric {
                Metric::GpuUtil => &mut d.util,
                Metric::EngineActive => &mut d.engine,
                Metric::MemoryUsed => &mut d.memory,
                Metric::Power => &mut d.power,
            };
            *slot = Some(s.value);
        }
    }
    let mut rows: BTreeMap<Uuid, MinuteUsage> = BTreeMap::new();
    for ((booking_id, _), mut d) in devices {
        let busy = if d.mig { d.engine } else { d.util.map(|u| u / 100.0).or(d.engine) };
        let Some(busy) = busy else { continue };
        let engine = d.engine.or(d.util.map(|u| u / 100.0)).unwrap_or(busy);
        let row = rows.entry(booking_id).or_insert(MinuteUsage {
            booking_id,
            busy: 0.0,
            memory_used_mib: 0.0,
            power_w: None,
            devices: 0,
            active_devices: 0,
            per_device: Vec::new(),
        });
        row.busy += busy.clamp(0.0, 1.0);
        row.devices += 1;
        row.active_devices += i32::from(engine >= threshold.fraction());
        row.memory_used_mib += d.memory.unwrap_or(0.0).max(0.0);
        row.per_device.push(DeviceMinute {
            device: std::mem::take(&mut d.name),
            busy: engine.clamp(0.0, 1.0),
            memory_used_mib: d.memory.unwrap_or(0.0).max(0.0),
        });
        if !d.mig {
            if let Some(power) = d.power {
                row.power_w = Some(row.power_w.unwrap_or(0.0) + power.max(0.0));
            }
        }
    }
    rows.into_values().map(|row| MinuteUsage { busy: row.busy / f64::from(row.devices), ..row }).collect()
}

#[cfg(test)]
mod tests;
