"""Time of the collectives a parallel vLLM forward pass issues (alpha-beta model).

time = latency + traffic / (link bandwidth x efficiency), with traffic per GPU:
  ring all-reduce of B bytes over n GPUs:   2 (n - 1) / n x B      (reduce-scatter + all-gather)
  all-gather / reduce-scatter of n x B:     (n - 1) x B            (each GPU sends/receives n-1 shards)
  point-to-point send of B bytes:           B
Link: NVLink per-direction bandwidth when the GPU has NVLink (``GPU.link_unidir_gb_s``), otherwise
PCIe per-direction bandwidth (``GPU.pcie_unidir_gb_s``). Bandwidths are 10^9 B/s in the catalog. On the
fully connected xGMI mesh of MI300X-class platforms only the links to the n - 1 peers carry the traffic
(``XGMI_MESH_LINKS``).

ALLREDUCE_IN_STEP: on NVLink GPUs NVIDIA measured (models/cost/kernels.py ``allreduce_table``) the TP all-reduce
is allreduce_latency_s plus the measured growth with message size above the table's fastest call. Evaluated three
ways on this repository's benchmarks (this session, before -> after): the alpha-beta formula alone; the measured
latency alone (4.4-4.9 us floor); 10 us + measured growth. Independent batch-1 TP rows (benchmarks/
throughput_accuracy.py: tenstorrent's Qwen2.5-72B TP2 H100, -6% TPOT at 10 us and -9% with the isolated 4.4 us;
vultr's MiniMax-M2.5 TP4 B200, -15% / -22%) are already too fast with 10 us per call, so the isolated floor is
not what a call costs inside a step (ranks reach it at different times).
"""

from __future__ import annotations

import numpy as np

from sched_reader.models.cost.efficiency import Efficiency
from sched_reader.models.cost.kernels import allreduce_latency, allreduce_table
from sched_reader.models.gpu import GPU

# PCIe Gen4 x16 per direction, used only when the catalog gives no bandwidth at all (10^9 B/s).
_DEFAULT_PCIE_GB_S = 32.0
# AMD Instinct MI300X / MI325X platforms (CDNA3 OAM, 8 GPUs): every GPU has a dedicated x16 xGMI link to each
# of the other 7 (64 GB/s per direction each; the catalog's link_unidir_gb_s, 448, is their sum), with no switch:
# a collective over n GPUs can use only the n - 1 links to its peers, (n - 1) x 64 GB/s per direction
# (https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html: fully connected 8-GPU Infinity Fabric
# mesh, 7 links x 64 GB/s per direction; catalog gpus.yaml notes). NVLink GPUs reach every peer through
# NVSwitch at the full per-GPU bandwidth.
XGMI_MESH_LINKS = {"cdna3": 7}


def link_bandwidth_bytes_s(gpu: GPU, eff: Efficiency, n: int) -> float:
    """Achievable per-direction bandwidth (B/s) between ``n`` GPUs of this type in one node."""
    if gpu.interconnect in ("nvlink", "xgmi") and gpu.link_unidir_gb_s:
        gb = gpu.link_unidir_gb_s
        links = XGMI_MESH_LINKS.get(str(gpu.arch or "").lower()) if gpu.interconnect == "xgmi" else None
        if links and n - 1 < links:
            gb = gb * max(1, n - 1) / links
    else:
        gb = gpu.pcie_unidir_gb_s or _DEFAULT_PCIE_GB_S
    return gb * 1e9 * eff.link_bandwidth


def link_name(gpu: GPU) -> str:
    """``"nvlink"``/``"xgmi"`` when the catalog gives a scale-up link, else ``"pcie"``."""
    if gpu.interconnect in ("nvlink", "xgmi") and gpu.link_unidir_gb_s:
        return gpu.interconnect
    return "pcie"


def allreduce_time(nbytes: float, n: int, gpu: GPU, eff: Efficiency) -> float:
    """Seconds for one all-reduce of ``nbytes`` (per GPU buffer size) over ``n`` GPUs (float or array).

    Where NVIDIA's tables cover the GPU and TP size (``allreduce_source``: vLLM's own all-reduce replayed in
    CUDA graphs): allreduce_latency_s + (measured(bytes) - the table's fastest call), i.e. the measured
    growth with message size (one-shot / two-shot / NCCL, e.g. +23 us from 4 KiB to 7 MiB on 8 H200, 0.5 ms for
    117 MiB where the ring formula gave 0.66 ms) on top of the in-model fixed cost. The table's own floor
    (4.4-4.9 us on H100/H200, 6.6-7.5 us on B200) is an isolated replay in which every rank enters each call at
    the same moment; in a model step the ranks arrive at different times and the call ends when the last one
    does. Batch-1 TP runs (one sequence, no batching noise) put the per-call cost at or above the 10 us kept
    (ALLREDUCE_IN_STEP, module docstring). Elsewhere the ring alpha-beta model: allreduce_latency_s +
    2 (n - 1) / n x bytes / link bandwidth."""
    if n <= 1:
        return 0.0
    table = allreduce_table(gpu.name, link_name(gpu), int(n))
    if table is not None:
        lat, floor = eff.allreduce_latency_s, table[3]
        if type(nbytes) is int or type(nbytes) is float or np.ndim(nbytes) == 0:
            return lat + (allreduce_latency(table, float(nbytes)) - floor)
        flat = [lat + (allreduce_latency(table, float(v)) - floor) for v in np.ravel(nbytes)]
        return np.asarray(flat, dtype=float).reshape(np.shape(nbytes))
    return eff.allreduce_latency_s + 2.0 * (n - 1) / n * nbytes / link_bandwidth_bytes_s(gpu, eff, n)


def allreduce_source(n: int, gpu: GPU, eff: Efficiency) -> str:
    """Where ``allreduce_time`` over ``n`` GPUs of ``gpu`` comes from (for --explain / JSON)."""
    if n <= 1:
        return ""
    table = allreduce_table(gpu.name, link_name(gpu), int(n))
    if table is not None:
        return (f"allreduce_latency_s {eff.allreduce_latency_s * 1e6:.0f} us per call + the measured growth with "
                f"message size above the table's fastest call ({table[3] * 1e6:.1f} us isolated): " + table[2])
    return (f"constants: allreduce_latency_s {eff.allreduce_latency_s * 1e6:.0f} us + ring traffic at link_bandwidth "
            f"{eff.link_bandwidth:.2f} of {link_name(gpu)} bandwidth")


def allgather_time(shard_bytes: float, n: int, gpu: GPU, eff: Efficiency) -> float:
    """Seconds for an all-gather (or reduce-scatter) where each of ``n`` GPUs owns ``shard_bytes``."""
    if n <= 1:
        return 0.0
    return eff.allreduce_latency_s + (n - 1) * shard_bytes / link_bandwidth_bytes_s(gpu, eff, n)


def p2p_time(nbytes: float, gpu: GPU, eff: Efficiency) -> float:
    """Seconds to send ``nbytes`` to the next pipeline stage."""
    return eff.p2p_latency_s + nbytes / link_bandwidth_bytes_s(gpu, eff, 2)
