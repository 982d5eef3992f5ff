"""gpuvet plan: the real binary, its JSON, its exit codes and the table a person reads."""
import json
import os
import re
import tempfile
import tomllib

from harness import main, run, run_json

FIX = os.path.join(os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(__file__), "..")), "fixtures", "plan")


def fixture(name):
    return os.path.join(FIX, name)


def test_json_is_valid_and_complete():
    code, doc, _ = run_json("plan", "--model", "llama-3-8b", "--task", "qlora", "--checkpointing")
    assert code == 0
    assert doc["command"] == "plan" and doc["fits"] is True
    assert doc["model"]["params"] == 8030261248
    keys = [i["key"] for i in doc["memory"]["items"]]
    for k in ["weights", "lora_weights", "gradients", "optimizer", "activations", "cuda_context"]:
        assert k in keys, keys
    need = doc["memory"]["need_bytes_per_gpu"]
    assert abs(need - 1.2 * doc["memory"]["subtotal_bytes_per_gpu"]) < 1.0
    assert len(doc["gpus"]) > 20
    assert doc["gpus"][0]["cards"] == 1


def test_list_models_prints_every_catalog_entry_intact():
    # The list was once read from a destroyed temporary catalog and printed freed memory as names.
    with open(os.path.join(os.environ["GPUVET_TEST_DIR"], "..", "data", "models.toml"), "rb") as f:
        models = tomllib.load(f)["model"]
    code, out, err = run("plan", "--list-models")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(models), out
    # One column each for key, name and count, the same for every row (names as wide as SDXL's).
    assert len({line.index(" params") for line in lines}) == 1, out
    for line, m in zip(lines, models):
        got = re.fullmatch(r"(\S+) +(.+?) +(\d+\.\d+)([BM]) params", line)
        assert got, repr(line)
        assert got[1] == m["key"] and got[2] == m["name"], (repr(line), m["key"], m["name"])
        # The planner derives its own count; it agrees with the published one to the printed digits.
        count = float(got[3]) * (1e9 if got[4] == "B" else 1e6)
        assert abs(count - m["published_params"]) <= 0.01e9 + 0.005 * m["published_params"], line


def test_exit_1_when_nothing_fits_and_says_what_would():
    code, out, _ = run("plan", "--model", "llama-2-70b", "--task", "full", "--gpus", "1", "--checkpointing", "--no-color")
    assert code == 1, out
    last = out.strip().splitlines()
    text = " ".join(l.strip() for l in last[-2:])
    # The lighter idea is the first lever that holds it on fewer cards, with its option.
    assert "Does not fit: needs" in text and re.search(r"with NVLink, or --\S+.* on \d+× ", text), text
    code, doc, _ = run_json("plan", "--model", "llama-2-70b", "--task", "full", "--gpus", "1")
    assert code == 1 and doc["fits"] is False and doc["suggestion"].startswith("needs ")


def test_exit_2_on_bad_input():
    for args in (["--model", "llama-3-8b", "--task", "dance"], ["--params", "seventy"], [],
                 ["--model", "llama-3-8b", "--zero", "3", "--task", "inference"]):
        code, _, err = run("plan", *args)
        assert code == 2, (args, err)
        assert err.strip(), args


def test_unknown_model_names_the_closest():
    code, _, err = run("plan", "--model", "llama-3-7b")
    assert code == 2
    assert "closest" in err and "llama-3-8b" in err, err


def test_config_missing_fields_are_named():
    code, _, err = run("plan", "--config", fixture("config_missing.json"))
    assert code == 2
    assert "num_attention_heads" in err and "vocab_size" in err, err
    assert "config_missing.json" in err


def test_config_gives_the_same_count_as_the_catalog():
    code, doc, _ = run_json("plan", "--config", fixture("config_llama7b.json"), "--task", "lora")
    assert code == 0
    assert doc["model"]["params"] == 6738415616


def test_params_70b():
    code, doc, _ = run_json("plan", "--params", "70B")
    assert code == 0
    assert doc["model"]["params"] == 70_000_000_000
    weights = [i for i in doc["memory"]["items"] if i["key"] == "weights"][0]
    assert weights["bytes_per_gpu"] == 140e9
    code, doc, _ = run_json("plan", "--params", "70B", "--task", "full")
    assert any("--activations-gib" in n for n in doc["memory"]["notes"]), doc["memory"]["notes"]


def test_prices_give_cost_column():
    code, out, _ = run("plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--prices",
                       fixture("prices.toml"), "--no-color")
    assert code == 0
    assert "cost USD" in out, out
    code, doc, _ = run_json("plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--prices",
                            fixture("prices.toml"))
    h100 = [g for g in doc["gpus"] if g["sku"] == "h100-sxm5-80gb"][0]
    assert abs(h100["cost"] - 2.49 * h100["cards"] * h100["hours_for_budget"]) < 1e-6
    assert doc["currency"] == "USD"


def test_bad_prices_file_names_line_and_column():
    code, _, err = run("plan", "--model", "llama-2-7b", "--prices", fixture("prices_bad.toml"))
    assert code == 2
    assert "prices_bad.toml:4:15" in err, err


def test_measured_report_replaces_datasheet_rates():
    code, doc, _ = run_json("plan", "--model", "llama-2-7b", "--task", "qlora", "--measured", fixture("measured_report.json"))
    assert code == 0
    by = {g["sku"]: g for g in doc["gpus"]}
    assert by["h100-sxm5-80gb"]["rates_source"] == "measured"
    assert by["l40s-48gb"]["rates_source"] == "datasheet"
    code, out, _ = run("plan", "--model", "llama-2-7b", "--task", "qlora", "--measured", fixture("measured_report.json"),
                       "--no-color", "--all")
    assert "H100 SXM5 80GB*" in out and "*: rates measured by" in out, out


def test_table_fits_100_columns_and_truncates_nothing():
    workloads = [
        ["--model", "llama-3-70b", "--batch", "8", "--seq", "8192"],
        ["--model", "llama-2-70b", "--task", "qlora", "--checkpointing"],
        ["--model", "mistral-7b", "--task", "full", "--tokens", "2e9", "--prices", fixture("prices.toml")],
        ["--model", "llama-3-8b", "--task", "pretrain", "--zero", "3", "--gpus", "8", "--checkpointing", "--all"],
        ["--params", "7B"],
    ]
    for w in workloads:
        code, out, _ = run("plan", *w, "--no-color")
        assert code in (0, 1), w
        for line in out.splitlines():
            assert len(line) <= 100, (w, line)
            assert "…" not in line, (w, line)
    code, out, _ = run("plan", "--model", "llama-3-70b", "--no-color")
    assert "--all lists every one" in out and "per box" in out


def test_pcie_cards_show_communication_share():
    code, doc, _ = run_json("plan", "--model", "llama-3-8b", "--task", "pretrain", "--zero", "3", "--gpus", "8",
                            "--checkpointing")
    by = {g["sku"]: g for g in doc["gpus"]}
    l40s, h100 = by["l40s-48gb"], by["h100-sxm5-80gb"]
    assert l40s["nvlink_needed"] and not l40s["has_nvlink"]
    share = lambda g: g["comm_s_per_step"] / (g["comm_s_per_step"] + g["compute_s_per_step"])
    assert share(l40s) > 2 * share(h100)


def test_help_has_examples():
    code, out, _ = run("plan", "--help")
    assert code == 0
    assert "Examples:" in out and "--task qlora" in out and "--measured" in out


def test_measured_report_without_usable_rates_is_refused():
    # e.g. 'check --only gpu.gemm': no GPU has a SKU, so nothing could replace a datasheet rate.
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"schema_version": 3, "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}],
                   "checks": [{"key": "gpu.gemm", "gpu": 0, "verdict": "PASS", "measurements": [
                       {"key": "bf16_tflops", "value": 700.0, "unit": "TFLOPS"}]}]}, f)
    try:
        code, _, err = run("plan", "--model", "llama-2-7b", "--task", "qlora", "--measured", f.name)
        assert code == 2 and f"--measured {f.name}" in err and "no measured rate" in err, (code, err)
    finally:
        os.unlink(f.name)


def _serving_row(doc, sku):
    return [g for g in doc["gpus"] if g["sku"] == sku][0]["serving"]


def test_serving_capacity_json_and_text():
    code, doc, _ = run_json("plan", "--model", "llama-3-8b", "--seq", "8192", "--gpus", "1")
    assert code == 0
    assert doc["workload"]["engine_memory_fraction"] == 0.9  # vLLM's gpu_memory_utilization
    s = doc["serving"]
    assert s is not None and s["gpus"] == 1 and s["fits"] is True
    assert s["engine_fraction"] == 0.9
    assert abs(s["budget_bytes_per_gpu"] - 0.9 * s["total_bytes_per_gpu"]) < 1
    keys = [t["key"] for t in s["terms"]]
    assert keys == ["weights", "profile_activations", "non_torch"], keys
    left = s["budget_bytes_per_gpu"] - sum(t["bytes_per_gpu"] for t in s["terms"])
    assert abs(s["kv_cache_bytes_per_gpu"] - left) < 1
    assert s["kv_bytes_per_token_per_gpu"] == 131072  # 32 layers × 8 KV heads × 128 × 2 × 2 B
    assert s["kv_cache_tokens"] == (left // (16 * 131072)) * 16
    assert abs(s["max_concurrent_sequences"] - s["kv_cache_tokens"] / 8192) < 1e-9
    assert s["decode_tokens_per_s"] > 0 and s["rate_sequences"] == int(s["max_concurrent_sequences"])
    # Every row that fits has its own capacity; a card with more memory holds more tokens.
    h100, b200 = _serving_row(doc, "h100-sxm5-80gb"), _serving_row(doc, "b200-180gb")
    assert 400_000 < h100["kv_cache_tokens"] < b200["kv_cache_tokens"], (h100["kv_cache_tokens"], b200)
    assert h100["engine"]["max_batched_tokens"] == 8192 and h100["engine"]["max_num_seqs"] == 1024
    assert _serving_row(doc, "a100-sxm4-80gb")["engine"]["max_batched_tokens"] == 2048  # vLLM's A100 carve-out
    code, out, _ = run("plan", "--model", "llama-3-8b", "--seq", "8192", "--gpus", "1", "--no-color")
    assert code == 0
    assert "Serving capacity on 1× " in out, out
    assert "Maximum concurrency for 8192 tokens per request (--seq): " in out, out
    assert "= KV cache" in out and "KV tok" in out, out
    assert str(s["kv_cache_tokens"]) in out
    assert max(len(l) for l in out.splitlines()) <= 100, [l for l in out.splitlines() if len(l) > 100]


def test_serving_fp8_kv_and_tensor_parallel():
    _, bf16, _ = run_json("plan", "--model", "llama-3-8b", "--seq", "8192", "--gpus", "1")
    _, fp8, _ = run_json("plan", "--model", "llama-3-8b", "--seq", "8192", "--gpus", "1", "--kv-dtype", "fp8")
    a, b = _serving_row(bf16, "h100-sxm5-80gb"), _serving_row(fp8, "h100-sxm5-80gb")
    assert b["kv_bytes_per_token_per_gpu"] * 2 == a["kv_bytes_per_token_per_gpu"]
    assert abs(b["kv_cache_tokens"] / a["kv_cache_tokens"] - 2) < 0.001
    _, tp2, _ = run_json("plan", "--model", "llama-3-8b", "--seq", "8192", "--gpus", "2")
    t = _serving_row(tp2, "h100-sxm5-80gb")
    assert t["gpus"] == 2 and t["kv_bytes_per_token_per_gpu"] == 65536  # KV heads split over 2 ranks
    assert "collectives" in [x["key"] for x in t["terms"]]
    assert t["kv_cache_tokens"] > 2 * a["kv_cache_tokens"]  # half the weights and half the KV per card


def test_serving_says_when_nothing_is_left_and_what_would_help():
    code, doc, _ = run_json("plan", "--model", "llama-3.1-405b", "--seq", "8192", "--gpus", "1")
    assert code == 1
    s = doc["serving"]
    assert s["fits"] is False and s["kv_cache_tokens"] == 0 and s["kv_cache_bytes_per_gpu"] < 0
    assert "nothing is left for the KV cache" in s["problem"], s["problem"]
    # 756 GiB of bf16 weights: 4 of the largest card (MI325X, 256 GB = 238 GiB, 214 GiB each at 0.9)
    # are the fewest doubling.
    assert s["ideas"][0].startswith("4 cards ("), s["ideas"]
    assert s["decode_tokens_per_s"] is None and s["rates_absent_reason"]
    code, out, _ = run("plan", "--model", "llama-3.1-405b", "--seq", "8192", "--gpus", "1", "--no-color")
    assert "Does not serve: nothing is left for the KV cache" in out and "would help: 4 cards (" in out, out


def test_serving_options_and_training_keeps_the_whole_card():
    _, doc, _ = run_json("plan", "--model", "llama-3-8b", "--seq", "8192", "--gpus", "1", "--max-batched-tokens", "2048")
    h100 = _serving_row(doc, "h100-sxm5-80gb")
    assert h100["engine"]["max_batched_tokens"] == 2048 and h100["profile_tokens"] == 2048
    assert doc["workload"]["max_batched_tokens"] == 2048 and doc["workload"]["prefill_chunk"] == 2048
    _, half, _ = run_json("plan", "--model", "llama-3-8b", "--gpus", "1", "--engine-fraction", "0.5")
    assert _serving_row(half, "h100-sxm5-80gb")["engine_fraction"] == 0.5
    code, lora, _ = run_json("plan", "--model", "llama-3-8b", "--task", "lora")
    assert code == 0 and lora["workload"]["engine_memory_fraction"] == 1.0 and lora["serving"] is None
    for bad in (["--engine-fraction", "0"], ["--engine-fraction", "1.5"], ["--max-batched-tokens", "0"]):
        code, _, err = run("plan", "--model", "llama-3-8b", *bad)
        assert code == 2 and bad[0] in err, (bad, err)


def test_serving_warns_when_seq_passes_the_models_positions():
    # A warning, not an error: a config with RoPE scaling serves past max_position_embeddings.
    code, doc, _ = run_json("plan", "--model", "llama-2-7b", "--seq", "8192", "--gpus", "1")
    assert code == 0
    assert any("beyond Llama-2-7B's 4096 positions" in n for n in doc["serving"]["notes"]), doc["serving"]["notes"]
# ---- Image and vision models ----------------------------------------------------------------

def test_sdxl_four_images_at_1024_needs_about_21_7_gib():
    # huggingface.co/blog/simple_sdxl_optimizations: SDXL fp16, 4 images at 1024², 21.72 GiB
    # max_memory_allocated. The model card's fp16 is the default dtype; the fp32 VAE decode is the peak.
    code, doc, _ = run_json("plan", "--model", "sdxl", "--task", "inference", "--batch", "4", "--resolution", "1024")
    assert code == 0
    items = {i["key"]: i["bytes_per_gpu"] for i in doc["memory"]["items"]}
    assert abs(doc["memory"]["subtotal_bytes_per_gpu"] / 2**30 - 21.72) <= 0.2 * 21.72, items
    assert items["activations"] > 8 * 2**30 and items["vae"] == 83653863 * 4, items
    # The old name still plans the same workload.
    code, old, _ = run_json("plan", "--model", "sdxl-unet", "--task", "inference", "--batch", "4")
    assert code == 0 and old["memory"]["subtotal_bytes_per_gpu"] == doc["memory"]["subtotal_bytes_per_gpu"]
    code, sliced, _ = run_json("plan", "--model", "sdxl", "--batch", "4", "--vae-slicing")
    assert sliced["memory"]["subtotal_bytes_per_gpu"] < doc["memory"]["subtotal_bytes_per_gpu"] - 6 * 2**30
    # Ranked as diffusion work, with no column of absent rates, and the first lever named.
    assert doc["scenario"] == "diffusion", doc["scenario"]
    code, out, _ = run("plan", "--model", "sdxl", "--batch", "4", "--no-color")
    assert "scenario diffusion (memory only: images per second are not modelled)" in out, out
    assert "decode tok/s" not in out and "lighter: --vae-slicing on 1×" in out, out
    code, out, _ = run("plan", "--model", "sdxl", "--batch", "4", "--scenario", "llm-finetune", "--no-color")
    assert "scenario llm-finetune" in out, out


def test_image_models_read_well_in_100_columns():
    for w in (["--model", "sdxl", "--batch", "4"], ["--model", "flux", "--resolution", "1024x768"],
              ["--model", "sd-1.5", "--task", "lora", "--checkpointing"],
              ["--model", "deit-b", "--task", "full", "--batch", "128", "--recipe", "amp-adamw"],
              ["--model", "resnet-50", "--task", "full", "--batch", "256"]):
        code, out, _ = run("plan", *w, "--no-color")
        assert code in (0, 1), (w, out)
        assert "not modelled" in out, out  # the image rate is absent with its reason
        for line in out.splitlines():
            assert len(line) <= 100, (w, line)


def test_image_bad_input_exits_2_naming_the_option():
    cases = [
        (["--model", "sdxl", "--resolution", "0"], "--resolution"),
        (["--model", "sdxl", "--resolution", "20000"], "--resolution"),
        (["--model", "sdxl", "--resolution", "1020"], "multiple of 8"),
        (["--model", "flux", "--resolution", "1032x1024"], "multiple of 16"),
        (["--model", "sdxl", "--resolution", "big"], "--resolution"),
        (["--model", "sdxl", "--batch", "0"], "--batch"),
        (["--model", "sdxl", "--batch", "100000"], "--batch"),
        (["--model", "sdxl", "--kv-dtype", "fp8"], "--kv-dtype"),
        (["--model", "sdxl", "--task", "lora", "--lora-targets", "q_proj"], "--lora-targets"),
        (["--model", "vit-b-16", "--seq", "197"], "--seq"),
        (["--model", "llama-3-8b", "--resolution", "1024"], "--resolution"),
        (["--model", "resnet-50", "--task", "lora"], "LoRA"),
        (["--model", "sdxl", "--guidance", "maybe"], "--guidance"),
    ]
    for args, word in cases:
        code, _, err = run("plan", *args)
        assert code == 2, (args, code, err)
        assert word in err and "→" in err, (args, err)

# --- cost: the cheapest configuration that finishes the job, and the fastest ---

# Per card-hour of each SKU tests/fixtures/plan/prices.toml names ("H100 SXM", "A100 80GB SXM", "L40S").
PRICE = {"h100-sxm5-80gb": 2.49, "a100-sxm4-80gb": 1.29, "l40s-48gb": 0.86}


def cost_lines(out):
    """The cheapest and fastest lines of the text: {label: (config, hours, cost)}."""
    got = {}
    for line in out.splitlines():
        m = re.match(r"  (cheapest|fastest) +(\d+)× (.+?)\*? +([\d.e+]+) h +([\d.]+) USD +\d+ tok/s$", line)
        if m:
            got[m[1]] = (int(m[2]), m[3], float(m[4]), m[5])
    return got


def test_prices_and_tokens_give_cheapest_and_fastest_consistent_with_the_card_table():
    args = ["plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--prices", fixture("prices.toml")]
    code, doc, _ = run_json(*args)
    assert code == 0
    cheap, fast = doc["cheapest"], doc["fastest"]
    assert cheap and fast, doc["cost_search"]
    for o in (cheap, fast):
        assert o["price_per_card_hour"] == PRICE[o["sku"]], o
        # cost = price × cards × hours, to the cent; hours = tokens / (tokens/s).
        assert abs(o["cost"] - PRICE[o["sku"]] * o["cards"] * o["hours"]) < 0.005, o
        assert abs(o["hours"] - 1e8 / o["tokens_per_s"] / 3600) < 1e-9 * o["hours"], o
        assert o["currency"] == "USD" and o["why"], o
    assert fast["hours"] <= cheap["hours"] and fast["cost"] >= cheap["cost"]
    assert doc["job"] == {"tokens": 1e8, "from": "tokens", "steps": None, "data_parallel_cards": None,
                          "how": "100M tokens (--tokens)"}
    # Where the search's configuration is the card table's row, both say the same hours and cost.
    row = {g["sku"]: g for g in doc["gpus"]}[cheap["sku"]]
    assert row["cards"] == cheap["cards"], (row, cheap)
    assert abs(row["hours_for_budget"] - cheap["hours"]) < 1e-9 and abs(row["cost"] - cheap["cost"]) < 1e-9
    # Every configuration searched is priced the same way; each SKU once per card count.
    confs = doc["cost_search"]["configurations"]
    assert len({(c["sku"], c["cards"]) for c in confs}) == len(confs) > 3
    assert min(c["cost"] for c in confs) == cheap["cost"] and min(c["hours"] for c in confs) == fast["hours"]
    assert doc["cost_search"]["card_counts"] == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    assert "h200-sxm-141gb" in doc["cost_search"]["unpriced_skus"]
    # The text says the same to the cent, within 100 columns.
    code, out, _ = run(*args, "--no-color")
    lines = cost_lines(out)
    assert set(lines) == {"cheapest", "fastest"}, out
    for label, o in (("cheapest", cheap), ("fastest", fast)):
        cards, name, hours, cost = lines[label]
        assert cards == o["cards"] and name == o["name"], (lines[label], o)
        assert cost == f"{o['cost']:.2f}" and abs(hours - o["hours"]) <= 0.001 * o["hours"], (lines[label], o)
    assert "not searched, no price: " in out and "H200 SXM 141GB" in out, out
    assert all(len(l) <= 100 for l in out.splitlines())


def test_steps_give_tokens_from_batch_seq_and_data_parallel_cards():
    code, doc, _ = run_json("plan", "--model", "llama-3-8b", "--task", "lora", "--steps", "500", "--batch", "2",
                            "--seq", "4096", "--gpus", "8", "--tp", "2", "--prices", fixture("prices.toml"))
    assert code == 0
    # 8 cards at tensor-parallel 2: 4 data-parallel cards, each 2 × 4096 tokens a step.
    assert doc["job"]["from"] == "steps" and doc["job"]["steps"] == 500 and doc["job"]["data_parallel_cards"] == 4
    assert doc["job"]["tokens"] == 500 * 2 * 4096 * 4
    assert doc["workload"]["token_budget"] == 500 * 2 * 4096 * 4
    # On the 8 cards the steps were counted on, the job takes 500 steps.
    h100 = {g["sku"]: g for g in doc["gpus"]}["h100-sxm5-80gb"]
    step_s = h100["compute_s_per_step"] + h100["comm_s_per_step"]
    assert abs(h100["hours_for_budget"] - 500 * step_s / 3600) < 1e-9 * h100["hours_for_budget"]
    assert doc["cheapest"]["cards"] == 8 and doc["cost_search"]["card_counts"] == [8]
    code, out, _ = run("plan", "--model", "llama-3-8b", "--task", "lora", "--steps", "500", "--batch", "2",
                       "--seq", "4096", "--gpus", "8", "--tp", "2", "--prices", fixture("prices.toml"), "--no-color")
    assert "500 steps × 2 seq × 4096 tokens × 4 data-parallel cards = 16.4M tokens (--steps)" in out, out


def test_steps_and_tokens_together_and_other_misuse_are_exit_2():
    base = ["plan", "--model", "llama-3-8b", "--task", "lora"]
    for extra, says in ((["--steps", "100", "--tokens", "1e8"], "--tokens and --steps"),
                        (["--steps", "10.5"], "--steps"),
                        (["--deadline", "5", "--tokens", "1e8"], "--deadline needs"),
                        (["--deadline", "0", "--tokens", "1e8", "--prices", fixture("prices.toml")], "--deadline")):
        code, _, err = run(*base, *extra)
        assert code == 2 and says in err, (extra, code, err)
    code, _, err = run("plan", "--model", "llama-3-8b", "--steps", "100")
    assert code == 2 and "inference has none" in err and "--tokens" in err, err


def test_deadline_gives_the_cheapest_that_finishes_in_time():
    args = ["plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--prices", fixture("prices.toml")]
    _, free, _ = run_json(*args)
    deadline = free["cheapest"]["hours"] / 2
    code, doc, _ = run_json(*args, "--deadline", str(deadline))
    assert code == 0 and doc["cost_search"]["deadline_hours"] == deadline
    assert doc["cheapest"]["hours"] <= deadline < free["cheapest"]["hours"]
    assert doc["cheapest"]["cost"] > free["cheapest"]["cost"]
    assert min(c["cost"] for c in doc["cost_search"]["configurations"] if c["hours"] <= deadline) \
        == doc["cheapest"]["cost"]
    code, doc, _ = run_json(*args, "--deadline", str(free["fastest"]["hours"] / 2))
    assert doc["cheapest"] is None and "finishes within" in doc["cost_search"]["cheapest_absent"]


def test_cost_search_on_measured_rates():
    args = ["plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--gpus", "1", "--prices",
            fixture("prices.toml")]
    _, sheet, _ = run_json(*args)
    code, doc, _ = run_json(*args, "--measured", fixture("measured_report.json"))
    assert code == 0
    by = lambda d: {c["sku"]: c for c in d["cost_search"]["configurations"]}
    m, s = by(doc)["h100-sxm5-80gb"], by(sheet)["h100-sxm5-80gb"]
    assert m["rates_source"] == "measured" and s["rates_source"] == "datasheet"
    assert by(doc)["l40s-48gb"]["rates_source"] == "datasheet"
    # The report's median bf16 GEMM, 700 TFLOPS, against the datasheet's 989.5 (one card: no link).
    assert abs(m["tokens_per_s"] / s["tokens_per_s"] - 700 / 989.5) < 1e-9
    assert abs(m["cost"] - 2.49 * m["hours"]) < 0.005
    code, out, _ = run(*args, "--measured", fixture("measured_report.json"), "--no-color")
    if doc["fastest"]["rates_source"] == "measured":
        assert re.search(r"  fastest +1× H100 SXM5 80GB\* ", out), out
    assert "*: rates measured by the --measured report" in out


def test_inference_tokens_are_generated_at_the_decode_rate():
    code, doc, _ = run_json("plan", "--model", "llama-3-8b", "--batch", "16", "--tokens", "1e7", "--prices",
                            fixture("prices.toml"))
    assert code == 0
    cheap = doc["cheapest"]
    row = {g["sku"]: g for g in doc["gpus"]}[cheap["sku"]]
    assert row["cards"] == cheap["cards"]
    assert abs(cheap["tokens_per_s"] - row["decode_tokens_per_s"]) < 1e-9 * cheap["tokens_per_s"]
    assert abs(cheap["hours"] - 1e7 / row["decode_tokens_per_s"] / 3600) < 1e-9 * cheap["hours"]


def test_without_prices_no_cost_lines_and_a_hint():
    code, out, _ = run("plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--no-color")
    assert code == 0 and not cost_lines(out)
    assert "Cost: --prices FILE (price per card-hour) gives the cheapest and the fastest" in out, out
    code, doc, _ = run_json("plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8")
    assert doc["cheapest"] is None and doc["fastest"] is None and "--prices" in doc["cost_search"]["hint"]
    code, out, _ = run("plan", "--model", "llama-2-7b", "--task", "qlora", "--prices", fixture("prices.toml"),
                       "--no-color")
    assert "Cost: --tokens N or --steps N gives" in out, out


# --- config.json of an architecture the planner does not know ---

def test_config_of_an_unmodelled_architecture_is_exit_2_naming_fields():
    cases = {
        "config_mamba.json": ("'mamba' is a state-space", "missing for a transformer decoder: num_attention_heads"),
        "config_t5.json": ("'t5' is an encoder-decoder", "d_model=512, num_layers=6"),
        "config_encdec_unknown.json": ("is_encoder_decoder is true", "num_attention_heads=16"),
        "config_vision_tower.json": ("vision or audio encoder", "missing for a transformer decoder: vocab_size"),
        "config_unknown_missing.json": ("'acme-lm' has no rules", "num_attention_heads, intermediate_size (missing)"),
    }
    for name, (what, fields) in cases.items():
        code, out, err = run("plan", "--config", fixture(name))
        assert code == 2, (name, code, out)
        assert name in err and what in err and fields in err and "fields found: " in err, (name, err)
        assert "--params N plans the weights only" in err, (name, err)


def test_config_of_a_family_without_rules_is_read_with_a_note():
    code, doc, _ = run_json("plan", "--config", fixture("config_gemma_generic.json"))
    assert code == 0
    assert doc["model"]["params"] == 2506172416  # google/gemma-2b, tied embeddings
    notes = " ".join(doc["memory"]["notes"])
    assert "'gemma' has no rules in the planner: read as a llama-style decoder" in notes, notes
    assert "head_dim=256" in notes and "tie_word_embeddings=true" in notes, notes
    code, out, _ = run("plan", "--config", fixture("config_gemma_generic.json"), "--no-color")
    assert "note: model_type 'gemma' has no rules" in out and all(len(l) <= 100 for l in out.splitlines())
    # A known family has no such note.
    code, doc, _ = run_json("plan", "--config", fixture("config_llama7b.json"))
    assert not any("no rules" in n for n in doc["memory"]["notes"])


def test_config_of_a_multimodal_wrapper_plans_its_language_model():
    code, doc, _ = run_json("plan", "--config", fixture("config_llava.json"))
    assert code == 0
    assert doc["model"]["params"] == 6738415616
    assert any("vision tower (vision_config of llava) is not counted" in n for n in doc["memory"]["notes"])



def test_recipe_options_that_do_not_apply_are_refused():
    cases = [
        (["--task", "inference", "--recipe", "adamw-8bit"], "--recipe adamw-8bit applies to training"),
        (["--task", "inference", "--loss", "chunked"], "--loss applies to training"),
        (["--task", "inference", "--checkpointing"], "--checkpointing applies to training"),
        (["--task", "inference", "--optimizer-in-backward"], "--optimizer-in-backward applies to training"),
        (["--task", "full", "--optimizer-in-backward", "--grad-accum", "4"], "cannot accumulate gradients"),
        (["--task", "full", "--recipe", "paged-adamw", "--gpus", "8", "--zero", "3", "--offload-optimizer"],
         "pages its states to host already"),
        (["--task", "full", "--loss", "sparse"], "unknown --loss 'sparse'"),
        (["--task", "full", "--checkpointing", "--selective-checkpointing"], "two granularities"),
        (["--task", "full", "--grad-accum", "0"], "--grad-accum"),
    ]
    for args, words in cases:
        code, out, err = run("plan", "--model", "llama-3-8b", *args)
        assert code == 2, (args, out, err)
        assert words in err, (args, err)
        assert "→" in err or "drop" in err or "choose" in err or "--help" in err, (args, err)


def test_recipe_bytes_and_phases_are_shown():
    code, out, err = run("plan", "--model", "llama-3.2-3b", "--task", "full", "--recipe", "paged-adamw-8bit",
                         "--optimizer-in-backward", "--checkpointing", "--loss", "chunked", "--batch", "2",
                         "--seq", "4096", "--no-color")
    assert code == 0, err
    assert "paged-adamw-8bit: 2 weights + 2 gradients + 2 optimizer = 6 B per parameter" in out, out
    assert "optimizer, paged (not in need) [P]" in out, out
    assert "gradients (one layer at a time) [2,3]" in out, out
    assert "logits (chunked cross-entropy) [1]" in out, out
    assert "activations (checkpointed) [1,2]" in out, out
    assert "peak (the largest, not the sum)" in out, out
    assert len([l for l in out.splitlines() if l.rstrip().endswith("<- peak")]) == 1, out
    for line in out.splitlines():
        assert len(line) <= 100, line
    code, doc, _ = run_json("plan", "--model", "llama-3.2-3b", "--task", "full", "--recipe", "bf16-adamw",
                            "--batch", "2", "--seq", "4096")
    m = doc["memory"]
    moments = [m["forward_peak_bytes_per_gpu"], m["backward_start_peak_bytes_per_gpu"], m["backward_peak_bytes_per_gpu"]]
    assert m["subtotal_bytes_per_gpu"] == max(moments)
    alive = {i["key"]: i["moments"] for i in m["items"]}
    assert alive["gradients"] == ["backward_end"] and alive["activations"] == ["loss", "backward_start"], alive
    assert alive["weights"] == ["loss", "backward_start", "backward_end"], alive
    total = sum(i["bytes_per_gpu"] for i in m["items"])
    assert m["subtotal_bytes_per_gpu"] < total  # a maximum over moments, not the column sum


def test_grad_accum_keeps_gradients_with_the_activations():
    def peak(*extra):
        code, doc, err = run_json("plan", "--model", "llama-3.2-3b", "--task", "full", "--recipe", "bf16-adamw",
                                  "--batch", "2", "--seq", "4096", *extra)
        assert code in (0, 1), err
        return doc["memory"]
    one, four = peak(), peak("--grad-accum", "4")
    grads = next(i["bytes_per_gpu"] for i in one["items"] if i["key"] == "gradients")
    assert abs(four["forward_peak_bytes_per_gpu"] - one["forward_peak_bytes_per_gpu"] - grads) < 1.0
    assert doc_phase(four, "gradients") == "always"


def doc_phase(memory, key):
    return next(i["phase"] for i in memory["items"] if i["key"] == key)


def test_selective_checkpointing_that_does_not_fit_still_gets_a_suggestion():
    # The checkpointing lever replaces the selective policy; it must not collide with the user's selective one.
    code, out, err = run("plan", "--model", "llama-2-70b", "--task", "full", "--gpus", "1",
                         "--selective-checkpointing", "--no-color")
    assert code == 1, (code, err)
    assert re.search(r"Does not fit: needs .+, or --\S+.* on \d+× ", " ".join(out.split())), out


def test_optimizer_in_backward_and_fsdp_offload_still_exchange_every_gradient():
    def comm(*extra):
        code, doc, err = run_json("plan", "--model", "llama-3-8b", "--task", "full", "--recipe", "bf16-adamw",
                                  "--gpus", "8", "--zero", "3", "--checkpointing", *extra)
        assert code in (0, 1), err
        return {g["sku"]: g["comm_s_per_step"] for g in doc["gpus"] if g["comm_s_per_step"]}
    base = comm()
    assert base
    for extra in (["--optimizer-in-backward"], ["--offload-params"]):
        other = comm(*extra)
        for sku, s in base.items():
            assert abs(other[sku] - s) <= 1e-9 * s, (extra, sku, s, other[sku])


ORDER = ["checkpointing", "grad-accum", "zero3", "offload-optimizer", "adamw-8bit", "paged-adamw-8bit", "qlora", "seq",
         "cards"]


def test_levers_cheapest_first_with_their_savings_in_terminal_and_json():
    args = ["plan", "--model", "llama-3-70b", "--task", "lora", "--seq", "4096"]
    code, out, err = run(*args, "--no-color")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "Levers, cheapest to the job first" in flat, out
    # Checkpointing first: from about 312 GiB to about 174 GiB, 4× H100 80GB brought in.
    got = re.search(r"1\. --checkpointing +activation checkpointing saves ([\d.]+) GiB → ([\d.]+) GiB", flat)
    assert got, out
    assert abs(float(got[1]) + float(got[2]) - 312) < 10 and abs(float(got[2]) - 174) < 6, got.group(0)
    assert "lighter: --checkpointing on 1× B200" in flat, out
    code, doc, _ = run_json(*args)
    levers = doc["levers"]
    assert levers["shown"] is True and levers["lighter"] == "checkpointing", levers
    keys = [v["key"] for v in levers["list"]]
    assert keys[0] == "checkpointing" and keys == sorted(keys, key=ORDER.index), keys
    first = levers["list"][0]
    assert first["option"] == "--checkpointing"
    assert abs(first["need_before_bytes_per_gpu"] - first["need_bytes_per_gpu"] - first["saved_bytes_per_gpu"]) < 1
    assert any(c["sku"] == "h100-sxm5-80gb" and c["cards"] == 4 for c in first["brings"]), first["brings"]
    # Re-running with the option gives the need the lever promised.
    code, again, _ = run_json(*args, "--checkpointing")
    assert abs(again["memory"]["need_bytes_per_gpu"] - first["need_bytes_per_gpu"]) < 1
    # The terminal's list is the JSON's, in the same order.
    assert [m for m in re.findall(r"^  \d+\. (\S+)", out, re.M)] == [v["option"].split()[0] for v in levers["list"]]


def test_levers_are_absent_when_a_small_card_holds_the_job():
    code, out, _ = run("plan", "--model", "llama-3-8b", "--task", "qlora", "--checkpointing", "--no-color")
    assert code == 0 and "Levers" not in out, out
    code, doc, _ = run_json("plan", "--model", "llama-3-8b", "--task", "qlora", "--checkpointing")
    assert doc["levers"]["shown"] is False and doc["levers"]["list"], doc["levers"]


GIB = 1024 ** 3


def weights_items(doc):
    return [i for i in doc["memory"]["items"] if i["key"] == "weights"]


def test_title_wraps_a_long_config_path():
    # The title names the --config path as given: a clone in a deep folder made it 104 columns.
    with tempfile.TemporaryDirectory() as d:
        name = "config.json"
        deep = os.path.join(d, "d" * (96 - len(d) - len(name) - 2))
        os.mkdir(deep)
        path = os.path.join(deep, name)
        with open(fixture("config_llama405b_fbgemm_fp8.json")) as src, open(path, "w") as dst:
            dst.write(src.read())
        assert 90 <= len(path) <= 96, path
        code, out, err = run("plan", "--config", path, "--gpus", "8", "--no-color")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].startswith(path) and "405.853B parameters" in lines[1], lines[:2]
        assert all(len(l) <= 100 for l in lines), [l for l in lines if len(l) > 100]


def test_config_fp8_405b_lists_which_modules_stay_in_bf16():
    # Meta's FP8 405B config.json: fbgemm_fp8 on the feed-forward of layers 1-124, the rest bf16.
    args = ["plan", "--config", fixture("config_llama405b_fbgemm_fp8.json"), "--gpus", "8"]
    code, doc, err = run_json(*args)
    assert code == 0, err
    items = {i["label"]: i for i in weights_items(doc)}
    assert set(items) == {"weights, fp8 (fbgemm_fp8)", "weights kept in bf16", "other weights (bf16)"}, items
    kept = items["weights kept in bf16"]["how"]
    assert "q_proj, k_proj, v_proj, o_proj: all 126 layers" in kept and "layers 0, 125" in kept, kept
    assert "(modules_to_not_convert)" in kept, kept
    assert "layers 1–124" in items["weights, fp8 (fbgemm_fp8)"]["how"]
    # vLLM logged 57.75 GiB of weights per GPU at TP 8; every linear in FP8 would be 47.74.
    per_gpu = sum(i["bytes_per_gpu"] for i in items.values()) / GIB
    assert abs(per_gpu - 57.75) / 57.75 < 0.05, per_gpu
    q = doc["model"]["quantization"]
    assert q["method"] == "fbgemm_fp8" and q["dtype"] == "bf16" and q["kv_cache_dtype"] is None, q
    assert [p["kind"] for p in q["parts"]] == ["quantized", "unconverted", "rest"], q["parts"]
    # The catalog entry follows the same layout.
    code, cat, _ = run_json("plan", "--model", "meta-llama/Llama-3.1-405B-Instruct-FP8", "--gpus", "8")
    assert code == 0 and abs(sum(i["bytes_per_gpu"] for i in weights_items(cat)) / GIB - per_gpu) < 1e-9
    code, out, _ = run(*args, "--no-color")
    assert "weights kept in bf16" in out and "modules_to_not_convert" in out, out
    assert all(len(l) <= 100 for l in out.splitlines()), out
    code, html, _ = run(*args, "--html")
    assert code == 0 and 'data-item="weights kept in bf16"' in html and "layers 0, 125" in html


def test_config_each_method_names_the_modules_it_leaves_unconverted():
    cases = {
        "config_awq_unconverted.json": ("awq", "fp16", "q_proj, k_proj, v_proj, gate_proj, up_proj, down_proj: layer 31; "
                                        "o_proj: all 32 layers", "modules_to_not_convert"),
        "config_gptq_dynamic.json": ("gptq", "fp16", "layer 0", "dynamic '-:"),
        "config_bnb_nf4_skip.json": ("bitsandbytes", "bf16", "down_proj: all 32 layers", "llm_int8_skip_modules"),
        "config_fp8_ignored_layers.json": ("fp8", "bf16", "q_proj, k_proj, v_proj, o_proj: layer 0", "ignored_layers"),
        "config_ct_fp8_ignore_kv.json": ("compressed-tensors", "bf16", "gate_proj, up_proj, down_proj: layer 0", "ignore"),
    }
    for name, (method, dtype, modules, why) in cases.items():
        code, doc, err = run_json("plan", "--config", fixture(name))
        assert code == 0, (name, err)
        q = doc["model"]["quantization"]
        assert q["method"] == method and q["dtype"] == dtype, (name, q)
        kept = [p for p in q["parts"] if p["kind"] == "unconverted"]
        assert len(kept) == 1 and modules in kept[0]["modules"], (name, kept)
        assert why in kept[0]["why"], (name, kept)
        labels = [i["label"] for i in weights_items(doc)]
        assert f"weights kept in {dtype}" in labels and any(l.startswith("weights, ") for l in labels), (name, labels)
        # The parts cover the whole model once.
        assert sum(p["params"] for p in q["parts"]) == doc["model"]["params"], name


def test_config_kv_cache_scheme_plans_an_8bit_cache_unless_told():
    cfg = fixture("config_ct_fp8_ignore_kv.json")
    code, doc, _ = run_json("plan", "--config", cfg, "--seq", "8192", "--batch", "4")
    assert code == 0 and doc["workload"]["kv_dtype"] == "fp8", doc["workload"]
    assert any("kv_cache_scheme" in n for n in doc["memory"]["notes"]), doc["memory"]["notes"]
    kv8 = sum(i["bytes_per_gpu"] for i in doc["memory"]["items"] if i["key"] == "kv_cache")
    code, doc16, _ = run_json("plan", "--config", cfg, "--seq", "8192", "--batch", "4", "--kv-dtype", "bf16")
    kv16 = sum(i["bytes_per_gpu"] for i in doc16["memory"]["items"] if i["key"] == "kv_cache")
    assert doc16["workload"]["kv_dtype"] == "bf16" and abs(kv16 - 2 * kv8) < 1, (kv8, kv16)
    # 32 layers × 8 KV heads × 128 × K and V × 1 B per token.
    assert abs(kv8 - 4 * 8192 * 32 * 8 * 128 * 2) < 1, kv8


def test_config_quantization_errors_are_exit_2_naming_the_field():
    cases = [
        ({"quant_method": "hqq", "nbits": 4}, "quant_method 'hqq' is not a method the planner models"),
        ({"quant_method": "fbgemm_fp8", "modules_to_not_convert": "lm_head"}, "must be a list of module names"),
        ({"quant_method": "fp8", "ignored_layers": ["model.(layers"]}, "'model.(layers' is not a pattern"),
        ({"quant_method": "compressed-tensors"}, "no config_groups"),
    ]
    base = json.load(open(fixture("config_llama7b.json")))
    for quant, what in cases:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({**base, "quantization_config": quant}, f)
        try:
            code, out, err = run("plan", "--config", f.name)
        finally:
            os.unlink(f.name)
        assert code == 2 and what in err and not out, (quant, code, err)


main(globals())
