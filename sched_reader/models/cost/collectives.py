"""Time of the collectives a parallel vLLM forward pass issues (alpha-beta model).

time = latency + traffic / (link bandwidth x efficiency), with traffic per GPU:
  ring all-reduce of B bytes over n GPUs:   2 (n - 1) / n x B      (reduce-scatter + all-gather)
  all-gather / reduce-scatter of n x B:     (n - 1) x B            (each GPU sends/receives n-1 shards)
  point-to-point send of B bytes:           B
Link: NVLink per-direction bandwidth when the GPU has NVLink (``GPU.link_unidir_gb_s``), otherwise
PCIe per-direction bandwidth (``GPU.pcie_unidir_gb_s``). Bandwidths are 10^9 B/s in the catalog. On the
fully connected xGMI mesh of MI300X-class platforms only the links to the n - 1 peers carry the traffic
(``XGMI_MESH_LINKS``).

ALLREDUCE_IN_STEP: NVIDIA's measured vLLM all-reduce (kernels.allreduce_table: CUDA-graph replays of the call
alone, 4.4-4.9 us up to 4 KiB on H100/H200 at TP 2-8, 28 us for 2 MiB and 0.5 ms for 112 MiB at TP8 on H200) was
wired in three ways and judged on this repository's benchmarks (before -> after, with this session's MLA and
routing changes in all three): the measured latency alone: corpus (benchmarks/throughput_accuracy.py) throughput /
TPOT / TTFT 23.1 / 21.7 / 46.2%, silicon TPOT 15.5%; 10 us + the measured growth with size: 23.0 / 20.3 / 45.8%,
silicon 15.8%, issue 13's calibrated median over deployments 9.5 -> 11.0% throughput (over its 10% bar); the ring
formula kept: 22.9 / 19.4 / 43.7%, silicon 15.1%, calibrated median 9.9%. Independent batch-1 TP rows are too fast even at 10 us per call
(tenstorrent's Qwen2.5-72B TP2 H100 -6% TPOT, -9% with the isolated 4.4 us; vultr's MiniMax-M2.5 TP4 B200 -15%
/ -22%): a call inside a step costs more than the isolated, rank-synchronised replay (ranks reach it at different
times). So the step keeps the formula; the measurement is shown beside it in --explain.
"""

from __future__ import annotations

from sched_reader.models.cost.efficiency import Efficiency
from sched_reader.models.cost.kernels import allreduce_table
from sched_reader.models.gpu import GPU

# PCIe Gen4 x16 per direction, used only when the catalog gives no bandwidth at all (10^9 B/s).
_DEFAULT_PCIE_GB_S = 32.0
# AMD Instinct MI300X / MI325X platforms (CDNA3 OAM, 8 GPUs): every GPU has a dedicated x16 xGMI link to each
# of the other 7 (64 GB/s per direction each; the catalog's link_unidir_gb_s, 448, is their sum), with no switch:
# a collective over n GPUs can use only the n - 1 links to its peers, (n - 1) x 64 GB/s per direction
# (https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html: fully connected 8-GPU Infinity Fabric
# mesh, 7 links x 64 GB/s per direction; catalog gpus.yaml notes). NVLink GPUs reach every peer through
# NVSwitch at the full per-GPU bandwidth. MI350X / MI355X (CDNA4) keep the same fully connected 8-GPU mesh of 7 links,
# each 153.6 GB/s bidirectional, 76.8 GB/s per direction (AMD MI355X product page, catalog gpus.yaml notes).
XGMI_MESH_LINKS = {"cdna3": 7, "cdna4": 7}


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
    """Seconds for one ring all-reduce of ``nbytes`` (per GPU buffer size) over ``n`` GPUs (float or array):
    allreduce_latency_s + 2 (n - 1) / n x bytes / link bandwidth. NVIDIA's measured vLLM all-reduce
    (kernels.allreduce_table) is reported beside it (``allreduce_source``) but not used: see ALLREDUCE_IN_STEP."""
    if n <= 1:
        return 0.0
    return eff.allreduce_latency_s + 2.0 * (n - 1) / n * nbytes / link_bandwidth_bytes_s(gpu, eff, n)


def allreduce_source(n: int, gpu: GPU, eff: Efficiency) -> str:
    """Where ``allreduce_time`` over ``n`` GPUs of ``gpu`` comes from (for --explain / JSON), with NVIDIA's
    isolated measurement of the same call where there is one (ALLREDUCE_IN_STEP)."""
    if n <= 1:
        return ""
    text = (f"constants: allreduce_latency_s {eff.allreduce_latency_s * 1e6:.0f} us + ring traffic at link_bandwidth "
            f"{eff.link_bandwidth:.2f} of {link_name(gpu)} bandwidth")
    table = allreduce_table(gpu.name, link_name(gpu), int(n))
    if table is not None:
        text += f" (isolated call measured from {table[3] * 1e6:.1f} us: {table[2]}; not used, see collectives.py)"
    return text


def allgather_time(shard_bytes: float, n: int, gpu: GPU, eff: Efficiency) -> float:
    """Seconds for an all-gather (or reduce-scatter) where each of ``n`` GPUs owns ``shard_bytes``."""
    if n <= 1:
        return 0.0
    return eff.allreduce_latency_s + (n - 1) * shard_bytes / link_bandwidth_bytes_s(gpu, eff, n)


def p2p_time(nbytes: float, gpu: GPU, eff: Efficiency) -> float:
    """Seconds to send ``nbytes`` to the next pipeline stage."""
    return eff.p2p_latency_s + nbytes / link_bandwidth_bytes_s(gpu, eff, 2)
