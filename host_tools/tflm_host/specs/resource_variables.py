"""VAR_HANDLE, ASSIGN_VARIABLE, READ_VARIABLE (kernels/resource_variables.c)
and CALL_ONCE (kernels/call_once.c)."""

from . import register

for _op in ("VAR_HANDLE", "ASSIGN_VARIABLE", "READ_VARIABLE"):
    register(_op, lambda model, sg, op: 8)  # resource_data_t
register("CALL_ONCE", lambda model, sg, op: 8)  # call_once_data_t
