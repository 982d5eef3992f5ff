"""Every numeric option of every command, given values no range allows: exit 2, the option named.

And the crafted input files: oversized, deeply nested JSON, a TOML key of 50,000 parts.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import harness
from harness import NO_DRIVER, run, slow

# Values no option accepts; ZERO, FRACTION and HUGE are added per option where they are invalid.
ALWAYS_BAD = ["nan", "NaN", "inf", "-inf", "-1", "0x10", "1e999", "", "ten"]

# (command words, option, also-bad values). Where 0 is allowed (--margin, --zero...) it is not listed.
OPTIONS = [
    (["check"], "--burn-duration", ["0", "1e300", "99999h", "25h", "5 s"]),
    (["bench", "memory"], "--gpus", ["1e300", "0.5", "1024"]),
    (["burn"], "--duration", ["0", "1e300", "99999h", "0.5"]),
    (["burn"], "--sample-hz", ["0", "1e300", "0.5", "21"]),
    (["burn"], "--gpus", ["1e300", "0.5"]),
    (["host"], "--storage-bytes", ["0", "1e300", "0.5", "1e30T", "0x10G", "1K", "12Q"]),
    (["host", "storage"], "--storage-bytes", ["0", "1e300", "0.5"]),
    (["host"], "--seconds", ["0", "1e300", "601"]),
    (["host", "net"], "--seconds", ["0", "1e300"]),
    (["host", "net"], "--streams", ["0", "1e300", "0.5", "129"]),
    (["host", "net"], "--port", ["0", "1e300", "0.5", "65536"]),
    (["plan", "--model", "llama-3-8b"], "--batch", ["0", "1e300", "0.5"]),
    (["plan", "--model", "llama-3-8b"], "--seq", ["0", "1e300", "0.5"]),
    (["plan", "--model", "llama-3-8b", "--task", "lora"], "--lora-rank", ["0", "1e300", "0.5", "-5"]),
    (["plan", "--model", "llama-3-8b", "--task", "full"], "--zero", ["1e300", "0.5", "4"]),
    (["plan", "--model", "llama-3-8b", "--task", "full"], "--tp", ["0", "1e300", "0.5"]),
    (["plan", "--model", "llama-3-8b"], "--gpus", ["0", "1e300", "0.5"]),
    (["plan", "--model", "llama-3-8b"], "--margin", ["1e300", "2"]),
    (["plan", "--model", "llama-3-8b"], "--cuda-context-gib", ["1e300", "-5"]),
    (["plan", "--model", "llama-3-8b"], "--engine-fraction", ["0", "1e300", "2"]),
    (["plan", "--params", "7B"], "--activations-gib", ["1e300"]),
    (["plan", "--model", "llama-3-8b", "--task", "full"], "--tokens", ["0", "1e300", "0.5"]),
    (["plan", "--model", "llama-3-8b", "--task", "full"], "--mfu", ["0", "1e300", "2"]),
    (["plan", "--model", "llama-3-8b"], "--top", ["0", "1e300", "0.5"]),
    (["plan"], "--params", ["0", "1e300", "0.5", "1e30T", "7Q"]),
]


@slow
def test_every_numeric_option_refuses_bad_values():
    failures = []
    for words, option, extra in OPTIONS:
        # An empty --gpus is "all GPUs", as when the option is not given.
        for value in [v for v in ALWAYS_BAD if v or option != "--gpus"] + extra:
            args = [*words, f"{option}={value}"]
            code, out, err = run(*args, env=NO_DRIVER, timeout=60)
            if code != 2 or option not in err:
                failures.append(f"{' '.join(args)!r}: exit {code}, stderr {err.strip()[:200]!r}")
        # Under --json the same refusal is a document whose fatal error names the option.
        for value in ("nan", "-1", extra[0]):
            code, out, err = run(*words, f"{option}={value}", "--json", env=NO_DRIVER, timeout=60)
            try:
                fatal = json.loads(out)["fatal"]
            except (ValueError, KeyError, TypeError) as ex:
                failures.append(f"{option}={value} --json: no JSON error ({ex}): {out[:200]!r}")
                continue
            if code != 2 or option not in fatal["message"] or fatal["kind"] != "usage":
                failures.append(f"{option}={value} --json: exit {code}, fatal {fatal}")
    assert not failures, "\n".join(failures)


def test_the_error_names_value_range_and_example():
    code, _, err = run("burn", "--sample-hz", "nan", env=NO_DRIVER)
    assert code == 2
    assert "--sample-hz nan: not a number; give a rate between 1 and 20 Hz, e.g. --sample-hz 2" in err, err
    code, _, err = run("plan", "--model", "llama-3-8b", "--engine-fraction", "2")
    assert code == 2 and "greater than 0 and at most 1" in err and "e.g. --engine-fraction" in err, err
    code, _, err = run("host", "storage", "--storage-bytes", "0x10G", env=NO_DRIVER)
    assert code == 2 and "hexadecimal" in err, err


def test_option_errors_are_json_documents_under_json():
    for args in (["burn", "--sample-hz", "nan"], ["plan", "--model", "llama-3-8b", "--mfu", "-1"],
                 ["host", "--seconds", "inf"]):
        code, out, err = run(*args, "--json", env=NO_DRIVER)
        assert code == 2, (args, code, err)
        doc = json.loads(out)
        assert doc["fatal"]["kind"] == "usage", doc["fatal"]
        assert args[-2] in doc["fatal"]["message"], doc["fatal"]


def test_bytes_that_are_not_utf8_still_give_a_json_error():
    # The byte 0xff is not UTF-8: the JSON document replaces it instead of failing to print.
    for args in ([b"burn", b"--sample-hz", b"\xff"], [b"check", b"--expect", b"\xff cores"]):
        env = dict(os.environ, **NO_DRIVER)
        p = subprocess.run([harness.GPUVET, *args, b"--json"], capture_output=True, env=env, timeout=60)
        assert p.returncode == 2, (args, p.returncode, p.stderr[-300:])
        assert json.loads(p.stdout)["fatal"]["kind"] in ("usage", "input"), p.stdout


def test_help_states_each_range():
    for words, option, needle in ((["burn"], "--sample-hz", "between 1 and 20 Hz"),
                                  (["burn"], "--duration", "between 1 s and 24 h"),
                                  (["host", "storage"], "--storage-bytes", "between 1 MiB and 16 TiB"),
                                  (["plan"], "--mfu", "greater than 0 and at most 1"),
                                  (["plan"], "--tp", "between 1 and 64")):
        code, out, _ = run(*words, "--help")
        assert code == 0
        line = " ".join(l.strip() for l in out.splitlines() if option in l or needle in l)
        assert needle in line, (option, out)


def test_a_bad_port_in_a_server_address_is_exit_2_before_anything_runs():
    for args in (["check", "--net-server", "10.0.0.1:nan"], ["host", "net", "--server", "10.0.0.1:0x50"],
                 ["check", "--net-server", "10.0.0.1:70000"]):
        code, _, err = run(*args, env=NO_DRIVER, timeout=60)
        assert code == 2 and "port" in err, (args, code, err[-300:])


def test_lora_targets_must_name_a_layer():
    code, _, err = run("plan", "--model", "llama-3-8b", "--task", "lora", "--lora-targets", "nonsense")
    assert code == 2 and "--lora-targets" in err and "q_proj" in err, err
    code, _, err = run("plan", "--model", "llama-3-8b", "--task", "lora", "--lora-targets", "q_proj,v_proj")
    assert code == 0, err


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_crafted_files_are_refused_quickly():
    with tempfile.TemporaryDirectory() as tmp:
        deep = '{"text_config": ' * 8000 + "{}" + "}" * 8000
        key = "a" + ".a" * 49999
        cases = [
            (["plan", "--config", write(tmp, "deep.json", deep), "--task", "lora"], "nested deeper than 64"),
            (["specs", "list", "--specs", write(tmp, "key.toml", f"[[gpu]]\n{key} = 1\n")], ":2:"),
            (["check", "--order", write(tmp, "order.toml", f"{key} = 1\n")], "dotted key"),
            (["plan", "--model", "llama-3-8b", "--prices", write(tmp, "prices.toml", f"[{key}]\n")], "dotted key"),
            (["specs", "list", "--specs", write(tmp, "big.toml", "#" * (5 << 20))], "4.0 MiB limit"),
            (["specs", "list", "--specs", "/dev/zero"], "4.0 MiB limit"),
            (["plan", "--config", "/dev/zero"], "4.0 MiB limit"),
            (["plan", "--model", "llama-3-8b", "--measured", "/dev/zero"], "64.0 MiB limit"),
            # "Did you mean" over a 3 MB name must not be quadratic.
            (["plan", "--model", "llama-3-8b", "--prices",
              write(tmp, "long.toml", '[prices]\n"' + "x" * 3_000_000 + '" = 1\n')], "unknown GPU"),
        ]
        for args, needle in cases:
            t0 = time.monotonic()
            code, _, err = run(*args, env=NO_DRIVER, timeout=60)
            assert code == 2 and needle in err, (args[:3], code, err[:300])
            assert time.monotonic() - t0 < 20, args[:3]


def test_file_fields_go_through_the_same_ranges():
    with tempfile.TemporaryDirectory() as tmp:
        base = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
                "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256}
        for patch, needle in (({"head_dim": 0}, "head_dim = 0: too small"),
                              ({"hidden_size": "4096"}, "hidden_size must be a number"),
                              ({"num_hidden_layers": 32.5}, "not a whole number"),
                              ({"quantization_config": {"quant_method": "gptq", "bits": 2 ** 40}}, "bits"),
                              ({"num_key_value_heads": -8}, "num_key_value_heads = -8")):
            cfg = dict(base, **patch)
            code, _, err = run("plan", "--config", write(tmp, "c.json", json.dumps(cfg)))
            assert code == 2 and needle in err, (patch, code, err)
        code, _, err = run("plan", "--model", "llama-3-8b", "--prices",
                           write(tmp, "p.toml", 'curency = "EUR"\n[prices]\n"H100 SXM" = 2.49\n'))
        assert code == 2 and "curency" in err, err
        code, _, err = run("plan", "--model", "llama-3-8b", "--prices",
                           write(tmp, "p.toml", '[prices]\n"H100 SXM" = inf\n'))
        assert code == 2 and "not a finite number" in err, err
        code, _, err = run("specs", "list", "--specs", write(tmp, "s.toml", "[[gpu]]\nkey = \"h100-sxm5-80gb\"\n"
                                                                           "fp64_tflops = inf\n"))
        assert code == 2 and "not a finite number" in err, err
        code, _, err = run("check", "--expect", "99999999999999 cores", env=NO_DRIVER)
        assert code == 2 and "core count" in err and "GPU count" not in err, err


def test_a_user_sku_cannot_take_another_skus_pci_id():
    with tempfile.TemporaryDirectory() as tmp:
        code, out, _ = run("specs", "show", "h100 sxm", "--json")
        assert code == 0, out
        h100 = json.loads(out)["gpu"]
        pci = h100["pci_device_ids"][0]
        sku = (f'[[gpu]]\nkey = "mine"\nname = "Mine"\narchitecture = "Hopper"\ncompute_capability = "9.0"\n'
               f'memory_size_gib = 80\nmemory_type = "HBM3"\nsource = "me"\npci_device_ids = [{pci}]\n')
        code, _, err = run("specs", "list", "--specs", write(tmp, "s.toml", sku))
        assert code == 2 and h100["key"] in err and f'key = "{h100["key"]}"' in err, err
        over = f'[[gpu]]\nkey = "{h100["key"]}"\nnotes = "ours"\npci_device_ids = [{pci}]\n'
        code, _, err = run("specs", "list", "--specs", write(tmp, "o.toml", over))
        assert code == 0, err


if __name__ == "__main__":
    harness.main(globals())
