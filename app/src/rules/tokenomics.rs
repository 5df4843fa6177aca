//! The cost model of a pool's GPUs and what it means per token. Pure
//! functions, so the browser (as you type), the script-less form and
//! `POST /api/v1/tokenomics/evaluate` give the same answer.
//!
//! cost per GPU-hour = capex / (years × 8 760) + kW × PUE × price per kWh
//!                     + capex × maintenance / 8 760 + rent per GPU-hour
//! cost per million tokens = cost per GPU-hour / (tokens/s × 3 600 × utilisation / 10⁶)

use super::FieldError;
pub use crate::model::{preset, ThroughputPreset, TokenomicsInputs, PRESETS};
use serde::{Deserialize, Serialize};

pub const HOURS_PER_YEAR: f64 = 8_760.0;

/// How the pool's size compares with the GPUs the token demand needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provisioning {
    UnderProvisioned,
    RightSized,
    OverProvisioned,
}

impl Provisioning {
    pub fn label(self) -> &'static str {
        match self {
            Self::UnderProvisioned => "under-provisioned",
            Self::RightSized => "right-sized",
            Self::OverProvisioned => "over-provisioned",
        }
    }
}

/// Headroom above the GPUs needed that still counts as right-sized: a pool
/// at exactly the demand has no room for a peak or a failed GPU.
pub const RIGHT_SIZED_HEADROOM: f64 = 0.25;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenomicsResult {
    pub cost_per_gpu_hour: f64,
    /// Absent when no tokens are produced (zero throughput or utilisation).
    pub cost_per_million_tokens: Option<f64>,
    /// The utilisation at which tokens cost `price_per_million_tokens`; above
    /// 1 means the price cannot be beaten even with the GPUs always busy.
    pub break_even_utilization: Option<f64>,
    /// GPUs that produce `tokens_per_day` at the utilisation given.
    pub gpus_needed: Option<u64>,
    /// What those GPUs cost per day (they cost every hour, busy or not).
    pub cost_per_day: Option<f64>,
    pub within_budget: Option<bool>,
    pub provisioning: Option<Provisioning>,
    /// Why a figure is absent or what it means, in words for the page.
    pub notes: Vec<String>,
}

fn check(field: &str, value: f64, min: f64, max: f64) -> Result<(), FieldError> {
    if !value.is_finite() {
        return Err(FieldError::new(field, "must be a number"));
    }
    if value < min || value > max {
        return Err(FieldError::new(field, format!("must be between {min} and {max}")));
    }
    Ok(())
}

fn check_optional(field: &str, value: Option<f64>, min: f64, max: f64) -> Result<(), FieldError> {
    value.map_or(Ok(()), |v| check(field, v, min, max))
}

/// Rejects inputs no GPU has: each bound is generous but finite, so every
/// figure the model computes stays finite.
pub fn validate(i: &TokenomicsInputs) -> Result<(), FieldError> {
    check("capex_per_gpu", i.capex_per_gpu, 0.0, 1e9)?;
    check("amortization_years", i.amortization_years, 0.1, 50.0)?;
    check("power_kw", i.power_kw, 0.0, 100.0)?;
    check("pue", i.pue, 1.0, 5.0)?;
    check("electricity_per_kwh", i.electricity_per_kwh, 0.0, 100.0)?;
    check("maintenance_pct_per_year", i.maintenance_pct_per_year, 0.0, 100.0)?;
    check_optional("rent_per_gpu_hour", i.rent_per_gpu_hour, 0.0, 1e6)?;
    check("tokens_per_second", i.tokens_per_second, 0.0, 1e9)?;
    check("utilization", i.utilization, 0.0, 1.0)?;
    check_optional("price_per_million_tokens", i.price_per_million_tokens, 0.0, 1e9)?;
    check_optional("tokens_per_day", i.tokens_per_day, 0.0, 1e18)?;
    check_optional("budget_per_day", i.budget_per_day, 0.0, 1e12)?;
    check_optional("gpus_available", i.gpus_available, 0.0, 1e6)?;
    Ok(())
}

pub fn cost_per_gpu_hour(i: &TokenomicsInputs) -> f64 {
    i.capex_per_gpu / (i.amortization_years * HOURS_PER_YEAR)
        + i.power_kw * i.pue * i.electricity_per_kwh
        + i.capex_per_gpu * (i.maintenance_pct_per_year / 100.0) / HOURS_PER_YEAR
        + i.rent_per_gpu_hour.unwrap_or(0.0)
}

/// Millions of tokens one GPU produces per hour at full use.
fn million_tokens_per_busy_hour(i: &TokenomicsInputs) -> f64 {
    i.tokens_per_second * 3_600.0 / 1e6
}

/// The whole model; `Err` names the first input out of range.
pub fn evaluate(i: &TokenomicsInputs) -> Result<TokenomicsResult, FieldError> {
    validate(i)?;
    let hourly = cost_per_gpu_hour(i);
    let mut result = TokenomicsResult { cost_per_gpu_hour: hourly, ..Default::default() };
    let per_busy_hour = million_tokens_per_busy_hour(i);
    if per_busy_hour <= 0.0 {
        result.notes.push("With a throughput of 0 tokens/s no tokens are produced: there is no cost per token.".into());
        return Ok(result);
    }
    if i.utilization > 0.0 {
        result.cost_per_million_tokens = Some(hourly / (per_busy_hour * i.utilization));
    } else {
        result.notes.push("At 0 % utilisation no tokens are produced: there is no cost per token.".into());
    }
    if let Some(price) = i.price_per_million_tokens {
        if price > 0.0 {
            let needed = hourly / (per_busy_hour * price);
            result.break_even_utilization = Some(needed);
            if needed > 1.0 {
                result.notes.push(format!(
                    "Even always busy these GPUs cannot produce tokens for {price} per million: they would need {:.0} % utilisation.",
                    needed * 100.0
                ));
            }
        } else {
            result.notes.push("A price of 0 per million tokens cannot be beaten.".into());
        }
    }
    if let Some(demand) = i.tokens_per_day {
        if i.utilization > 0.0 {
            let per_gpu_day = i.tokens_per_second * 86_400.0 * i.utilization;
            let gpus = (demand / per_gpu_day).ceil().max(if demand > 0.0 { 1.0 } else { 0.0 });
            let cost = gpus * hourly * 24.0;
            result.gpus_needed = Some(gpus as u64);
            result.cost_per_day = Some(cost);
            result.within_budget = i.budget_per_day.map(|budget| cost <= budget);
            result.provisioning = i.gpus_available.map(|available| {
                if available < gpus {
                    Provisioning::UnderProvisioned
                } else if available > (gpus * (1.0 + RIGHT_SIZED_HEADROOM)).ceil() {
                    Provisioning::OverProvisioned
                } else {
                    Provisioning::RightSized
                }
            });
        } else {
            result.notes.push("At 0 % utilisation no number of GPUs meets a token demand.".into());
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example.
    fn h100() -> TokenomicsInputs {
        TokenomicsInputs {
            capex_per_gpu: 30_000.0,
            amortization_years: 4.0,
            power_kw: 0.7,
            pue: 1.2,
            electricity_per_kwh: 0.083,
            maintenance_pct_per_year: 10.0,
            tokens_per_second: 8_088.0,
            utilization: 1.0,
            price_per_million_tokens: Some(0.10),
            ..Default::default()
        }
    }

    #[test]
    fn the_worked_check_costs_1_27_per_gpu_hour_and_0_044_per_million_tokens() {
        let r = evaluate(&h100()).unwrap();
        assert!((r.cost_per_gpu_hour - 1.27).abs() <= 0.01, "{}", r.cost_per_gpu_hour);
        assert!((r.cost_per_million_tokens.unwrap() - 0.044).abs() <= 0.0005, "{:?}", r.cost_per_million_tokens);
        assert!((r.break_even_utilization.unwrap() - 0.436).abs() <= 0.0005, "{:?}", r.break_even_utilization);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }

    #[test]
    fn pricing_at_the_break_even_utilisation_gives_back_the_price() {
        for price in [0.05, 0.10, 0.25, 1.0] {
            let mut inputs = h100();
            inputs.price_per_million_tokens = Some(price);
            let break_even = evaluate(&inputs).unwrap().break_even_utilization.unwrap();
            inputs.utilization = break_even.min(1.0);
            let cost = evaluate(&inputs).unwrap().cost_per_million_tokens.unwrap();
            if break_even <= 1.0 {
                assert!((cost - price).abs() < 1e-9, "{price}: {cost}");
            } else {
                assert!(cost > price, "{price}: at 100 % it still costs {cost}");
            }
        }
    }

    #[test]
    fn lower_utilisation_raises_the_cost_per_token_in_proportion() {
        let mut inputs = h100();
        inputs.utilization = 0.8;
        let at_80 = evaluate(&inputs).unwrap().cost_per_million_tokens.unwrap();
        inputs.utilization = 0.4;
        let at_40 = evaluate(&inputs).unwrap().cost_per_million_tokens.unwrap();
        assert!((at_40 / at_80 - 2.0).abs() < 1e-9);
    }

    #[test]
    fn zero_throughput_or_utilisation_gives_a_message_not_an_infinity() {
        let mut inputs = h100();
        inputs.tokens_per_second = 0.0;
        inputs.tokens_per_day = Some(1e9);
        let r = evaluate(&inputs).unwrap();
        assert_eq!((r.cost_per_million_tokens, r.break_even_utilization, r.gpus_needed), (None, None, None));
        assert!(r.notes[0].contains("0 tokens/s"), "{:?}", r.notes);
        assert!(r.cost_per_gpu_hour.is_finite());

        let mut inputs = h100();
        inputs.utilization = 0.0;
        inputs.tokens_per_day = Some(1e9);
        let r = evaluate(&inputs).unwrap();
        assert_eq!((r.cost_per_million_tokens, r.gpus_needed), (None, None));
        assert!(r.break_even_utilization.unwrap().is_finite());
        assert!(r.notes.iter().any(|n| n.contains("0 % utilisation")), "{:?}", r.notes);
    }

    #[test]
    fn gpus_needed_for_a_demand_and_the_verdict_on_the_pool() {
        let mut inputs = h100();
        inputs.utilization = 0.5;
        // One GPU at 50 % makes 8 088 × 86 400 / 2 = 349.4 M tokens a day.
        inputs.tokens_per_day = Some(1_000_000_000.0);
        inputs.budget_per_day = Some(100.0);
        for (available, verdict) in [
            (2.0, Provisioning::UnderProvisioned),
            (3.0, Provisioning::RightSized),
            (4.0, Provisioning::RightSized),
            (5.0, Provisioning::OverProvisioned),
        ] {
            inputs.gpus_available = Some(available);
            let r = evaluate(&inputs).unwrap();
            assert_eq!(r.gpus_needed, Some(3));
            assert_eq!(r.provisioning, Some(verdict), "{available} GPUs");
            let per_day = r.cost_per_day.unwrap();
            assert!((per_day - 3.0 * 24.0 * r.cost_per_gpu_hour).abs() < 1e-9);
            assert_eq!(r.within_budget, Some(true), "{per_day}");
        }
        inputs.budget_per_day = Some(50.0);
        assert_eq!(evaluate(&inputs).unwrap().within_budget, Some(false));
    }

    #[test]
    fn an_unreachable_price_says_so() {
        let mut inputs = h100();
        inputs.price_per_million_tokens = Some(0.01);
        let r = evaluate(&inputs).unwrap();
        assert!(r.break_even_utilization.unwrap() > 1.0);
        assert!(r.notes.iter().any(|n| n.contains("cannot produce tokens")), "{:?}", r.notes);
    }

    #[test]
    fn out_of_range_inputs_name_their_field() {
        type Spoil = fn(&mut TokenomicsInputs);
        let cases: [(&str, Spoil); 5] = [
            ("utilization", |i| i.utilization = 1.5),
            ("pue", |i| i.pue = 0.5),
            ("amortization_years", |i| i.amortization_years = 0.0),
            ("capex_per_gpu", |i| i.capex_per_gpu = f64::NAN),
            ("budget_per_day", |i| i.budget_per_day = Some(-1.0)),
        ];
        for (field, spoil) in cases {
            let mut inputs = h100();
            spoil(&mut inputs);
            assert_eq!(evaluate(&inputs).unwrap_err().field, field);
        }
    }
}
