# python/sparseditto/__init__.py: the sparseditto package (ctypes binding of libsparseditto.so).
"""SparseDitto from Python: specialised sparse GPU kernels for one matrix, one operator
and one GPU.

    import sparseditto as sd
    A = sd.CSRMatrix.read("A.mtx")             # or from_scipy / from_torch / from_coo
    sd.analyze(A)["shape_class"]               # the 36 features and the shape class (CPU)
    sd.rank(A, "spmm", K=32), sd.plan(A, "spmm", K=32)   # the CLI's rank / plan as dicts
    k = sd.compile(A, "spmv")                  # needs a GPU (SparseDittoError NO_DEVICE otherwise)
    y = k(x)                                   # x: CUDA float32 torch tensor of shape (cols,)

Why ctypes over the shared library (and not a C extension, Cython, pybind11 or cffi):
  - no compiler is needed when the package is imported, and nothing is compiled for each
    Python version: the one libsparseditto.so built by pip (scikit-build-core driving the
    project's CMakeLists.txt) serves every CPython, so the wheel is tagged py3-none;
  - the C API is small (about thirty functions and six structs) and a stable contract that
    changes only by addition, so hand-written declarations (_lib.py) stay short and right;
  - ctypes ships with every CPython, so the binding adds no build or run dependency
    beyond numpy;
  - the costly work happens inside the library (analysis, compilation, kernels run
    asynchronously on the GPU), so ctypes' per-call overhead (microseconds) is noise.
The binding is thin: argument conversion and error mapping only.

PyTorch: sparseditto.torch (SpMM / SpMV as torch custom operators for torch.compile and
CUDA graphs, GCNAggregation); PyG: sparseditto.pyg (drop-in GCNConv / SAGEConv, patch(model));
CuPy: sparseditto.cupy_linalg (a LinearOperator for cupyx's cg / gmres); several processes:
sparseditto.distributed (torch.distributed); synthetic graphs and GCN normalisation:
sparseditto.graphs (numpy, or torch on a GPU). None is imported here: each imports its
framework.

Errors: every failed C call raises SparseDittoError(status, message) with the library's
sd_last_error() text; wrong Python types or shapes raise TypeError or ValueError.
"""
from ._lib import (Op, ShapeClass, SparseDittoError, Status, last_error, library_path,
                   status_string, version)
from .api import (Context, DeviceCSR, Kernel, analyze, compile, default_context,
                  feature_descriptions, feature_names, plan, rank)
from .matrix import CSRMatrix, as_matrix



def __getattr__(name):
    """__version__: the installed distribution's (pip took it from CMakeLists.txt), else the
    loaded library's (a source tree on PYTHONPATH has no distribution metadata)."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version as dist_version
        try:
            return dist_version("sparseditto")
        except PackageNotFoundError:
            return version()
    raise AttributeError("module 'sparseditto' has no attribute %r" % name)

__all__ = [
    "Op", "ShapeClass", "SparseDittoError", "Status", "last_error", "library_path",
    "status_string", "version", "Context", "DeviceCSR", "Kernel", "analyze", "compile",
    "default_context", "feature_descriptions", "feature_names", "CSRMatrix", "as_matrix",
    "read", "rank", "plan",
]


def read(path):
    """CSRMatrix.read(path): .mtx, .mtx.gz or .sdm."""
    return CSRMatrix.read(path)
