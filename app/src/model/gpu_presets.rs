//! Tokenomics' presets: a model class's published serving throughput, and
//! what it becomes on the GPU a pool has. The figures were measured on one
//! GPU (H100 80 GB); on another, decoding — bound by memory bandwidth — is
//! scaled by that GPU's bandwidth, and a model whose weights do not fit the
//! GPU's memory is said not to fit rather than given a figure.

/// A GPU the presets know: its memory and memory bandwidth, from its
/// datasheet, and the words in a pool's GPU model that name it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSpec {
    pub name: &'static str,
    /// Matched case-insensitively in the pool's GPU model, first match wins
    /// (so "H100 NVL" is looked for before "H100").
    pub names: &'static [&'static str],
    pub memory_gb: f64,
    pub bandwidth_tb_s: f64,
    pub source: &'static str,
}

/// The GPU the presets' throughputs were measured on.
pub const REFERENCE_GPU: GpuSpec = GpuSpec {
    name: "H100 80 GB",
    names: &["h100"],
    memory_gb: 80.0,
    bandwidth_tb_s: 3.35,
    source: "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM 80 GB, HBM3 at 3.35 TB/s",
};

pub const GPUS: &[GpuSpec] = &[
    GpuSpec {
        name: "H100 NVL 94 GB",
        names: &["h100 nvl", "h100-nvl"],
        memory_gb: 94.0,
        bandwidth_tb_s: 3.9,
        source: "NVIDIA H100 Tensor Core GPU datasheet: H100 NVL 94 GB, HBM3 at 3.9 TB/s",
    },
    REFERENCE_GPU,
    GpuSpec {
        name: "A100 80 GB",
        names: &["a100"],
        memory_gb: 80.0,
        bandwidth_tb_s: 2.039,
        source: "NVIDIA A100 Tensor Core GPU datasheet: A100 80 GB SXM, HBM2e at 2 039 GB/s",
    },
    GpuSpec {
        name: "L40S 48 GB",
        names: &["l40s"],
        memory_gb: 48.0,
        bandwidth_tb_s: 0.864,
        source: "NVIDIA L40S datasheet: 48 GB GDDR6 at 864 GB/s",
    },
    GpuSpec {
        name: "RTX PRO 6000 Blackwell 96 GB",
        names: &["rtx pro 6000", "rtx-pro-6000"],
        memory_gb: 96.0,
        bandwidth_tb_s: 1.792,
        source: "NVIDIA RTX PRO 6000 Blackwell datasheet: 96 GB GDDR7 at 1 792 GB/s",
    },
];

/// The GPU a pool's GPU model names, if the presets know it.
pub fn gpu_of(gpu_model: &str) -> Option<&'static GpuSpec> {
    let model = gpu_model.to_lowercase();
    GPUS.iter().find(|gpu| gpu.names.iter().any(|name| model.contains(name)))
}

/// A published throughput for a model class, as a starting point to edit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThroughputPreset {
    pub id: &'static str,
    pub label: &'static str,
    /// Output tokens per second per GPU, on `REFERENCE_GPU`.
    pub tokens_per_second: f64,
    /// Billions of parameters, and the bytes each takes as served: the
    /// weights must fit one GPU for the per-GPU figure to mean anything.
    pub params_b: f64,
    pub bytes_per_param: f64,
    pub source: &'static str,
}

/// NVIDIA's published NIM (vLLM/TensorRT-LLM based) serving figures on
/// H100 80 GB; per GPU where the run used several.
pub const PRESETS: &[ThroughputPreset] = &[
    ThroughputPreset {
        id: "llama-3.1-8b",
        label: "Llama 3.1 8B Instruct BF16 (8B class)",
        tokens_per_second: 8_018.0,
        params_b: 8.0,
        bytes_per_param: 2.0,
        source: "NVIDIA NIM for LLMs benchmarking, Performance: Llama-3.1-8b-instruct, NIM 1.8.0, H100 80GB, \
                 concurrency 50 (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance)",
    },
    ThroughputPreset {
        id: "llama-3.3-70b",
        label: "Llama 3.3 70B Instruct FP8 (70B class)",
        tokens_per_second: 458.0,
        params_b: 70.0,
        bytes_per_param: 1.0,
        source: "NVIDIA NIM for LLMs benchmarking, Performance: Llama-3.3-70b-instruct, NIM 1.8.0, 2 × H100 80GB \
                 FP8 TP2, 5 000 in / 500 out, concurrency 100: 917 tokens/s, i.e. 458 per GPU \
                 (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance)",
    },
];

pub fn preset(id: &str) -> Option<&'static ThroughputPreset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The share of a GPU's memory a serving engine may fill (vLLM's
/// `gpu_memory_utilization`, 0.9 by default): the weights must fit in it.
pub const USABLE_MEMORY: f64 = 0.9;

/// A preset on a pool's GPU: its throughput there, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub struct PresetOnGpu {
    /// `None`: the model's weights do not fit one GPU's usable memory.
    pub tokens_per_second: Option<f64>,
    /// How the figure was had, or why it does not fit.
    pub note: String,
}

impl ThroughputPreset {
    /// The weights' size in GB.
    pub fn weights_gb(&self) -> f64 {
        self.params_b * self.bytes_per_param
    }

    /// This preset on `gpu` (`None`: a GPU the presets do not know, given
    /// the figure as measured).
    pub fn on(&self, gpu: Option<&GpuSpec>) -> PresetOnGpu {
        let Some(gpu) = gpu else {
            return PresetOnGpu {
                tokens_per_second: Some(self.tokens_per_second),
                note: format!("as measured on {}", REFERENCE_GPU.name),
            };
        };
        let usable = gpu.memory_gb * USABLE_MEMORY;
        if self.weights_gb() > usable {
            return PresetOnGpu {
                tokens_per_second: None,
                note: format!(
                    "does not fit one {}: its weights alone are {:.0} GB, above the {:.0} GB a server may use ({:.0} % of {:.0} GB)",
                    gpu.name,
                    self.weights_gb(),
                    usable,
                    USABLE_MEMORY * 100.0,
                    gpu.memory_gb
                ),
            };
        }
        if gpu.bandwidth_tb_s == REFERENCE_GPU.bandwidth_tb_s {
            return PresetOnGpu {
                tokens_per_second: Some(self.tokens_per_second),
                note: format!("as measured on {}", REFERENCE_GPU.name),
            };
        }
        let scaled = (self.tokens_per_second * gpu.bandwidth_tb_s / REFERENCE_GPU.bandwidth_tb_s).round();
        PresetOnGpu {
            tokens_per_second: Some(scaled),
            note: format!(
                "on {}: the {} figure × {} / {} TB/s memory bandwidth (decoding is bound by it)",
                gpu.name, REFERENCE_GPU.name, gpu.bandwidth_tb_s, REFERENCE_GPU.bandwidth_tb_s
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pools_gpu_model_names_its_gpu() {
        assert_eq!(gpu_of("NVIDIA H100 NVL 96GB").map(|g| g.name), Some("H100 NVL 94 GB"));
        assert_eq!(gpu_of("NVIDIA-H100-80GB-HBM3").map(|g| g.name), Some("H100 80 GB"));
        assert_eq!(gpu_of("NVIDIA L40S").map(|g| g.memory_gb), Some(48.0));
        assert_eq!(gpu_of("NVIDIA RTX PRO 6000 Blackwell Server Edition").map(|g| g.memory_gb), Some(96.0));
        assert_eq!(gpu_of("NVIDIA A100-SXM4-80GB").map(|g| g.name), Some("A100 80 GB"));
        assert_eq!(gpu_of("AMD MI300X"), None);
    }

    #[test]
    fn a_70b_model_in_fp8_does_not_fit_an_l40s_but_an_8b_one_is_scaled_to_it() {
        let (small, large) = (preset("llama-3.1-8b").unwrap(), preset("llama-3.3-70b").unwrap());
        let l40s = gpu_of("L40S");
        let on = large.on(l40s);
        assert_eq!(on.tokens_per_second, None);
        assert!(on.note.contains("does not fit one L40S 48 GB: its weights alone are 70 GB"), "{}", on.note);
        // 8 018 × 0.864 / 3.35 = 2 068.
        assert_eq!(small.on(l40s).tokens_per_second, Some(2068.0));
        assert_eq!(large.on(gpu_of("RTX PRO 6000")).tokens_per_second, Some(245.0));
        assert_eq!(small.on(gpu_of("H100 80GB")).tokens_per_second, Some(8018.0));
        assert_eq!(small.on(None).tokens_per_second, Some(8018.0));
    }
}
