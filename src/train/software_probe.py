# gpuvet's probe of the deep-learning software stack (gpu.software), embedded in the gpuvet binary.
# Prints one "GPUVET_RESULT " line with a JSON object: Python, PyTorch and what it was built with
# (CUDA, or ROCm's HIP), what it sees, and the versions of TensorFlow and JAX when installed (read
# from their package metadata, not imported: importing them takes seconds and may claim GPU memory).
import importlib.metadata
import importlib.util
import json
import sys


def version_of(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed(module, *dists):
    if importlib.util.find_spec(module) is None:
        return None
    for d in dists:
        v = version_of(d)
        if v:
            return v
    return "unknown version"


def torch_facts():
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install raising something else
        return dict(torch_error="%s: %s" % (type(e).__name__, e))
    # A ROCm build sets torch.version.hip ("6.2.41133-dd7f95766") and lists gfx targets as its arch list.
    hip = getattr(torch.version, "hip", None)
    out = dict(torch=torch.__version__, torch_cuda=torch.version.cuda, torch_hip=hip)
    out["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    try:
        out["nccl"] = ".".join(map(str, torch.cuda.nccl.version())) if torch.version.cuda else None
    except Exception:
        out["nccl"] = None
    out["arch_list"] = torch.cuda.get_arch_list() if (torch.version.cuda or hip) else []
    out["cuda_available"] = bool(torch.cuda.is_available())
    out["device_count"] = torch.cuda.device_count() if out["cuda_available"] else 0
    out["capabilities"] = ["%d.%d" % torch.cuda.get_device_capability(i) for i in range(out["device_count"])]
    return out


def main():
    facts = dict(python=sys.version.split()[0], executable=sys.executable)
    facts.update(torch_facts())
    facts["torchvision"] = installed("torchvision", "torchvision")
    facts["transformers"] = installed("transformers", "transformers")
    facts["tensorflow"] = installed("tensorflow", "tensorflow", "tensorflow-cpu", "tf-nightly")
    facts["jax"] = installed("jax", "jax")
    facts["jaxlib"] = version_of("jaxlib")
    sys.stdout.write("GPUVET_RESULT " + json.dumps(facts) + "\n")


if __name__ == "__main__":
    main()
