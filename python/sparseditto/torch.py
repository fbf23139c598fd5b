# python/sparseditto/torch.py: `sparseditto.torch`, the PyTorch face of the package (re-exports torch_spmm).
"""sparseditto.torch: SpMM and SpMV as torch custom operators, and the GCN aggregation module.

    from sparseditto.torch import SparseGraph, SpMM, GCNAggregation, spmv
    graph = SparseGraph(A)          # A: CSRMatrix, path, scipy.sparse, torch sparse CSR/COO
    Y = SpMM.apply(graph, X)        # differentiable in X; backward runs Aᵀ (or A if symmetric)
    y = spmv(graph, x)              # one vector through an SpMV kernel
    graph.prepare(K, "cuda")        # compile ahead (before capturing a CUDA graph)
    model = torch.compile(model, fullgraph=True)   # no graph break: sparseditto::spmm

The implementation lives in sparseditto.torch_spmm (graphs, modules) and
sparseditto.torch_ops (the operators); this module only re-exports it (torch itself is
imported at first use of SpMM, GCNAggregation, spmm or spmv, so importing this module
never fails for want of torch).
"""
from . import torch_spmm as _impl
from .torch_spmm import (SparseGraph, clear_kernel_table, gcn_normalize, graph_from_id, spmm,
                         spmv)

__all__ = ["SparseGraph", "SpMM", "GCNAggregation", "gcn_normalize", "spmm", "spmv",
           "clear_kernel_table", "graph_from_id"]


def __getattr__(name):  # PEP 562: SpMM and GCNAggregation are built once torch is imported
    if name in ("SpMM", "GCNAggregation"):
        value = globals()[name] = getattr(_impl, name)  # later accesses skip this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
