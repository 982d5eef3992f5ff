"""gpuvet specs: list, show and compare, as the seed articles use them."""
import re

from harness import main, run, run_json


def ratio(out, label, column):
    """The ratio printed in a compare table row, e.g. 'Memory bandwidth GB/s' column 1 -> 1.43."""
    for line in out.splitlines():
        if line.startswith(label):
            found = re.findall(r"\(×([0-9.]+)\)", line)
            return float(found[column - 1])
    raise AssertionError(f"row {label!r} not found in:\n{out}")


def test_list_has_the_catalogue():
    code, out, _ = run("specs", "list", "--no-color")
    assert code == 0
    for name in ["H100 SXM5", "A100 SXM4 80GB", "RTX 4090", "L40S", "B200", "H20", "T4"]:
        assert name in out, name


def test_show_says_which_sku_it_chose():
    code, out, _ = run("specs", "show", "h100", "--no-color")
    assert code == 0
    assert "'h100' → H100 SXM5 80GB" in out, out
    assert "also:" in out and "H100 PCIe" in out  # the alternatives are named
    assert "Source" in out


def test_show_forgiving_names():
    for q, want in [("H100-SXM-80G", "H100 SXM5 80GB"), ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB"),
                    ("a100 80g pcie", "A100 PCIe 80GB"), ("4090", "RTX 4090")]:
        code, doc, _ = run_json("specs", "show", q)
        assert code == 0, q
        assert want in doc["gpu"]["name"], (q, doc["gpu"]["name"])


def test_unknown_name_lists_closest():
    code, _, err = run("specs", "show", "h1OO")
    assert code == 2
    assert "closest:" in err and "H100" in err, err


def test_compare_h200_h100():
    code, out, _ = run("specs", "compare", "h100 sxm", "h200 sxm", "--no-color")
    assert code == 0
    assert abs(ratio(out, "Memory bandwidth", 1) - 1.43) < 0.006, out
    assert ratio(out, "BF16 tensor", 1) == 1.0, out


def test_compare_seed_articles():
    # A100 vs H100: same 80 GB, about 3x the FP16 tensor rate.
    code, doc, _ = run_json("specs", "compare", "a100 sxm4 80gb", "h100 sxm")
    assert code == 0
    assert 3.0 < doc["ratios_to_first"]["fp16_tensor_tflops"][1] < 3.3
    assert doc["ratios_to_first"]["memory_size_gib"][1] == 1.0
    # A10 / L40S / A100 / H100 bandwidths as the articles' table gives them.
    code, doc, _ = run_json("specs", "compare", "a10", "l40s", "a100 80g pcie", "h100 sxm")
    bws = [g["memory_bandwidth_gbps"] for g in doc["gpus"]]
    assert bws == [600, 864, 1935, 3350], bws
    # RTX 4090 vs A100: about half the bandwidth, more FP32, no NVLink.
    code, doc, _ = run_json("specs", "compare", "a100 sxm4 80gb", "4090")
    assert 0.45 < doc["ratios_to_first"]["memory_bandwidth_gbps"][1] < 0.52
    assert doc["ratios_to_first"]["fp32_tflops"][1] > 1
    assert doc["gpus"][1]["nvlink_bandwidth_gbps"] is None


def test_compare_needs_two():
    code, _, err = run("specs", "compare", "h100")
    assert code == 2, err


if __name__ == "__main__":
    main(globals())
