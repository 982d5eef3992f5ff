// Quantized checkpoints held against published measurements of their weights in memory (±20%):
// FP8 (fbgemm_fp8 and block fp8) as vLLM logged them, GPTQ int4 and AWQ int4 as Qwen's transformers
// benchmark measured them, bitsandbytes 8-bit and 4-bit through the config.json transformers attaches.
// Each planned figure goes through the config.json (or the catalog entry) as published, so the
// modules a method leaves unconverted, its scales and the checkpoint's torch_dtype all count.
#include <gtest/gtest.h>

#include <string>

#include "plan/hf_config.hpp"
#include "plan/memory_model.hpp"
#include "plan/model_catalog.hpp"
#include "support/published_row.hpp"

using namespace gpuvet;
using gpuvet::testing::expect_published;

namespace {
constexpr double GiB = 1024.0 * 1024 * 1024, MiB = 1024.0 * 1024;

ModelArch fixture(const std::string& name) {
    return load_hf_config(std::string(GPUVET_TEST_DIR) + "/fixtures/plan/" + name);
}
const ModelArch& catalog(const char* key) {
    static ModelCatalog c = ModelCatalog::embedded();
    return c.find(key);
}

// The weights on each of `gpus` tensor-parallel GPUs: what vLLM's load line reports (an allocator
// counter around the model's construction: no CUDA context, no KV cache).
double weights_per_gpu(const ModelArch& m, int gpus) {
    Workload w;
    w.task = Task::Inference;
    return plan_memory(m, w, gpus).item("weights");
}

// The peak of a transformers generate() of `prompt` + `generated` tokens at batch 1, before the
// margin and without the CUDA context (torch.cuda.max_memory_allocated does not see it).
double generate_peak(const ModelArch& m, std::int64_t tokens) {
    Workload w;
    w.task = Task::Inference;
    w.batch = 1;
    w.seq = tokens;
    w.margin = 0;
    MemoryPlan p = plan_memory(m, w, 1);
    return p.subtotal_per_gpu - p.item("cuda_context");
}
}  // namespace

// --- FP8 ---

// github.com/vllm-project/vllm/issues/6746, opening post by jueming0312 (2024-07-24): vLLM 0.5.3
// serving /models/Meta-Llama-3.1-405B-Instruct-FP8 on 8×H100 with 8 tensor-parallel workers logs
// "model_runner.py:692] Loading model weights took 57.7520 GB" on every rank (vLLM divides that
// counter by 2**30: GiB). The checkpoint is fbgemm_fp8 with its modules_to_not_convert list
// (catalog entry llama-3.1-405b-instruct-fp8): treating every linear as FP8 gives 47.74 GiB.
TEST(PlanQuantPublished, VllmLlama405bFp8Tp8) {
    expect_published("VL-405B-FP8", weights_per_gpu(catalog("llama-3.1-405b-instruct-fp8"), 8), 57.7520 * GiB, 0.20);
    // The published config.json reads the same as the catalog entry.
    EXPECT_DOUBLE_EQ(weights_per_gpu(fixture("config_llama405b_fbgemm_fp8.json"), 8),
                     weights_per_gpu(catalog("llama-3.1-405b-instruct-fp8"), 8));
}

// github.com/vllm-project/vllm/issues/21648, description by RagnarokChan (2025-07-26): vLLM
// 0.10.1.dev34 serving a local Qwen3-14B-FP8 (fp8, 128 × 128 block scales) at tensor parallel 1 logs
// "gpu_model_runner.py:1846] Model loading took 15.3341 GiB".
TEST(PlanQuantPublished, VllmQwen3_14bFp8) {
    expect_published("VL-Q3-14B-FP8", weights_per_gpu(fixture("config_qwen3-14b_fp8.json"), 1), 15.3341 * GiB, 0.20);
}

// Qwen's speed benchmark for Qwen3 (github.com/QwenLM/Qwen2.5 at c7f51a1a,
// docs/source/getting_started/speed_benchmark.md, table "Qwen3-14B (Transformers)", input length 1,
// 2048 tokens generated, batch 1, one H20 96GB): "GPU Memory (MB)" FP8 16012, AWQ-INT4 9962. The
// benchmark script (examples/speed-benchmark/speed_benchmark_transformers.py) reads
// torch.cuda.max_memory_allocated and divides by 1024³; the table's MB are read as MiB.
TEST(PlanQuantPublished, TransformersQwen3_14bFp8AndAwq) {
    expect_published("QW3-14B-FP8", generate_peak(fixture("config_qwen3-14b_fp8.json"), 2049), 16012 * MiB, 0.20);
    expect_published("QW3-14B-AWQ", generate_peak(fixture("config_qwen3-14b_awq.json"), 2049), 9962 * MiB, 0.20);
}

// --- GPTQ int4 and AWQ int4 ---

// Qwen's speed benchmark for Qwen2.5 (github.com/QwenLM/Qwen2.5 at a912d239,
// docs/source/benchmark/speed_benchmark.rst, tables "7B/14B/32B/72B (Transformer)", input length 1,
// 2048 tokens generated, batch 1, A100 80GB, Transformers 4.46.0, AutoGPTQ 0.7.1, AutoAWQ 0.2.6):
// "GPU Memory(GB)" of Qwen2.5-*-Instruct-GPTQ-Int4 and -AWQ (GiB: the same script,
// torch.cuda.max_memory_allocated / 1024³). The fixtures carry each size's shapes and the
// quantization_config Qwen publishes (GPTQ: bits 4, group_size 128, desc_act false; AWQ: bits 4,
// group_size 128, zero_point true; torch_dtype float16).
TEST(PlanQuantPublished, TransformersQwen25GptqInt4) {
    expect_published("QW25-7B-GPTQ4", generate_peak(fixture("config_qwen2.5-7b_gptq_int4.json"), 2049), 5.52 * GiB,
                     0.20);
    expect_published("QW25-14B-GPTQ4", generate_peak(fixture("config_qwen2.5-14b_gptq_int4.json"), 2049), 9.94 * GiB,
                     0.20);
    expect_published("QW25-32B-GPTQ4", generate_peak(fixture("config_qwen2.5-32b_gptq_int4.json"), 2049), 18.94 * GiB,
                     0.20);
    expect_published("QW25-72B-GPTQ4", generate_peak(fixture("config_qwen2.5-72b_gptq_int4.json"), 2049), 39.91 * GiB,
                     0.20);
}
TEST(PlanQuantPublished, TransformersQwen25AwqInt4) {
    expect_published("QW25-7B-AWQ", generate_peak(fixture("config_qwen2.5-7b_awq.json"), 2049), 5.39 * GiB, 0.20);
    expect_published("QW25-14B-AWQ", generate_peak(fixture("config_qwen2.5-14b_awq.json"), 2049), 9.79 * GiB, 0.20);
    expect_published("QW25-32B-AWQ", generate_peak(fixture("config_qwen2.5-32b_awq.json"), 2049), 18.67 * GiB, 0.20);
    expect_published("QW25-72B-AWQ", generate_peak(fixture("config_qwen2.5-72b_awq.json"), 2049), 39.44 * GiB, 0.20);
}

// --- bitsandbytes ---

// HF transformers docs, "Optimizing LLMs for Speed and Memory" (llm_tutorial_optimization):
// bigcode/octocoder loaded with load_in_8bit=True peaks at 15.219 GiB and with load_in_4bit=True
// (FP4, an fp32 absmax per 64 weights) at 9.5436 GiB, short prompt (torch.cuda.max_memory_allocated,
// A100). The fixtures are OctoCoder's config.json with the quantization_config transformers attaches
// for those flags (llm_int8_skip_modules null: lm_head stays 16-bit) and torch_dtype float16, which
// transformers sets for bitsandbytes when none is given.
TEST(PlanQuantPublished, TransformersOctocoderBitsandbytes) {
    expect_published("HF-OCTO-int8", generate_peak(fixture("config_octocoder_bnb_int8.json"), 128), 15.219 * GiB, 0.20);
    expect_published("HF-OCTO-4bit", generate_peak(fixture("config_octocoder_bnb_4bit.json"), 128), 9.5436 * GiB, 0.20);
}
