//! A pool's cost model as stored, as the form carries it (text per field, so
//! a mistyped number is refused naming its field) and as the page shows it.

use super::FieldError;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a manager or admin keeps per pool. `utilization` absent means "the
/// measured one".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostModel {
    pub capex_per_gpu: f64,
    pub amortization_years: f64,
    pub power_kw: f64,
    pub pue: f64,
    pub electricity_per_kwh: f64,
    pub maintenance_pct_per_year: f64,
    #[serde(default)]
    pub rent_per_gpu_hour: Option<f64>,
    /// The preset the throughput came from, or "" when typed in.
    #[serde(default)]
    pub preset: String,
    pub tokens_per_second: f64,
    #[serde(default)]
    pub utilization: Option<f64>,
    #[serde(default)]
    pub price_per_million_tokens: Option<f64>,
    #[serde(default)]
    pub tokens_per_day: Option<f64>,
    #[serde(default)]
    pub budget_per_day: Option<f64>,
}

impl Default for CostModel {
    /// An H100 bought outright: list-price capex, 4-year life, 700 W, a
    /// typical PUE and electricity price; the 8B preset's throughput.
    fn default() -> Self {
        Self {
            capex_per_gpu: 30_000.0,
            amortization_years: 4.0,
            power_kw: 0.7,
            pue: 1.2,
            electricity_per_kwh: 0.083,
            maintenance_pct_per_year: 10.0,
            rent_per_gpu_hour: None,
            preset: super::PRESETS[0].id.to_string(),
            tokens_per_second: super::PRESETS[0].tokens_per_second,
            utilization: None,
            price_per_million_tokens: Some(0.10),
            tokens_per_day: None,
            budget_per_day: None,
        }
    }
}

impl CostModel {
    /// One line for the audit log.
    pub fn describe(&self) -> String {
        let optional = |v: Option<f64>| v.map_or("-".to_string(), |v| v.to_string());
        format!(
            "capex {} per GPU over {} years, {} kW × PUE {} at {} per kWh, maintenance {} %/year, rent {}; \
             {} tokens/s, utilisation {}; price {} per M tokens, demand {} tokens/day, budget {} per day",
            self.capex_per_gpu,
            self.amortization_years,
            self.power_kw,
            self.pue,
            self.electricity_per_kwh,
            self.maintenance_pct_per_year,
            optional(self.rent_per_gpu_hour),
            self.tokens_per_second,
            self.utilization.map_or("measured".to_string(), |u| format!("{:.1} %", u * 100.0)),
            optional(self.price_per_million_tokens),
            optional(self.tokens_per_day),
            optional(self.budget_per_day),
        )
    }

    /// The model's inputs with the utilisation to use when none is typed.
    pub fn inputs(&self, measured: f64, gpus_available: f64) -> TokenomicsInputs {
        TokenomicsInputs {
            capex_per_gpu: self.capex_per_gpu,
            amortization_years: self.amortization_years,
            power_kw: self.power_kw,
            pue: self.pue,
            electricity_per_kwh: self.electricity_per_kwh,
            maintenance_pct_per_year: self.maintenance_pct_per_year,
            rent_per_gpu_hour: self.rent_per_gpu_hour,
            tokens_per_second: self.tokens_per_second,
            utilization: self.utilization.unwrap_or(measured),
            price_per_million_tokens: self.price_per_million_tokens,
            tokens_per_day: self.tokens_per_day,
            budget_per_day: self.budget_per_day,
            gpus_available: Some(gpus_available),
        }
    }
}

/// The form: every field as typed. Utilisation is typed in percent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CostModelForm {
    pub capex_per_gpu: String,
    pub amortization_years: String,
    pub power_kw: String,
    pub pue: String,
    pub electricity_per_kwh: String,
    pub maintenance_pct_per_year: String,
    pub rent_per_gpu_hour: String,
    pub preset: String,
    pub tokens_per_second: String,
    pub utilization_pct: String,
    pub price_per_million_tokens: String,
    pub tokens_per_day: String,
    pub budget_per_day: String,
}

fn text(value: f64) -> String {
    // Shortest text that reads back as the same number.
    format!("{value}")
}

fn number(field: &str, text: &str) -> Result<f64, FieldError> {
    let cleaned = text.trim().replace([',', '_', ' '], "");
    cleaned.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| FieldError::new(field, "must be a number"))
}

fn optional(field: &str, text: &str) -> Result<Option<f64>, FieldError> {
    if text.trim().is_empty() {
        Ok(None)
    } else {
        number(field, text).map(Some)
    }
}

impl From<&CostModel> for CostModelForm {
    fn from(m: &CostModel) -> Self {
        Self {
            capex_per_gpu: text(m.capex_per_gpu),
            amortization_years: text(m.amortization_years),
            power_kw: text(m.power_kw),
            pue: text(m.pue),
            electricity_per_kwh: text(m.electricity_per_kwh),
            maintenance_pct_per_year: text(m.maintenance_pct_per_year),
            rent_per_gpu_hour: m.rent_per_gpu_hour.map(text).unwrap_or_default(),
            preset: m.preset.clone(),
            tokens_per_second: text(m.tokens_per_second),
            utilization_pct: m.utilization.map(|u| text((u * 1e4).round() / 100.0)).unwrap_or_default(),
            price_per_million_tokens: m.price_per_million_tokens.map(text).unwrap_or_default(),
            tokens_per_day: m.tokens_per_day.map(text).unwrap_or_default(),
            budget_per_day: m.budget_per_day.map(text).unwrap_or_default(),
        }
    }
}

impl CostModelForm {
    /// The typed model, or the first field that is not a number. An empty
    /// throughput takes the chosen preset's on the pool's `gpu` (so a
    /// script-less form can pick a preset), refused when the model does not
    /// fit that GPU; ranges are checked by `rules::tokenomics::validate`.
    pub fn parse(&self, gpu: Option<&super::GpuSpec>) -> Result<CostModel, FieldError> {
        let chosen = super::preset(self.preset.trim());
        let tokens_per_second = match (self.tokens_per_second.trim(), chosen) {
            ("", Some(p)) => {
                let on = p.on(gpu);
                on.tokens_per_second.ok_or_else(|| FieldError::new("preset", format!("{} {}", p.label, on.note)))?
            }
            (typed, _) => number("tokens_per_second", typed)?,
        };
        Ok(CostModel {
            capex_per_gpu: number("capex_per_gpu", &self.capex_per_gpu)?,
            amortization_years: number("amortization_years", &self.amortization_years)?,
            power_kw: number("power_kw", &self.power_kw)?,
            pue: number("pue", &self.pue)?,
            electricity_per_kwh: number("electricity_per_kwh", &self.electricity_per_kwh)?,
            maintenance_pct_per_year: number("maintenance_pct_per_year", &self.maintenance_pct_per_year)?,
            rent_per_gpu_hour: optional("rent_per_gpu_hour", &self.rent_per_gpu_hour)?,
            preset: chosen.map(|p| p.id.to_string()).unwrap_or_default(),
            tokens_per_second,
            utilization: match optional("utilization_pct", &self.utilization_pct)? {
                Some(pct) if !(0.0..=100.0).contains(&pct) => {
                    return Err(FieldError::new("utilization_pct", "must be between 0 and 100 %"))
                }
                pct => pct.map(|pct| pct / 100.0),
            },
            price_per_million_tokens: optional("price_per_million_tokens", &self.price_per_million_tokens)?,
            tokens_per_day: optional("tokens_per_day", &self.tokens_per_day)?,
            budget_per_day: optional("budget_per_day", &self.budget_per_day)?,
        })
    }
}

/// Where the default utilisation comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredUtilization {
    /// 0–1 over the period.
    pub value: f64,
    /// "measured GPU use, last 30 days", "booked hours (no measurements yet)"…
    pub source: String,
    /// True when the measurements come from the simulated cluster.
    pub simulated: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenomicsView {
    pub pools: Vec<(Uuid, String)>,
    pub pool_id: Uuid,
    pub pool_name: String,
    pub model: CostModel,
    /// Whole-GPU equivalents of the pool's kinds (a unit is `1 / slices_per_gpu`).
    pub gpus_available: f64,
    pub measured: MeasuredUtilization,
    /// Who saved the model last, and when; absent while it is the default.
    pub updated: Option<(DateTime<Utc>, String)>,
    /// The ISO 4217 code the model's amounts are in (the site's).
    #[serde(default)]
    pub currency: String,
    /// The pool's GPU model as its admin wrote it ("NVIDIA L40S"); the
    /// presets are given on the GPU it names (`gpu_of`).
    #[serde(default)]
    pub gpu_model: String,
    /// Said when the database holds `make run`'s made-up history: the
    /// measured utilisation above counts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demo_history: Option<String>,
}

/// The inputs, as the API body names them; optional ones may be absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenomicsInputs {
    pub capex_per_gpu: f64,
    pub amortization_years: f64,
    pub power_kw: f64,
    pub pue: f64,
    pub electricity_per_kwh: f64,
    pub maintenance_pct_per_year: f64,
    #[serde(default)]
    pub rent_per_gpu_hour: Option<f64>,
    /// Output tokens per second one GPU produces when busy.
    pub tokens_per_second: f64,
    /// 0–1: the share of hours the GPU is busy.
    pub utilization: f64,
    #[serde(default)]
    pub price_per_million_tokens: Option<f64>,
    #[serde(default)]
    pub tokens_per_day: Option<f64>,
    #[serde(default)]
    pub budget_per_day: Option<f64>,
    /// GPUs the pool has, to judge its size against the demand.
    #[serde(default)]
    pub gpus_available: Option<f64>,
}
