"""gpuvet check --expect / --order as a user meets them: bad input exits 2 with the accepted forms,
an order that a box without a driver cannot meet exits 1 with one line per ordered item."""
import os
import tempfile

from harness import NO_DRIVER, main, run, run_json, slow


def test_bad_expect_exits_2_with_the_accepted_forms():
    code, _, err = run("check", "--expect", "8x H1OO-ZXM", env=NO_DRIVER)
    assert code == 2, err
    assert "unknown GPU model 'H1OO-ZXM'" in err and "8x H100-SXM-80GB" in err, err


def test_bad_order_file_names_line_and_column():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "order.toml")
        with open(path, "w") as f:
            f.write("gpu_count = 8\ngpu_modle = \"H100\"\n")
        code, _, err = run("check", "--order", path, env=NO_DRIVER)
    assert code == 2, err
    assert path + ":2:13: unknown key 'gpu_modle'" in err, err


def test_expect_and_order_together_is_a_usage_error():
    code, _, err = run("check", "--expect", "H100", "--order", "x.toml", env=NO_DRIVER)
    assert code == 2 and "--expect and --order" in err, err


@slow
def test_ordered_gpus_without_driver_fail_with_the_reason():
    code, doc, _ = run_json("check", "--expect", "8x H100, 1 cores", env=NO_DRIVER)
    assert code == 1, doc
    checks = {c["key"]: c for c in doc["checks"]}
    assert checks["order.gpu_count"]["verdict"] == "FAIL"
    assert "no GPU driver found: NVIDIA (" in checks["order.gpu_count"]["summary"]
    assert checks["order.cpu_cores"]["verdict"] == "PASS"
    assert checks["gpu.identity"]["verdict"] == "SKIP"


@slow
def test_no_order_is_one_skip_line():
    code, doc, _ = run_json("check", env=NO_DRIVER)
    order = [c for c in doc["checks"] if c["key"].startswith("order")]
    assert len(order) == 1 and order[0]["verdict"] == "SKIP", order
    assert order[0]["summary"] == "no order given: use --expect or --order"


if __name__ == "__main__":
    main(globals())
