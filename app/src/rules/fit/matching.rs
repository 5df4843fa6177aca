//! The kinds a person may book that hold a run, smallest first, and the one
//! line the kind list shows of what a unit holds.

use super::catalogue::{CatalogModel, Precision, Workload, CATALOG};
use super::estimate::{estimate, FitForm, FitQuestion, MemoryEstimate, USABLE};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindOffer {
    pub pool_id: String,
    pub pool: String,
    pub kind: String,
    /// GPU memory of one unit.
    pub vram_gb: f64,
    /// Units the pool has.
    pub capacity: i32,
    /// 1 for whole GPUs; more for MIG slices (which do not pool memory).
    pub slices_per_gpu: i32,
    /// Time-sliced: a share of a GPU whose memory is not isolated.
    pub time_sliced: bool,
}

/// How a kind answers: the units that hold the run, or why none do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindFit {
    pub pool_id: String,
    pub pool: String,
    pub kind: String,
    /// Units that hold it (several whole GPUs: tensor parallel); `None`:
    /// it does not fit.
    pub units: Option<i32>,
    pub note: String,
}

/// Each kind's answer, the smallest that holds the run first (least GPU
/// memory booked, then fewest units), and, when none holds it on one GPU,
/// how many of the largest GPU tensor parallelism would need.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitAnswer {
    pub estimate: MemoryEstimate,
    pub kinds: Vec<KindFit>,
    /// A plain sentence: the best kind, or that nothing holds it.
    pub verdict: String,
}

/// The "Which kind fits my model?" page (issue 48): the form, its answer
/// and the next free windows. Here rather than in `model`, because it is
/// made of this module's types and `model` imports nothing above it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitPage {
    /// The form as asked, to fill it again.
    pub form: FitForm,
    /// Once asked: the answer, or why the question cannot be answered.
    pub answer: Option<Result<FitAnswer, crate::model::FormRefusal>>,
    /// The next free windows of the smallest kind that holds the run.
    pub next: Option<crate::model::FoundSlots>,
    /// Idempotency keys of its one-click bookings start from this.
    pub form_key: String,
    pub tz: String,
}

pub fn fit(question: &FitQuestion, offers: &[KindOffer]) -> FitAnswer {
    let estimate = estimate(question);
    let need = estimate.total_gb;
    let mut kinds: Vec<(f64, KindFit)> = offers
        .iter()
        .map(|o| {
            let usable = o.vram_gb * USABLE;
            let whole = o.slices_per_gpu <= 1 && !o.time_sliced;
            // Slices and shares do not pool their memory: one unit or none.
            let most = if whole { o.capacity.max(0) } else { o.capacity.min(1) };
            let units = (1..=most).find(|n| f64::from(*n) * usable >= need);
            let note = match (units, whole) {
                (Some(1), _) if o.time_sliced => format!(
                    "fits one share ({:.0} GB usable), but a time-sliced share is not isolated memory: \
                     the other shares' processes use the same GPU's memory",
                    usable
                ),
                (Some(1), _) => format!("fits one unit: {:.1} of {:.0} GB usable", need, usable),
                (Some(n), _) => format!(
                    "fits {n} GPUs with tensor parallelism: {:.1} of {:.0} GB usable",
                    need,
                    f64::from(n) * usable
                ),
                (None, true) => {
                    format!("does not fit the {} GPUs of this pool ({:.0} GB usable each)", o.capacity, usable)
                }
                (None, false) => {
                    format!("does not fit one unit ({:.0} GB usable; slices and shares do not add up)", usable)
                }
            };
            let booked = units.map_or(f64::INFINITY, |n| f64::from(n) * o.vram_gb);
            (booked, KindFit { pool_id: o.pool_id.clone(), pool: o.pool.clone(), kind: o.kind.clone(), units, note })
        })
        .collect();
    kinds.sort_by(|(a, x), (b, y)| a.total_cmp(b).then(x.units.cmp(&y.units)));
    let largest = offers.iter().map(|o| o.vram_gb).fold(0.0, f64::max);
    let verdict = match kinds.first() {
        Some((_, best)) if best.units.is_some() => {
            let n = best.units.unwrap_or(1);
            format!("Needs about {:.0} GB: {} × {} on {} holds it.", need, n, best.kind, best.pool)
        }
        _ if largest > 0.0 => format!(
            "Needs about {:.0} GB: it does not fit on one GPU of any pool you may book; it would need {} GPUs of {:.0} GB with tensor parallelism.",
            need,
            (need / (largest * USABLE)).ceil(),
            largest
        ),
        _ => format!("Needs about {:.0} GB; no pool you may book says how much memory its GPUs have.", need),
    };
    FitAnswer { estimate, kinds: kinds.into_iter().map(|(_, k)| k).collect(), verdict }
}

/// `kind_line` for a unit of `vram_gb` GB; "" when the pool does not say.
pub fn kind_line_of(vram_gb: i32) -> String {
    if vram_gb > 0 {
        kind_line(f64::from(vram_gb))
    } else {
        String::new()
    }
}

/// One line of what a kind holds, for the kind list: "24 GB · inference of
/// an 8B model in BF16 at 8k context" (the largest catalogue model that
/// fits one unit at 8k context, one sequence).
pub fn kind_line(vram_gb: f64) -> String {
    let holds = |m: &CatalogModel, precision| {
        let q = FitQuestion { shape: m.shape, precision, workload: Workload::Inference, context: 8192, sequences: 1 };
        estimate(&q).total_gb <= vram_gb * USABLE
    };
    let best = [Precision::Bf16, Precision::Fp8, Precision::Int4].into_iter().find_map(|p| {
        CATALOG
            .iter()
            .filter(|m| holds(m, p))
            .max_by(|a, b| a.shape.params_b.total_cmp(&b.shape.params_b))
            .map(|m| (m, p))
    });
    match best {
        Some((m, p)) => {
            // "an 8B", "an 11B", "an 18B", "an 80B"; "a 7B".
            let an = m.size.starts_with('8') || m.size.starts_with("11") || m.size.starts_with("18");
            format!(
                "{vram_gb:.0} GB · inference of {} {} model in {} at 8k context",
                if an { "an" } else { "a" },
                m.size,
                p.label()
            )
        }
        None => format!("{vram_gb:.0} GB · too small for the catalogue's models"),
    }
}
