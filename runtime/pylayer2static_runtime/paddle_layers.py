"""Paddle's own sequence-parallel PyLayers in a static graph: a dispatch at `apply`, and static twins.

`paddle.distributed.fleet.utils.sequence_parallel_utils` (paddle 3.3.1 and 2.6.2, the same
classes) defines `ScatterOp`, `GatherOp`, `AllGatherOp` and `ReduceScatterOp`, PyLayers on a
`[s, b, h]` activation whose bodies are eager-only: `all_gather` fills a `paddle.empty` through
`group.process_group.all_gather(input, output).wait()`, and `reduce_scatter` calls
`dist.stream.reduce_scatter` with the model-parallel group, which static graphs refuse. Built in
a static graph as written (the framework's dy2static PyLayer path, or the runtime's generic
one) they fail: "ValueError: ... must be Tensor, but got pir.Value" at
sequence_parallel_utils.py:68 under 3.3.1's `to_static`.

**The dispatch at `apply`.** `install` replaces, for the whole process (`patch.install`, once,
when the runtime is imported), each class's `apply` on the class itself. The base's `apply` is
a C `classmethod_descriptor` of `core.eager.PyLayer` (3.3.1 and 2.6.2); the replacement
(`_ClassApply`, a descriptor that binds the class it is read from, as a classmethod does) runs,
in dynamic mode, that descriptor bound to the class: the eager call, unchanged. Otherwise a
static graph is being built (AST `to_static`, an `enable_static` program, `jit.save`, SOT's
recording) and the call goes to `builders.build_call`, as the runtime's `apply` entry point
sends a static call, and there to the builder registered here for the class: one `pylayer`
op, `PyLayerOp(PaddleCls, args, kwargs).build(forward=Twin.forward, backward=Twin.backward)`
with the class's twin (`TWINS`, each made by `_twin`).
The replacement is marked like the runtime's entry points (`sot.one_call_in_graph`:
one call of SOT's graph where the release can, 3.3.1; `paddle.jit.not_to_static`), and
`apply.apply(Cls, ...)` (what transpiled code may call) reaches the same builder, its eager
path `cls.apply` being this replacement, which in dynamic mode is the eager call: no loop.

So every caller gets the static op, whoever wrote the call and however it is reached: user code
transpiled or not, and library code importing the classes from paddle (PaddleNLP-style
`ScatterOp.apply(x)`), which the import hook never needs to see. In code dy2static converts, a
class name is loaded as the framework's `StaticPyLayer(cls)` wrapper (3.3.1 always, 2.6.2 under
`to_static`: convert_operators.py `convert_load`), whose own `apply` builds the bodies as
written; `install` has that wrapper's `apply` hand a dispatched class to the class's `apply`.
A subclass of one of these classes inherits the dispatch: one that keeps the class's forward and
backward is built as the class (its twin), one with bodies of its own as any PyLayer.

Why a dispatch rather than transpiling Paddle's module through the import hook: paddle's modules
are never transpiled (the hook refuses `--package paddle...`), and the bodies could not be
transpiled into static code anyway (they read a process group's tensors eagerly); a library
that imported the class before the runtime was imported, or that the hook does not transpile,
still gets the static op, since the class object itself is changed; and eager mode runs
Paddle's own `apply`, untouched. The twins are the runtime's, written once for both releases.

**The static twins** are the classes' bodies written with the public, static-capable API, read
the way the eager helpers read them: the model-parallel group from fleet's hybrid topology
(`fleet.get_hybrid_communicate_group().get_model_parallel_group()`), `group.nranks` and
`group.rank`; scatter is this rank's slice along axis 0 (`paddle.split`), all-gather
`dist.all_gather(parts, x, group=...)` + `paddle.concat(parts, 0)` (the list form; in PIR
programs `pir/collectives.py` builds it, with the group's ring), reduce-scatter the framework's
static reduce-scatter op: in PIR programs `paddle._C_ops.reduce_scatter(x, ring_id, nranks)`
(paddle 3.3.1's `dist.stream.reduce_scatter` builds the legacy op with `LayerHelper` even in a
PIR program: TypeError), in the legacy Program IR `dist.stream.reduce_scatter(out, x)`'s static
form (2.6.2): the adapter of the program being built builds it (`IrAdapter.reduce_scatter`) and
says what group a collective takes (`IrAdapter.collective_group`).
Groups: paddle 2.6.2's (and the legacy IR's) static collectives refuse a group ("Group can not
be used in static graph mode for now") and run on the one ring of the global group, so there
the twins pass None when the model-parallel group is the whole world in rank order, and
otherwise raise a `PyLayerContractError` naming the class and why. A group of one rank (mp_degree
1, where fleet's group has no process group and rank -1, and the eager helpers slice nothing or
fail) makes each body a copy of its input: no collective of one rank is built (the legacy IR's
refuse one, "The value of nranks should be >=2"). Without fleet's hybrid
topology (no `fleet.init`, or one without `hybrid_configs`) the eager classes fail on an
AttributeError or a bare assertion (fleet.py `get_hybrid_communicate_group`); the twins fail with
a `PyLayerContractError` that says so.

The CPU build has no kernel for the static reduce-scatter op ("Unimplemented cpu kernel for
CReduceScatterOp") and gloo's process group no reduce_scatter: `tests/dist/models.py` routes
both (there only) through an all-reduce and a slice.
"""
import functools
import inspect
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import paddle

from . import adapter, builders, patch, sot
from .core.errors import contract_error
from .op import PyLayerOp

_MODULE = "paddle.distributed.fleet.utils.sequence_parallel_utils"


def _paddle_class(name: str) -> type:
    import importlib

    return getattr(importlib.import_module(_MODULE), name)


def _model_parallel_group(name: str) -> Any:
    """fleet's model-parallel group, as the eager helpers read it (sequence_parallel_utils.py
    `scatter`, `all_gather`, `reduce_scatter`), or a contract error naming the class `name`
    without one."""
    from paddle.distributed import fleet

    try:
        hcg = fleet.get_hybrid_communicate_group()
    except (AttributeError, AssertionError):
        # paddle 3.3.1 and 2.6.2 fleet.py: `self._hcg` is set by `fleet.init` (AttributeError before
        # it), and None after a `fleet.init` without a hybrid topology (`assert self._hcg is not None`)
        hcg = None
    if hcg is None:
        raise contract_error(
            _paddle_class(name),
            "fleet's hybrid communicate group is not initialised: Paddle's sequence-parallel PyLayers "
            "read their model-parallel group from it (eagerly too, where they fail with an AttributeError "
            "or an assertion); call fleet.init(is_collective=True, strategy=...) with "
            "strategy.hybrid_configs (mp_degree: the sequence-parallel degree) before applying them",
        )
    return hcg.get_model_parallel_group()


def _ir(name: str, group: Any) -> Tuple[Any, Any]:
    """The adapter of the program being built and the group its static collectives take for
    `group` (`IrAdapter.collective_group`); a contract error naming class `name` where they
    cannot run on it."""
    ir = adapter.adapter_for_program(inside_backward=False)
    try:
        return ir, ir.collective_group(group)
    except ValueError as exc:
        raise contract_error(_paddle_class(name), str(exc)) from None


@paddle.jit.not_to_static
def scatter(name: str, x: Any) -> Any:
    """This rank's slice of `x` along axis 0 (sequence_parallel_utils.py `scatter`)."""
    group = _model_parallel_group(name)
    if group.nranks == 1:
        return paddle.assign(x)
    return paddle.split(x, group.nranks, axis=0)[group.rank]


@paddle.jit.not_to_static
def all_gather(name: str, x: Any) -> Any:
    """Every rank's `x`, concatenated along axis 0 (sequence_parallel_utils.py `all_gather`)."""
    import paddle.distributed as dist

    group = _model_parallel_group(name)
    if group.nranks == 1:
        return paddle.assign(x)
    parts: List[Any] = []
    _, static_group = _ir(name, group)
    dist.all_gather(parts, x, group=static_group)
    return paddle.concat(parts, axis=0)


@paddle.jit.not_to_static
def reduce_scatter(name: str, x: Any) -> Any:
    """This rank's slice along axis 0 of the sum of every rank's `x`
    (sequence_parallel_utils.py `reduce_scatter`)."""
    group = _model_parallel_group(name)
    if group.nranks == 1:
        return paddle.assign(x)
    ir, _ = _ir(name, group)
    return ir.reduce_scatter(x, group)


def _twin(name: str, forward_body: Callable[[str, Any], Any], backward_body: Callable[[str, Any], Any]) -> type:
    """The static twin of class `name`: forward and backward built from the public API."""

    def forward(ctx: Any, input: Any) -> Any:
        return forward_body(name, input)

    def backward(ctx: Any, grad: Any) -> Any:
        return backward_body(name, grad)

    return type(f"{name}Twin", (), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


TWINS: Dict[str, type] = {
    # [s, b, h] -> this rank's [s/n, b, h]; backward all-gathers
    "ScatterOp": _twin("ScatterOp", scatter, all_gather),
    # [s/n, b, h] -> [s, b, h] on every rank; backward keeps this rank's slice
    "GatherOp": _twin("GatherOp", all_gather, scatter),
    # all-gather before a column-parallel linear; backward reduce-scatters
    "AllGatherOp": _twin("AllGatherOp", all_gather, reduce_scatter),
    # reduce-scatter after a row-parallel linear; backward all-gathers
    "ReduceScatterOp": _twin("ReduceScatterOp", reduce_scatter, all_gather),
}


def _twin_builder(cls: type, twin: type) -> Callable[..., Any]:
    """The builder of `cls`: the call as `builders.build_call` marked it, forward and backward
    the twin's."""

    def build(*args: Any, **kwargs: Any) -> Any:
        return PyLayerOp(cls, args, kwargs).build(forward=twin.forward, backward=twin.backward)

    return paddle.jit.not_to_static(build)


def _eager_apply() -> Any:
    """`PyLayer.apply` as the base class holds it: `core.eager.PyLayer`'s classmethod
    descriptor (paddle 3.3.1 and 2.6.2), bound to a class by `__get__(None, cls)`."""
    return inspect.getattr_static(paddle.autograd.PyLayer, "apply")


def _uses_twin(cls: type, paddle_cls: type) -> bool:
    """Whether `cls` (`paddle_cls` or a subclass) runs `paddle_cls`'s own bodies."""
    return cls.forward is paddle_cls.forward and cls.backward is paddle_cls.backward


class _ClassApply:
    """A class's `apply` that dispatches (the module docstring): read from a class (or an
    instance), it is `function` bound to that class, as a classmethod is."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        return types.MethodType(self.function, owner if owner is not None else type(instance))


def _dispatching(paddle_cls: type) -> Callable[[Any], Any]:
    """`make` for `patch.install`: the dispatching `apply` of `paddle_cls`."""
    eager = _eager_apply()

    @sot.one_call_in_graph(lambda args: args[0] if args else None)
    @paddle.jit.not_to_static
    @functools.wraps(paddle.autograd.PyLayer.apply)
    def apply(cls: type, *args: Any, **kwargs: Any) -> Any:
        if paddle.in_dynamic_mode():
            return sot.run_eagerly(eager.__get__(None, cls), *args, **kwargs)
        # a subclass keeping the class's bodies is built as the class; one with its own, as any PyLayer
        return builders.build_call(paddle_cls if _uses_twin(cls, paddle_cls) else cls, args, kwargs)

    apply.__qualname__ = f"{paddle_cls.__qualname__}.apply"
    apply.__module__ = __name__

    def make(current: Any) -> Any:
        return _ClassApply(apply)

    return make


def dispatched(cls: Any) -> bool:
    """Whether `cls` is a class whose `apply` this module dispatches."""
    return isinstance(cls, type) and isinstance(inspect.getattr_static(cls, "apply", None), _ClassApply)


def _static_pylayer_apply(apply: Callable[..., Any]) -> Callable[..., Any]:
    """`StaticPyLayer.apply` (dy2static's wrapper of a class name in converted code), handing a
    dispatched class's call to the class's own `apply`."""

    @functools.wraps(apply)
    def wrapper_apply(self: Any, *args: Any, **kwargs: Any) -> Any:
        cls = self.__dict__.get("dyfunc_self")
        if dispatched(cls):
            return cls.apply(*args, **kwargs)
        return apply(self, *args, **kwargs)

    return wrapper_apply


_PATCHED = (
    ("paddle_layers.ScatterOp.apply", "ScatterOp"),
    ("paddle_layers.GatherOp.apply", "GatherOp"),
    ("paddle_layers.AllGatherOp.apply", "AllGatherOp"),
    ("paddle_layers.ReduceScatterOp.apply", "ReduceScatterOp"),
)


def install() -> None:
    """Dispatch the four classes' `apply`, register their twins' builders, and have dy2static's
    `StaticPyLayer` wrapper hand their calls to them (once per process)."""
    from paddle.jit.dy2static.py_layer import StaticPyLayer

    for key, name in _PATCHED:
        paddle_cls = _paddle_class(name)
        builders.register(paddle_cls, _twin_builder(paddle_cls, TWINS[name]))
        patch.install(key, paddle_cls, "apply", _dispatching(paddle_cls))
    patch.install("paddle_layers.StaticPyLayer.apply", StaticPyLayer, "apply", _static_pylayer_apply)
