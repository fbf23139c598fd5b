# python/sparseditto/torch.py: `sparseditto.torch`, the PyTorch face of the package (re-exports torch_spmm).
"""sparseditto.torch: SpMM as a torch autograd function and the GCN aggregation module.

    from sparseditto.torch import SparseGraph, SpMM, GCNAggregation
    graph = SparseGraph(A)          # A: CSRMatrix, path, scipy.sparse, torch sparse CSR/COO
    Y = SpMM.apply(graph, X)        # differentiable in X; backward runs Aᵀ (or A if symmetric)

The implementation lives in sparseditto.torch_spmm; this module only re-exports it (torch
itself is imported at first use of SpMM or GCNAggregation, so importing this module never
fails for want of torch).
"""
from . import torch_spmm as _impl
from .torch_spmm import SparseGraph, clear_kernel_table, gcn_normalize, spmm

__all__ = ["SparseGraph", "SpMM", "GCNAggregation", "gcn_normalize", "spmm",
           "clear_kernel_table"]


def __getattr__(name):  # PEP 562: SpMM and GCNAggregation are built once torch is imported
    if name in ("SpMM", "GCNAggregation"):
        return getattr(_impl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
