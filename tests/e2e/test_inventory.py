"""gpuvet inventory through the driver test doubles: every fact the scenario states comes out."""
from harness import NO_DRIVER, fake_env, main, run, run_json


def fact(gpu, key):
    v = gpu[key]
    return v["value"] if isinstance(v, dict) else v


def test_healthy_box_values():
    code, doc, err = run_json("inventory", env=fake_env("healthy_8x_h100_sxm"))
    assert code == 0, err
    gpus = doc["gpus"]
    assert len(gpus) == 8
    g = gpus[0]
    assert fact(g, "name") == "NVIDIA H100 80GB HBM3"
    assert fact(g, "pci_device_id") == 0x2330
    assert fact(g, "sm_count") == 132
    # Values written by the driver through out-parameters (a read before the call returns would be 0).
    assert fact(g, "clock_sm_mhz") == 1980
    assert fact(g, "clock_sm_max_mhz") == 1980
    assert fact(g, "temperature_c") == 34
    assert fact(g, "temperature_slowdown_c") == 89
    # Memory temperature comes from the NVML_FI_DEV_MEMORY_TEMP field value (scenario default 38).
    assert fact(g, "temperature_memory_c") == 38, g["temperature_memory_c"]
    assert fact(g, "temperature_memory_max_c") == 95
    assert fact(g, "compute_mode") == "Default"
    assert fact(g, "persistence_mode") is True
    assert fact(g, "mig_enabled") is False
    assert fact(g, "pcie_width_current") == 16


def test_terminal_output_names_absent_reasons():
    code, out, _ = run("inventory", "--no-color", env=fake_env("healthy_8x_h100_sxm"))
    assert code == 0
    assert "GPU 7" in out and "Topology" in out
    assert "— (" in out  # absent facts carry their reason


def test_old_driver_makes_only_new_facts_absent():
    code, doc, err = run_json("inventory", env=fake_env("old_driver", old=True))
    assert code == 0, err
    g = doc["gpus"][0]
    assert fact(g, "name")  # the basics are still there
    rows = g["remapped_rows_correctable"]
    assert rows["value"] is None and "nvmlDeviceGetRemappedRows" in rows["absent_reason"], rows
    mt = g["temperature_memory_c"]
    assert mt["value"] is None and mt["absent_reason"] == "driver lacks nvmlDeviceGetFieldValues", mt


def test_memory_temperature_from_the_scenario_or_why_not():
    code, doc, err = run_json("inventory", env=fake_env("burn_hot_memory"))
    assert code == 0, err
    g0, g1 = doc["gpus"][0], doc["gpus"][1]
    assert fact(g0, "temperature_memory_c") == 92, g0["temperature_memory_c"]
    mt = g1["temperature_memory_c"]
    assert mt["value"] is None, mt
    assert mt["absent_reason"] == "this GPU does not report memory temperature (GDDR cards usually do not)", mt
    assert not g1.get("errors"), g1.get("errors")  # unsupported is not an error


def test_gpu_lost_mid_inventory_is_marked_and_others_continue():
    code, doc, err = run_json("inventory", env=fake_env("gpu_lost_mid_inventory"))
    assert code == 0, err
    lost = [g for g in doc["gpus"] if g.get("lost")]
    assert len(lost) == 1, [g.get("lost") for g in doc["gpus"]]
    assert len(doc["gpus"]) > 1


def test_kernel_driver_not_loaded():
    code, out, err = run("inventory", "--no-color", env=fake_env("kernel_driver_not_loaded"))
    assert code == 0, err
    assert "driver" in out.lower()


def test_no_driver():
    code, out, _ = run("inventory", "--no-color", env=NO_DRIVER)
    assert code == 0
    assert "no GPU driver found: NVIDIA (libcuda.so.1 could not be loaded:" in out, out
    assert "AMD (libamd_smi.so could not be loaded:" in out, out


if __name__ == "__main__":
    main(globals())
