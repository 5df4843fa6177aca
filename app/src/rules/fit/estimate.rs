//! The question a person asks and the memory it needs, with its arithmetic.

use super::catalogue::{catalog_model, ModelShape, Precision, Workload, CATALOG};
use crate::rules::FieldError;
use serde::{Deserialize, Serialize};

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
    /// Anything in it: the page's form always sends its choices, so an
    /// Estimate with nothing typed is asked (and told what is missing).
    pub fn asked(&self) -> bool {
        [
            &self.model,
            &self.params_b,
            &self.layers,
            &self.kv_heads,
            &self.head_dim,
            &self.precision,
            &self.workload,
            &self.context,
            &self.sequences,
        ]
        .iter()
        .any(|f| !f.trim().is_empty())
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
                Precision::parse(text).ok_or_else(|| FieldError::new("precision", "must be bf16, fp8, int8 or int4"))?
            }
        };
        let workload = match self.workload.as_deref() {
            None | Some("") => Workload::Inference,
            Some(text) => {
                Workload::parse(text).ok_or_else(|| FieldError::new("workload", "must be inference, lora or full"))?
            }
        };
        let shape = match self.model.as_deref().filter(|m| !m.is_empty()) {
            Some(id) => {
                let known = catalog_model(id).ok_or_else(|| {
                    let ids: Vec<&str> = CATALOG.iter().map(|m| m.id).collect();
                    FieldError::new("model", format!("is not in the catalogue ({}); or give params_b", ids.join(", ")))
                })?;
                known.shape
            }
            None => {
                let params_b =
                    self.params_b.ok_or_else(|| FieldError::new("params_b", "is needed when no model is chosen"))?;
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
