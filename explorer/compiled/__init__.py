"""The DSL compiled for the searches: an expression as Python source (:mod:`.pycompile`,
one function per action instance, for the explicit engine and everything that steps a
state at a time) and as numpy over columns of states (:mod:`.npeval`, for the vector
engine and the graph checks).

Both read the same :class:`~osf_check.models.expr.Expr` trees; neither knows a search.
"""

from .npeval import np_eval, pack_columns, packed_array, unpack_columns
from .pycompile import (Step, compile_pack, compile_pred, compile_steps, compile_trans,
                        compile_unpack, py_source)

__all__ = ["np_eval", "pack_columns", "packed_array", "unpack_columns", "Step",
           "compile_pack", "compile_pred", "compile_steps", "compile_trans",
           "compile_unpack", "py_source"]
