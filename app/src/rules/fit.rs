//! Which kind holds a model (issue 48): the memory a run needs, with its
//! arithmetic, and the smallest kind and quantity of the pools a person may
//! book that holds it. Pure, so the booking form, `GET /api/v1/fit` and
//! `berth fit` give the same answer.
//!
//! weights  = parameters × bytes per parameter
//! KV cache = 2 × layers × KV heads × head dim × bytes × context × sequences
//! overhead = 20 % of the above for inference (EleutherAI's figure, which
//!            Hugging Face's `accelerate estimate-memory` quotes)
//! training = full fine-tuning: 16 bytes per parameter (BF16 weights and
//!            gradients, FP32 master weights and Adam's two moments), + 20 %;
//!            LoRA: the frozen weights and the adapters' share (1 % of the
//!            parameters, trained at 16 bytes each), + 20 %
//! usable   = 90 % of a GPU's memory (vLLM's `gpu_memory_utilization`)

use super::FieldError;
use serde::{Deserialize, Serialize};

/// A model's shape, as its Hugging Face `config.json` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelShape {
    /// Billions of parameters.
    pub params_b: f64,
    pub layers: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
}

/// A common open model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatalogModel {
    pub id: &'static str,
    pub name: &'static str,
    /// Its size as people say it ("8B", "8x7B").
    pub size: &'static str,
    pub shape: ModelShape,
}

const fn model(id: &'static str, name: &'static str, size: &'static str, shape: (f64, u32, u32, u32)) -> CatalogModel {
    let (params_b, layers, kv_heads, head_dim) = shape;
    CatalogModel { id, name, size, shape: ModelShape { params_b, layers, kv_heads, head_dim } }
}

/// Parameters, layers, KV heads and head dimension from each model's
/// `config.json` on Hugging Face.
pub const CATALOG: &[CatalogModel] = &[
    model("llama-3.1-8b", "Llama 3.1 8B", "8B", (8.03, 32, 8, 128)),
    model("llama-3.3-70b", "Llama 3.1 / 3.3 70B", "70B", (70.6, 80, 8, 128)),
    model("llama-3.1-405b", "Llama 3.1 405B", "405B", (405.9, 126, 8, 128)),
    model("qwen2.5-7b", "Qwen 2.5 7B", "7B", (7.62, 28, 4, 128)),
    model("qwen2.5-14b", "Qwen 2.5 14B", "14B", (14.8, 48, 8, 128)),
    model("qwen2.5-32b", "Qwen 2.5 32B", "32B", (32.8, 64, 8, 128)),
    model("qwen2.5-72b", "Qwen 2.5 72B", "72B", (72.7, 80, 8, 128)),
    model("qwen3-8b", "Qwen 3 8B", "8B", (8.19, 36, 8, 128)),
    model("qwen3-32b", "Qwen 3 32B", "32B", (32.8, 64, 8, 128)),
    model("mistral-7b", "Mistral 7B v0.3", "7B", (7.25, 32, 8, 128)),
    model("mixtral-8x7b", "Mixtral 8x7B", "8x7B", (46.7, 32, 8, 128)),
    model("gemma-2-9b", "Gemma 2 9B", "9B", (9.24, 42, 8, 256)),
    model("gemma-2-27b", "Gemma 2 27B", "27B", (27.2, 46, 16, 128)),
];

pub fn catalog_model(id: &str) -> Option<&'static CatalogModel> {
    CATALOG.iter().find(|m| m.id == id)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Bf16,
    Fp8,
    Int4,
}

impl Precision {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "bf16" | "fp16" => Some(Self::Bf16),
            "fp8" | "int8" => Some(Self::Fp8),
            "int4" => Some(Self::Int4),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Bf16 => "BF16",
            Self::Fp8 => "FP8/INT8",
            Self::Int4 => "INT4",
        }
    }

    /// Bytes a weight takes.
    pub fn weight_bytes(self) -> f64 {
        match self {
            Self::Bf16 => 2.0,
            Self::Fp8 => 1.0,
            Self::Int4 => 0.5,
        }
    }

    /// Bytes a KV-cache value takes: FP8 caches with FP8 weights; INT4
    /// weights (AWQ, GPTQ) keep a 16-bit cache.
    pub fn kv_bytes(self) -> f64 {
        match self {
            Self::Fp8 => 1.0,
            Self::Bf16 | Self::Int4 => 2.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    Inference,
    Lora,
    FullFineTuning,
}

impl Workload {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "inference" => Some(Self::Inference),
            "lora" => Some(Self::Lora),
            "full" | "full_fine_tuning" => Some(Self::FullFineTuning),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Inference => "inference",
            Self::Lora => "LoRA fine-tuning",
            Self::FullFineTuning => "full fine-tuning",
        }
    }
}

/// What a run needs: the model, how it is held and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitQuestion {
    pub shape: ModelShape,
    pub precision: Precision,
    pub workload: Workload,
    /// Tokens per sequence (prompt and output).
    pub context: u32,
    /// Sequences served at once.
    pub sequences: u32,
}

pub const OVERHEAD: f64 = 0.20;
pub const USABLE: f64 = 0.90;
/// Bytes per trained parameter with mixed-precision Adam.
pub const TRAINED_BYTES: f64 = 16.0;
/// The share of the parameters LoRA adapters add (rank 8–64 on the
/// attention and MLP projections: well under 1 %; 1 % is the upper bound).
pub const LORA_SHARE: f64 = 0.01;
const GB: f64 = 1e9;

/// The question as `GET /api/v1/fit` and `berth fit` take it: a catalogue
/// model (`model`) or a custom one (`params_b`, and for inference its
/// `layers`, `kv_heads` and `head_dim`); BF16, inference, 8k tokens and one
/// sequence unless said otherwise.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitQuery {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub params_b: Option<f64>,
    #[serde(default)]
    pub layers: Option<u32>,
    #[serde(default)]
    pub kv_heads: Option<u32>,
    #[serde(default)]
    pub head_dim: Option<u32>,
    /// bf16, fp8 (or int8), int4.
    #[serde(default)]
    pub precision: Option<String>,
    /// inference, lora, full.
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub context: Option<u32>,
    #[serde(default)]
    pub sequences: Option<u32>,
}

/// The question as the portal's form sends it: every field text, empty
/// for "not given".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FitForm {
    pub model: String,
    pub params_b: String,
    pub layers: String,
    pub kv_heads: String,
    pub head_dim: String,
    pub precision: String,
    pub workload: String,
    pub context: String,
    pub sequences: String,
}

impl FitForm {
    /// Whether anything was asked (a first visit shows the form only).
    pub fn asked(&self) -> bool {
        !(self.model.trim().is_empty() && self.params_b.trim().is_empty())
    }

    /// The typed query, or the field that is not a number.
    pub fn query(&self) -> Result<FitQuery, FieldError> {
        fn number<T: std::str::FromStr>(field: &str, text: &str) -> Result<Option<T>, FieldError> {
            match text.trim() {
                "" => Ok(None),
                text => text.parse().map(Some).map_err(|_| FieldError::new(field, "must be a number")),
            }
        }
        let text = |t: &str| Some(t.trim().to_string()).filter(|t| !t.is_empty());
        Ok(FitQuery {
            model: text(&self.model),
            params_b: number("params_b", &self.params_b)?,
            layers: number("layers", &self.layers)?,
            kv_heads: number("kv_heads", &self.kv_heads)?,
            head_dim: number("head_dim", &self.head_dim)?,
            precision: text(&self.precision),
            workload: text(&self.workload),
            context: number("context", &self.context)?,
            sequences: number("sequences", &self.sequences)?,
        })
    }
}

impl FitQuery {
    /// The question it asks, or the field at fault and why.
    pub fn question(&self) -> Result<FitQuestion, FieldError> {
        let precision = match self.precision.as_deref() {
            None | Some("") => Precision::Bf16,
            Some(text) => {
                Precision::parse(text).ok_or_else(|| FieldError::new("precision", "bf16, fp8, int8 or int4"))?
            }
        };
        let workload = match self.workload.as_deref() {
            None | Some("") => Workload::Inference,
            Some(text) => {
                Workload::parse(text).ok_or_else(|| FieldError::new("workload", "inference, lora or full"))?
            }
        };
        let shape = match self.model.as_deref().filter(|m| !m.is_empty()) {
            Some(id) => {
                let known = catalog_model(id).ok_or_else(|| {
                    let ids: Vec<&str> = CATALOG.iter().map(|m| m.id).collect();
                    FieldError::new("model", format!("not in the catalogue ({}); or give params_b", ids.join(", ")))
                })?;
                known.shape
            }
            None => {
                let params_b =
                    self.params_b.ok_or_else(|| FieldError::new("params_b", "give a model or its parameters"))?;
                // Training does not read the attention's shape: any will do.
                let need = |field: &'static str, value: Option<u32>| match (value, workload) {
                    (Some(v), _) => Ok(v),
                    (None, Workload::Inference) => {
                        Err(FieldError::new(field, "is needed for inference (from the model's config.json)"))
                    }
                    (None, _) => Ok(1),
                };
                ModelShape {
                    params_b,
                    layers: need("layers", self.layers)?,
                    kv_heads: need("kv_heads", self.kv_heads)?,
                    head_dim: need("head_dim", self.head_dim)?,
                }
            }
        };
        let question = FitQuestion {
            shape,
            precision,
            workload,
            context: self.context.unwrap_or(8192),
            sequences: self.sequences.unwrap_or(1),
        };
        check(&question)?;
        Ok(question)
    }
}

/// The memory a run needs, each part in GB, and the arithmetic as a person
/// checks it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryEstimate {
    pub weights_gb: f64,
    pub kv_cache_gb: f64,
    /// Gradients and optimizer state (training only).
    pub training_gb: f64,
    pub overhead_gb: f64,
    pub total_gb: f64,
    pub arithmetic: Vec<String>,
}

/// Checks a question's numbers, naming the field at fault.
pub fn check(question: &FitQuestion) -> Result<(), FieldError> {
    let s = question.shape;
    if !(s.params_b.is_finite() && s.params_b > 0.0 && s.params_b <= 5_000.0) {
        return Err(FieldError::new("params_b", "must be between 0 and 5000 (billions of parameters)"));
    }
    for (field, value, most) in
        [("layers", s.layers, 1_000), ("kv_heads", s.kv_heads, 1_000), ("head_dim", s.head_dim, 4_096)]
    {
        if value == 0 || value > most {
            return Err(FieldError::new(field, format!("must be between 1 and {most}")));
        }
    }
    if question.context == 0 || question.context > 10_000_000 {
        return Err(FieldError::new("context", "must be between 1 and 10000000 tokens"));
    }
    if question.sequences == 0 || question.sequences > 100_000 {
        return Err(FieldError::new("sequences", "must be between 1 and 100000"));
    }
    Ok(())
}

fn gb(value: f64) -> String {
    format!("{value:.1} GB")
}

/// The memory `question` needs.
pub fn estimate(question: &FitQuestion) -> MemoryEstimate {
    let (s, p) = (question.shape, question.precision);
    let params = s.params_b * 1e9;
    let weights = params * p.weight_bytes() / GB;
    let mut arithmetic = vec![format!(
        "weights = {}B parameters × {} bytes ({}) = {}",
        s.params_b,
        p.weight_bytes(),
        p.label(),
        gb(weights)
    )];
    let (kv, training) = match question.workload {
        Workload::Inference => {
            let per_token = 2.0 * f64::from(s.layers) * f64::from(s.kv_heads) * f64::from(s.head_dim) * p.kv_bytes();
            let kv = per_token * f64::from(question.context) * f64::from(question.sequences) / GB;
            arithmetic.push(format!(
                "KV cache = 2 × {} layers × {} KV heads × {} head dim × {} bytes × {} tokens × {} sequences = {}",
                s.layers,
                s.kv_heads,
                s.head_dim,
                p.kv_bytes(),
                question.context,
                question.sequences,
                gb(kv)
            ));
            (kv, 0.0)
        }
        Workload::Lora => {
            let adapters = params * LORA_SHARE * TRAINED_BYTES / GB;
            arithmetic.push(format!(
                "adapters and their optimizer state = {} % of the parameters × {TRAINED_BYTES} bytes = {}",
                LORA_SHARE * 100.0,
                gb(adapters)
            ));
            (0.0, adapters)
        }
        Workload::FullFineTuning => {
            // The weights are part of the 16 bytes: count only the rest.
            let rest = params * (TRAINED_BYTES - p.weight_bytes()).max(0.0) / GB;
            arithmetic.push(format!(
                "gradients and optimizer state = {TRAINED_BYTES} bytes per parameter (mixed-precision Adam) less the weights = {}",
                gb(rest)
            ));
            (0.0, rest)
        }
    };
    let overhead = (weights + kv + training) * OVERHEAD;
    arithmetic.push(format!("overhead = {} % of that = {}", OVERHEAD * 100.0, gb(overhead)));
    let total = weights + kv + training + overhead;
    arithmetic.push(format!("total = {}", gb(total)));
    MemoryEstimate {
        weights_gb: weights,
        kv_cache_gb: kv,
        training_gb: training,
        overhead_gb: overhead,
        total_gb: total,
        arithmetic,
    }
}

/// A kind a person may book, as the fit reads it.
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
    pub answer: Option<Result<FitAnswer, String>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn llama8b(context: u32, sequences: u32) -> FitQuestion {
        FitQuestion {
            shape: catalog_model("llama-3.1-8b").unwrap().shape,
            precision: Precision::Bf16,
            workload: Workload::Inference,
            context,
            sequences,
        }
    }

    fn offer(kind: &str, vram_gb: f64, capacity: i32, slices: i32) -> KindOffer {
        KindOffer {
            pool_id: "p".into(),
            pool: "lab".into(),
            kind: kind.into(),
            vram_gb,
            capacity,
            slices_per_gpu: slices,
            time_sliced: false,
        }
    }

    #[test]
    fn llama_8b_in_bf16_at_8k_with_4_sequences_needs_about_24_gb() {
        let e = estimate(&llama8b(8192, 4));
        assert!((e.weights_gb - 16.06).abs() < 0.01, "{e:?}");
        // 2 × 32 × 8 × 128 × 2 bytes = 128 KiB per token, × 32 768 tokens.
        assert!((e.kv_cache_gb - 4.295).abs() < 0.01, "{e:?}");
        assert!((e.total_gb - 24.4).abs() < 0.1, "{e:?}");
        assert!(e.arithmetic.iter().any(|l| l.starts_with("KV cache = 2 × 32 layers × 8 KV heads × 128 head dim")));
    }

    #[test]
    fn it_does_not_fit_a_24_gb_slice_but_fits_a_40_gb_one() {
        let offers = [offer("nvidia.com/mig-1g.24gb", 24.0, 4, 4), offer("nvidia.com/mig-3g.40gb", 40.0, 2, 2)];
        let answer = fit(&llama8b(8192, 4), &offers);
        assert_eq!(answer.kinds[0].kind, "nvidia.com/mig-3g.40gb");
        assert_eq!(answer.kinds[0].units, Some(1));
        assert_eq!(answer.kinds[1].units, None);
        assert!(
            answer.verdict.starts_with("Needs about 24 GB: 1 × nvidia.com/mig-3g.40gb on lab"),
            "{}",
            answer.verdict
        );
    }

    #[test]
    fn a_70b_model_in_fp8_fits_one_96_gb_h100_nvl_only_at_a_short_context() {
        let q = |context| FitQuestion {
            shape: catalog_model("llama-3.3-70b").unwrap().shape,
            precision: Precision::Fp8,
            workload: Workload::Inference,
            context,
            sequences: 1,
        };
        let nvl = [offer("nvidia.com/gpu", 96.0, 1, 1)];
        assert_eq!(fit(&q(2048), &nvl).kinds[0].units, Some(1));
        assert_eq!(fit(&q(32_768), &nvl).kinds[0].units, None);
        let answer = fit(&q(32_768), &nvl);
        assert!(answer.verdict.contains("it would need 2 GPUs of 96 GB with tensor parallelism"), "{}", answer.verdict);
    }

    #[test]
    fn whole_gpus_add_up_with_tensor_parallelism_slices_do_not() {
        let q = FitQuestion {
            shape: catalog_model("llama-3.3-70b").unwrap().shape,
            precision: Precision::Bf16,
            workload: Workload::Inference,
            context: 8192,
            sequences: 1,
        };
        // 141 GB of weights and 3 GB of cache, + 20 %: 173 GB, three 80 GB GPUs.
        let answer = fit(&q, &[offer("nvidia.com/gpu", 80.0, 4, 1)]);
        assert_eq!(answer.kinds[0].units, Some(3), "{answer:?}");
        assert!(answer.kinds[0].note.starts_with("fits 3 GPUs with tensor parallelism"), "{answer:?}");
        assert_eq!(fit(&q, &[offer("nvidia.com/gpu", 80.0, 2, 1)]).kinds[0].units, None);
        let sliced = fit(&q, &[offer("nvidia.com/mig-3g.40gb", 40.0, 8, 2)]);
        assert_eq!(sliced.kinds[0].units, None);
        let mut shared = offer("nvidia.com/gpu.shared", 96.0, 4, 1);
        shared.time_sliced = true;
        let small = fit(&llama8b(8192, 1), &[shared]);
        assert!(small.kinds[0].note.contains("not isolated memory"), "{small:?}");
    }

    #[test]
    fn training_counts_its_optimizer_state() {
        let full = estimate(&FitQuestion { workload: Workload::FullFineTuning, ..llama8b(8192, 1) });
        // 16 bytes per parameter, + 20 %: about 154 GB for 8B.
        assert!((full.total_gb - 8.03 * 16.0 * 1.2).abs() < 0.1, "{full:?}");
        let lora = estimate(&FitQuestion { workload: Workload::Lora, ..llama8b(8192, 1) });
        assert!((lora.total_gb - (16.06 + 1.285) * 1.2).abs() < 0.1, "{lora:?}");
    }

    #[test]
    fn a_kind_says_what_it_holds() {
        assert_eq!(kind_line(24.0), "24 GB · inference of an 8B model in BF16 at 8k context");
        assert_eq!(kind_line(96.0), "96 GB · inference of a 32B model in BF16 at 8k context");
        assert_eq!(kind_line(48.0), "48 GB · inference of a 14B model in BF16 at 8k context");
        assert_eq!(kind_line(4.0), "4 GB · too small for the catalogue's models");
    }

    #[test]
    fn a_query_names_a_catalogue_model_or_a_custom_one() {
        let q = FitQuery { model: Some("qwen2.5-7b".into()), precision: Some("int4".into()), ..FitQuery::default() };
        let asked = q.question().unwrap();
        assert_eq!(
            (asked.shape.layers, asked.precision, asked.context, asked.sequences),
            (28, Precision::Int4, 8192, 1)
        );
        let unknown = FitQuery { model: Some("gpt-5".into()), ..FitQuery::default() }.question().unwrap_err();
        assert_eq!(unknown.field, "model");
        let custom = FitQuery { params_b: Some(13.0), ..FitQuery::default() }.question().unwrap_err();
        assert_eq!(custom.field, "layers", "inference reads the attention's shape");
        let trained = FitQuery { params_b: Some(13.0), workload: Some("full".into()), ..FitQuery::default() };
        assert!(trained.question().is_ok());
        assert_eq!(FitQuery { precision: Some("fp4".into()), ..q }.question().unwrap_err().field, "precision");
    }

    #[test]
    fn bad_numbers_name_their_field() {
        let mut q = llama8b(8192, 1);
        q.context = 0;
        assert_eq!(check(&q).unwrap_err().field, "context");
        q.context = 8192;
        q.shape.params_b = f64::NAN;
        assert_eq!(check(&q).unwrap_err().field, "params_b");
    }
}
