# gpuvet's training benchmark, embedded in the gpuvet binary and run with the server's own Python.
# Synthetic data made on the device, models with random weights: nothing is downloaded.
#
# Protocol with gpuvet (src/train/train_run.cpp): stdout lines that start with "GPUVET_PROGRESS "
# (a heartbeat: gpuvet's watchdog ends a run that sends none for a while) and exactly one
# "GPUVET_RESULT " line followed by a JSON object. Anything else on stdout is ignored; stderr is kept
# for the error message. A known failure is a result with "status": "error" and an "error_kind".
import argparse
import json
import os
import sys
import time

MARK = "GPUVET_"


def finite(obj):
    """NaN and infinities become null: JSON has no token for them, and a figure that is not a number
    was not measured."""
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def emit(kind, obj):
    sys.stdout.write(MARK + kind + " " + json.dumps(finite(obj), allow_nan=False) + "\n")
    sys.stdout.flush()


def fail(kind, message, **extra):
    emit("RESULT", dict(status="error", error_kind=kind, message=message, **extra))
    sys.exit(0)


def progress(phase, **kw):
    emit("PROGRESS", dict(phase=phase, **kw))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50", choices=["resnet50", "bert-large", "bert-base", "gpt"])
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--devices", default="0", help="CUDA ordinals, comma-separated")
    p.add_argument("--steps", type=int, default=0, help="timed steps (0: the model's default)")
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--batch", type=int, default=0, help="per-device batch (0: by memory, as the baseline)")
    p.add_argument("--tiny", action="store_true", help="test shapes (CPU test runs)")
    p.add_argument("--channels-last", action="store_true", help="ResNet-50: also time channels-last")
    # Tests only: the multi-process path (DDP) on the CPU over gloo, so it runs where no GPU is.
    p.add_argument("--cpu-ranks", type=int, default=0, help="with --device cpu: DDP over gloo with N ranks")
    return p.parse_args()


# --- batch by memory, as the public baselines chose it (docs/train.md) ------------------------------
# Lambda's per-GPU batches: ResNet-50 AMP 256 (16 GB) 448 (24 GB) 720 (40 GB) 928 (48 GB) 1280 (80 GB)
# 2560 (141 GB); BERT SQuAD seq 384 base/large 48/16, 96/28, 160/48, 192/64, 320/112, 592/192.
BATCH_BY_GIB = {
    "resnet50": [(130, 2560), (75, 1280), (44, 928), (38, 720), (22, 448), (15, 256), (0, 128)],
    "bert-base": [(130, 592), (75, 320), (44, 192), (38, 160), (22, 96), (15, 48), (0, 24)],
    "bert-large": [(130, 192), (75, 112), (44, 64), (38, 48), (22, 28), (15, 16), (0, 8)],
    "gpt": [(130, 64), (75, 32), (38, 16), (22, 8), (15, 4), (0, 2)],
}


def batch_for(model, memory_bytes):
    gib = memory_bytes / 2**30
    for floor, b in BATCH_BY_GIB[model]:
        if gib >= floor:
            return b
    return BATCH_BY_GIB[model][-1][1]


# --- models and synthetic batches --------------------------------------------------------------------
class Workload:
    """One model with its optimizer and a synthetic batch; step() runs one training step."""

    def __init__(self, torch, model, device, batch, tiny, channels_last=False):
        self.torch, self.device, self.batch = torch, device, batch
        self.cuda = device.type == "cuda"
        self.unit, self.per_sample, self.flops_per_unit = "images/s", 1, None
        if model == "resnet50":
            self._resnet(batch, tiny, channels_last)
        elif model.startswith("bert"):
            self._bert(model, batch, tiny)
        else:
            self._gpt(batch, tiny)

    def _resnet(self, batch, tiny, channels_last):
        torch = self.torch
        import torchvision

        side = 32 if tiny else 224
        net = torchvision.models.resnet50(weights=None).to(self.device)
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        net = net.to(memory_format=fmt)
        self.x = torch.randn(batch, 3, side, side, device=self.device).to(memory_format=fmt)
        self.y = torch.randint(0, 1000, (batch,), device=self.device)
        self.net, self.dtype = net, torch.float16
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.precision = "amp-fp16" if self.cuda else "fp32"
        self.forward = lambda: self.loss_fn(self.net(self.x), self.y)

    def _bert(self, model, batch, tiny):
        torch = self.torch
        try:
            import transformers
        except ImportError as e:
            fail("no_transformers", "transformers is not importable (%s): BERT needs its model definition" % e)
        large = model == "bert-large"
        if tiny:
            cfg = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                          intermediate_size=64, vocab_size=512, max_position_embeddings=64)
            seq = 16
        else:
            cfg = transformers.BertConfig(hidden_size=1024 if large else 768, num_hidden_layers=24 if large else 12,
                                          num_attention_heads=16 if large else 12,
                                          intermediate_size=4096 if large else 3072)
            seq = 384  # SQuAD v1.1 fine-tuning, as the baselines ran it
        self.net = transformers.BertForQuestionAnswering(cfg).to(self.device)
        self.ids = torch.randint(0, cfg.vocab_size, (batch, seq), device=self.device)
        self.start = torch.randint(0, seq, (batch,), device=self.device)
        self.end = torch.randint(0, seq, (batch,), device=self.device)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=1e-5)
        self.dtype, self.unit, self.seq = torch.float16, "sequences/s", seq
        self.precision = "amp-fp16" if self.cuda else "fp32"
        self.forward = lambda: self.net(input_ids=self.ids, start_positions=self.start, end_positions=self.end).loss

    def _gpt(self, batch, tiny):
        torch = self.torch
        F = torch.nn.functional
        layers, dim, heads, seq, vocab = (2, 64, 2, 32, 512) if tiny else (12, 768, 12, 1024, 50304)

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
                self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
                self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                               torch.nn.Linear(4 * dim, dim))

            def forward(self, x):
                b, t, _ = x.shape
                q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.proj(a.transpose(1, 2).reshape(b, t, dim))
                return x + self.mlp(self.ln2(x))

        class Gpt(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = torch.nn.Embedding(vocab, dim), torch.nn.Embedding(seq, dim)
                self.blocks = torch.nn.Sequential(*[Block() for _ in range(layers)])
                self.ln, self.head = torch.nn.LayerNorm(dim), torch.nn.Linear(dim, vocab, bias=False)

            def forward(self, idx):
                x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
                return self.head(self.ln(self.blocks(x)))

        self.net = Gpt().to(self.device)
        self.ids = torch.randint(0, vocab, (batch, seq + 1), device=self.device)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=3e-4, fused=self.cuda)
        self.dtype, self.unit, self.per_sample = torch.bfloat16, "tokens/s", seq
        self.precision = "bf16" if self.cuda else "fp32"
        params = sum(p.numel() for p in self.net.parameters()) - self.net.pos.weight.numel()
        # nanoGPT's estimate_mfu: 6N per token for the weights, 12·L·H·Q·T for the attention.
        self.flops_per_unit = 6 * params + 12 * layers * heads * (dim // heads) * seq
        self.forward = lambda: F.cross_entropy(self.net(self.ids[:, :-1]).flatten(0, 1), self.ids[:, 1:].flatten())

    def wrap_ddp(self, rank_device):
        from torch.nn.parallel import DistributedDataParallel

        ids = [rank_device.index] if rank_device.type == "cuda" else None
        self.net = DistributedDataParallel(self.net, device_ids=ids)

    def prepare(self):
        torch = self.torch
        use_scaler = self.cuda and self.dtype == torch.float16
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_scaler)
        self.autocast = self.cuda

    def step(self):
        torch = self.torch
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.dtype, enabled=self.autocast):
            loss = self.forward()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_run(torch, w, warmup, steps, label):
    """Warm-up excluded; the timed steps synchronized at both ends; a heartbeat every few steps."""
    for i in range(warmup):
        w.step()
        if i % 5 == 0:
            sync(torch, w.device)
            progress("warmup", step=i + 1, of=warmup, run=label)
    sync(torch, w.device)
    t0 = last = time.perf_counter()
    for i in range(steps):
        w.step()
        if time.perf_counter() - last > 2:
            sync(torch, w.device)
            last = time.perf_counter()
            progress("timed", step=i + 1, of=steps, run=label)
    sync(torch, w.device)
    elapsed = time.perf_counter() - t0
    return w.batch * w.per_sample * steps / elapsed, elapsed


def is_oom(torch, e):
    return isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in str(e).lower()


def run_one(torch, a, device, batch, label, channels_last=False):
    """Builds the workload and times it; at out-of-memory, halves the batch (at most 3 times)."""
    tried = []
    while True:
        try:
            w = Workload(torch, a.model, device, batch, a.tiny, channels_last)
            w.prepare()
            rate, elapsed = timed_run(torch, w, a.warmup, a.steps, label)
            return dict(throughput=rate, elapsed_s=elapsed, batch=batch, oom_batches=tried,
                        unit=w.unit, precision=w.precision, flops_per_unit=w.flops_per_unit)
        except RuntimeError as e:
            if device.type != "cuda" or not is_oom(torch, e):
                raise
            if batch <= 1 or len(tried) >= 3:
                fail("oom", "out of memory at every batch tried (%s): %s"
                     % (", ".join(map(str, tried + [batch])), str(e).splitlines()[0]))
            tried.append(batch)
            w = None
            torch.cuda.empty_cache()
            progress("oom", batch=batch, retry_batch=batch // 2, run=label)
            batch //= 2


def ddp_worker(rank, a, devices, batch, queue):
    import torch
    import torch.distributed as dist

    try:
        if a.device == "cuda":
            device = torch.device("cuda", devices[rank])
            torch.cuda.set_device(device)
            torch.backends.cudnn.benchmark = True
        else:
            device = torch.device("cpu")
        dist.init_process_group("nccl" if a.device == "cuda" else "gloo", rank=rank, world_size=len(devices))
        w = Workload(torch, a.model, device, batch, a.tiny)
        w.wrap_ddp(device)
        w.prepare()
        rate, elapsed = timed_run(torch, w, a.warmup, a.steps, "ddp")
        queue.put(dict(rank=rank, ordinal=devices[rank], throughput=rate, elapsed_s=elapsed))
        dist.destroy_process_group()
    except Exception as e:  # reported to the parent, which names the failing rank
        queue.put(dict(rank=rank, ordinal=devices[rank], error="%s: %s" % (type(e).__name__, e)))
        # A non-zero exit makes mp.spawn end the other ranks, which would wait in NCCL otherwise.
        sys.stdout.flush()
        os._exit(1)


def run_ddp(torch, a, devices, batch):
    import torch.multiprocessing as mp

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    spawn_error = None
    try:
        mp.spawn(ddp_worker, args=(a, devices, batch, queue), nprocs=len(devices), join=True)
    except Exception as e:
        spawn_error = str(e).splitlines()[0] if str(e) else type(e).__name__
    ranks = []
    while not queue.empty():
        ranks.append(queue.get())
    if spawn_error and not any("error" in r for r in ranks):
        fail("nccl", "the multi-GPU run failed: %s" % spawn_error)
    errors = [r for r in ranks if "error" in r]
    if errors or len(ranks) != len(devices):
        what = "; ".join("rank %d (GPU %d): %s" % (r["rank"], r["ordinal"], r["error"]) for r in errors)
        fail("nccl", "the multi-GPU run over NCCL failed: " + (what or "a rank reported nothing"))
    return sorted(ranks, key=lambda r: r["rank"])


def main():
    a = parse_args()
    progress("start")
    try:
        import torch
    except ImportError as e:
        fail("no_torch", "PyTorch is not importable by %s (%s)" % (sys.executable, e))
    if a.model == "resnet50":
        try:
            import torchvision  # noqa: F401
        except ImportError as e:
            fail("no_torchvision", "torchvision is not importable (%s): ResNet-50 needs its model definition" % e)
    # A ROCm build runs on AMD GPUs through the same torch.cuda API: torch.version.hip names its ROCm.
    hip = getattr(torch.version, "hip", None)
    info = dict(torch=torch.__version__, cuda=torch.version.cuda, hip=hip, python=sys.version.split()[0],
                # A ROCm build answers MIOpen's version here, which is not cuDNN's.
                cudnn=torch.backends.cudnn.version() if torch.backends.cudnn.is_available() and hip is None else None)
    defaults = dict(resnet50=(20, 100), gpt=(10, 50)).get(a.model, (10, 100))
    a.warmup = a.warmup or (2 if a.tiny else defaults[0])
    a.steps = a.steps or (3 if a.tiny else defaults[1])
    if a.device == "cuda":
        if torch.version.cuda is None and hip is None:
            fail("no_cuda_build", "this PyTorch %s was built without CUDA or ROCm (a CPU-only wheel)"
                 % torch.__version__, **info)
        if not torch.cuda.is_available():
            fail("cuda_unavailable", "torch.cuda.is_available() is False (PyTorch %s for %s)"
                 % (torch.__version__, "ROCm " + hip if hip else "CUDA %s" % torch.version.cuda), **info)
        devices = [int(d) for d in a.devices.split(",") if d != ""]
        torch.backends.cudnn.benchmark = True
        first = torch.device("cuda", devices[0])
        info["gpu_names"] = [torch.cuda.get_device_name(d) for d in devices]
        batch = a.batch or batch_for(a.model, torch.cuda.get_device_properties(first).total_memory)
    else:
        devices, first = list(range(a.cpu_ranks)), torch.device("cpu")
        batch = a.batch or 2
    single = run_one(torch, a, first, batch, "single")
    result = dict(status="ok", model=a.model, device=a.device, warmup=a.warmup, steps=a.steps, single=single, **info)
    if a.channels_last and a.model == "resnet50":
        result["channels_last"] = run_one(torch, a, first, single["batch"], "channels_last", True)
    if len(devices) > 1:
        result["ddp"] = run_ddp(torch, a, devices, single["batch"])
    emit("RESULT", result)


if __name__ == "__main__":
    main()
