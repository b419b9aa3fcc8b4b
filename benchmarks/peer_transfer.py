"""Peer figures for TransferBenchmark, in the same run: PyTorch's host<->device copies of 1 GiB
from pinned and from pageable memory, timed with CUDA events (median of 5 after a warm-up)."""
import statistics
import torch

GIB = 1 << 30
dev = torch.device("cuda")
for pinned in (True, False):
    host = torch.ones(GIB // 8, dtype=torch.float64, pin_memory=pinned)
    gpu = torch.empty_like(host, device=dev)
    back = torch.empty_like(host, pin_memory=pinned)
    h2d, d2h = [], []
    for rep in range(6):
        s, m, e = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        s.record()
        gpu.copy_(host, non_blocking=pinned)
        m.record()
        back.copy_(gpu, non_blocking=pinned)
        e.record()
        torch.cuda.synchronize()
        if rep:
            h2d.append(GIB / (s.elapsed_time(m) * 1e6))
            d2h.append(GIB / (m.elapsed_time(e) * 1e6))
    assert torch.equal(host, back)
    kind = "pinned" if pinned else "pageable"
    print(f"torch 1 GiB {kind:8s} host->device  median {statistics.median(h2d):6.2f} GB/s  max {max(h2d):6.2f}")
    print(f"torch 1 GiB {kind:8s} device->host  median {statistics.median(d2h):6.2f} GB/s  max {max(d2h):6.2f}")
