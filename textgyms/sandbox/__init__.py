"""The only place in textgyms that runs agent code: a pre-warmed fork server whose children are
confined by the kernel (rlimits, Landlock, seccomp, no-new-privs, dropped privileges), or by
bubblewrap when Landlock or seccomp is unavailable (:mod:`textgyms.sandbox.bwrap`).

Use :func:`shared` to get this process's sandbox pool, then :meth:`Sandbox.run` (a script) or
:meth:`Sandbox.call` (a function on a list of inputs). ``docs/security.md`` has the threat model.
"""

from textgyms.sandbox.client import (
    CallResult,
    Execution,
    Sandbox,
    SandboxPool,
    cancel_scope,
    release,
    set_pool_size,
    shared,
)
from textgyms.sandbox.protocol import values_equal

__all__ = [
    "Sandbox",
    "SandboxPool",
    "Execution",
    "CallResult",
    "shared",
    "release",
    "cancel_scope",
    "set_pool_size",
    "values_equal",
]
