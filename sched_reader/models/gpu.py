"""GPU specification (one catalog entry). Units are in the field names."""

from pydantic import ConfigDict

from sched_reader.data_model import DataModel


class GPU(DataModel):
    """An accelerator SKU from ``models/data/gpus.yaml``.

    ``memory_bytes`` is what the driver reports as total device memory (nvidia-smi MiB x 2^20);
    ``cuda_total_bytes`` is what ``torch.cuda.mem_get_info()`` reports as total, which vLLM logs as
    ``total_memory`` (smaller than the nvidia-smi figure by the driver's reservation); when no real
    log gives it, it is estimated and ``cuda_total_inferred`` is True.
    Throughputs are dense peaks: ``tflops[dtype]`` in 10^12 FLOP/s, ``hbm_bandwidth_tb_s`` in 10^12 B/s.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    vendor: str
    name: str
    arch: str
    aliases: list[str] = []
    memory_bytes: int
    cuda_total_bytes: int
    cuda_total_inferred: bool = True
    hbm_bandwidth_tb_s: float
    tflops: dict[str, float | None]       # keys: bf16, fp16, fp8, int8, fp4, tf32, fp32
    interconnect: str                     # "nvlink" | "pcie" | "xgmi" | "none"
    link_unidir_gb_s: float | None = None  # scale-up bandwidth per GPU per direction, 10^9 B/s
    pcie_unidir_gb_s: float | None = None
    sm_count: int | None = None
    compute_capability: str | None = None  # e.g. "9.0"
    source_url: str
    # optional catalog detail (added by the GPU catalog; absent for hand-built GPUs)
    form_factor: str | None = None        # "SXM5", "PCIe", "OAM", ...
    memory_type: str | None = None        # "HBM3", "GDDR6X", ...
    tdp_w: float | None = None            # max board/module power, W
    smi_names: list[str] = []             # names as nvidia-smi / torch / k8s GPU feature discovery print them
    cuda_total_source: str | None = None  # log URL (measured) or how the estimate was made
    tflops_estimated: bool = False        # True when tflops are third-party estimates, not vendor figures
    notes: str | None = None

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / 2**30

    @property
    def cuda_total_gib(self) -> float:
        return self.cuda_total_bytes / 2**30
