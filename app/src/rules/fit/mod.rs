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
//!
//! `catalogue`: the models and how they are held; `estimate`: the question
//! and the memory it needs; `matching`: the kinds that hold it.

mod catalogue;
mod estimate;
mod matching;

pub use catalogue::*;
pub use estimate::*;
pub use matching::*;

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
