# python/sparseditto/torch_ops.py: the PyTorch custom operators sparseditto::spmm and sparseditto::spmv (fake, CPU and CUDA implementations, autograd).
"""Custom operators, so that torch.compile traces SparseDitto products without a graph
break and torch.cuda.CUDAGraph can capture them:

    torch.ops.sparseditto.spmm(x, graph_id, transposed)   # A·X, or Aᵀ·X when transposed
    torch.ops.sparseditto.spmv(x, graph_id, transposed)   # A·x through an SpMV kernel

graph_id is SparseGraph.id (custom operators take no Python objects; see
sparseditto.torch_spmm). spmm takes X of shape (cols, K) or (cols,) (K = 1), spmv x of
shape (cols,), float32 (for Aᵀ: rows instead of cols). Both are differentiable in x: the
gradient is the same operator with transposed flipped (a symmetric A serves both
directions with one kernel).

- CUDA: the graph's compiled kernel runs on torch.cuda.current_stream(); the only
  allocation is the output (torch.empty, so a capture takes it from the graph's pool),
  plus a contiguous copy of x when x is not contiguous or misaligned. sd_spmm / sd_spmv
  allocate and synchronise nothing. A kernel missing while the stream captures is an
  error (its compile would break the capture): run once before capture or call
  SparseGraph.prepare.
- CPU: torch.sparse on the graph's matrix (float32), for tracing and testing without a
  GPU and for models that run on the CPU.
- Fake (torch.compile, FakeTensorMode): the output's shape from the graph, with the
  same checks as the real implementations, so tracing reports bad input early.

Importing this module imports torch and registers the operators; sparseditto.torch_spmm
does it at first use.
"""
import torch

from .torch_spmm import graph_from_id

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"sparseditto.torch_ops needs torch >= 2.4 (torch.library.custom_op); "
                      f"this is torch {torch.__version__}")

__all__ = ["spmm", "spmv"]


def _graph(graph_id, what):
    # The schema's int is a SymInt under torch.compile; one call uses one graph.
    if isinstance(graph_id, torch.SymInt):
        graph_id = int(graph_id)
    try:
        return graph_from_id(graph_id)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def _check(what, x, graph_id, transposed):
    """(graph, output shape) once x fits A (or Aᵀ). Shared by the fake and the real
    implementations: tracing refuses what execution would."""
    graph = _graph(graph_id, what)
    name = "x" if what == "SpMV" else "X"
    if x.layout != torch.strided:
        raise TypeError(f"{what}: {name} has layout {x.layout}; expected a dense tensor")
    if x.dtype != torch.float32:
        raise TypeError(f"{what}: {name} has dtype {x.dtype}; the kernels take torch.float32 "
                        "(convert with .float())")
    if x.device.type not in ("cuda", "cpu", "meta"):  # meta: shapes only (the fake)
        raise ValueError(f"{what}: {name} is on {x.device}; the operator runs on CUDA tensors "
                         "(compiled kernels) or CPU tensors (torch.sparse)")
    rows, cols = graph.shape
    if transposed:
        rows, cols = cols, rows
    a = f"{'Aᵀ' if transposed else 'A'} is {rows}x{cols}"
    if what == "SpMV":
        if x.dim() != 1 or x.shape[0] != cols:
            raise ValueError(f"SpMV: x has shape {tuple(x.shape)}; {a}, so x must be ({cols},)")
        return graph, (rows,)
    if x.dim() not in (1, 2) or x.shape[0] != cols:
        raise ValueError(f"SpMM: X has shape {tuple(x.shape)}; {a}, so X must be "
                         f"({cols}, K) or ({cols},)")
    if x.dim() == 1:
        return graph, (rows,)
    if x.shape[1] == 0:
        raise ValueError("SpMM: X has width 0 (K must be at least 1)")
    return graph, (rows, x.shape[1])


def _width(what, x):
    """The kernel's K: None for SpMV, 1 for a vector through SpMM."""
    if what == "SpMV":
        return None
    return 1 if x.dim() == 1 else x.shape[1]


def _run_cuda(what, graph, x, shape, transposed):
    K = _width(what, x)
    dev = x.device.index if x.device.index is not None else torch.cuda.current_device()
    kern = graph.held_kernel(K, dev, transposed)
    if kern is None:
        if torch.cuda.is_current_stream_capturing():
            kind = "SpMV" if K is None else f"SpMM, K = {K}"
            raise RuntimeError(
                f"{what}: SparseGraph {graph.id} has no kernel for "
                f"{'Aᵀ' if transposed else 'A'} ({kind}) on cuda:{dev} yet, and the current "
                "stream is capturing a CUDA graph, which a compile would break: run the model "
                f"once before capture, or call graph.prepare({K}, {dev}) first")
        kern = graph.kernel(K, dev, transposed)
    out = torch.empty(shape, dtype=torch.float32, device=x.device)
    if out.numel() == 0:
        return out
    if x.numel() == 0:  # A has no columns: A·X = 0
        return out.zero_()
    x = x.contiguous()
    if x.data_ptr() % 16 != 0:  # a view into a larger tensor: the kernels need alignment
        x = x.clone()
    if K is None:
        kern(x, out=out)
    else:
        kern(x.view(-1, K), out=out.view(-1, K))
    return out


def _run_cpu(what, graph, x, shape, transposed):
    out = torch.empty(shape, dtype=torch.float32)
    if out.numel() == 0:
        return out
    y = torch.sparse.mm(graph.cpu_matrix(transposed),
                        (x.unsqueeze(1) if x.dim() == 1 else x).contiguous())
    (out.unsqueeze(1) if out.dim() == 1 else out).copy_(y)
    return out


def _define(opname, what):
    """Registers sparseditto::<opname> (one implementation for CUDA and CPU, the fake,
    autograd); returns its overload."""

    def impl(x: torch.Tensor, graph_id: int, transposed: bool) -> torch.Tensor:
        graph, shape = _check(what, x, graph_id, transposed)
        if x.device.type == "cuda":
            return _run_cuda(what, graph, x, shape, transposed)
        if x.device.type == "cpu":
            return _run_cpu(what, graph, x, shape, transposed)
        return x.new_empty(shape)  # meta

    impl.__name__ = opname
    op = torch.library.custom_op(f"sparseditto::{opname}", impl, mutates_args=())

    @op.register_fake
    def impl_fake(x, graph_id, transposed):
        _, shape = _check(what, x, graph_id, transposed)
        return x.new_empty(shape)

    overload = getattr(torch.ops.sparseditto, opname).default

    def setup_context(ctx, inputs, output):
        _, graph_id, transposed = inputs
        ctx.graph_id, ctx.transposed = graph_id, transposed
        # Holds the graph until backward: spmm() on a bare matrix makes a transient one.
        ctx.graph = _graph(graph_id, what)

    def backward(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return None, None, None
        return overload(grad, ctx.graph_id, not ctx.transposed), None, None  # X̄ = Aᵀ·Ȳ

    op.register_autograd(backward, setup_context=setup_context)
    return overload


spmm = _define("spmm", "SpMM")
spmv = _define("spmv", "SpMV")
