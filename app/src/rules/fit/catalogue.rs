//! The catalogue of common open models, and how a model is held and used.

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
