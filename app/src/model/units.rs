//! The units every figure is in, named once. A **unit** is one of a kind's
//! units (a whole GPU, or one MIG slice); a **unit-hour** is one unit for an
//! hour; a **GPU-hour** is always a whole-GPU equivalent: a unit-hour of a
//! kind is `1 / slices_per_gpu` GPU-hours. Quotas, the dashboard, reports,
//! showback and tokenomics count GPU-hours; prices are per unit-hour of a
//! kind (a pool's per GPU-hour is its default), in the site's currency.

use super::FieldError;

/// How pages and CSV headers name a GPU-hour.
pub const GPU_HOURS: &str = "GPU-hours (whole-GPU equivalent)";

/// The currency prices are in when the site names none.
pub const DEFAULT_CURRENCY: &str = "USD";

/// An ISO 4217 code: three capital letters (`EUR`, `USD`, `CHF`).
pub fn currency_code(text: &str) -> Result<String, FieldError> {
    let code = text.trim();
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(code.to_string())
    } else {
        Err(FieldError::new("currency", "must be an ISO 4217 code of three capital letters, such as EUR or USD"))
    }
}

/// A figure as it is shown and served: rounded to two decimals, and never
/// below zero (sums of floating-point parts leave `-1.1e-16` where nothing
/// is left).
pub fn figure(value: f64) -> f64 {
    let rounded = (value * 100.0).round() / 100.0;
    // `0.0` also replaces `-0.0` and NaN, which `max` would not promise.
    if rounded > 0.0 {
        rounded
    } else {
        0.0
    }
}

/// A figure as a page shows it: `figure`'s two decimals, without trailing
/// zeros ("3", "0.25", "1.5").
pub fn figure_text(value: f64) -> String {
    let text = format!("{:.2}", figure(value));
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_rounded_and_never_negative() {
        assert_eq!(figure(-1.1e-16), 0.0);
        assert!(figure(-1.1e-16).is_sign_positive());
        assert_eq!(figure(2.0 / 3.0), 0.67);
        assert_eq!(figure(f64::NAN), 0.0);
        assert_eq!(
            (figure_text(3.0), figure_text(0.25), figure_text(1.504), figure_text(-0.0)),
            ("3".into(), "0.25".into(), "1.5".into(), "0".into())
        );
    }

    #[test]
    fn currency_codes_are_three_capitals() {
        assert_eq!(currency_code(" EUR ").unwrap(), "EUR");
        for bad in ["eur", "EURO", "€", ""] {
            assert_eq!(currency_code(bad).unwrap_err().field, "currency");
        }
    }
}
