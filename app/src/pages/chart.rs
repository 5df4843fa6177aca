//! What every chart shares: round tick values on a value axis, with their
//! gridlines and units. The report's trend and a session's device charts
//! draw their axes with it; each chart says in its own words what it
//! shows (its name, its table, its tooltips).

use leptos::prelude::*;

/// Round values from 0 to at least `most`, 1, 2 or 5 × 10ⁿ apart, about
/// `count` of them: the ticks a reader expects ("0 20 40 60 80"), never
/// "0 … 96".
pub fn nice_ticks(most: f64, count: usize) -> Vec<f64> {
    let most = if most.is_finite() && most > 0.0 { most } else { 1.0 };
    let rough = most / count.max(1) as f64;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step =
        [1.0, 2.0, 5.0, 10.0].into_iter().map(|f| f * magnitude).find(|s| *s >= rough).unwrap_or(magnitude * 10.0);
    let top = (most / step).ceil() as usize;
    (0..=top).map(|i| i as f64 * step).collect()
}

/// A tick's value as its label writes it: whole where it is whole.
pub fn tick_text(value: f64) -> String {
    if (value - value.round()).abs() < 1e-9 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// Where a value axis runs: `top` and `bottom` (the plot's edges, in the
/// SVG's units) and the value at the top tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub top: f64,
    pub bottom: f64,
    pub most: f64,
}

impl Scale {
    pub fn y(&self, value: f64) -> f64 {
        self.bottom - (value / self.most).clamp(0.0, 1.0) * (self.bottom - self.top)
    }
}

/// Horizontal gridlines from `left` to `right` at `ticks`, each labelled
/// with its value and `unit` on the side `anchor` says ("end": left of
/// `x`, "start": right of it).
pub fn value_axis(
    ticks: &[f64],
    scale: Scale,
    (left, right): (f64, f64),
    (x, anchor): (f64, &'static str),
    unit: &'static str,
) -> impl IntoView {
    ticks
        .iter()
        .map(|&value| {
            let y = scale.y(value);
            view! {
                <line class="grid" x1=left y1=y x2=right y2=y/>
                <text class="tick value" x=x y=y + 4.0 text-anchor=anchor>{format!("{}{unit}", tick_text(value))}</text>
            }
        })
        .collect_view()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_reach_the_top() {
        assert_eq!(nice_ticks(96.0, 5), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(7.3, 4), [0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(1.0, 4), [0.0, 0.5, 1.0]);
        assert_eq!(nice_ticks(0.0, 4), [0.0, 0.5, 1.0]);
        assert_eq!(nice_ticks(100.0, 4), [0.0, 50.0, 100.0]);
        assert_eq!(nice_ticks(f64::NAN, 4), [0.0, 0.5, 1.0]);
        assert_eq!(tick_text(0.5), "0.5");
        assert_eq!(tick_text(40.0), "40");
    }
}
