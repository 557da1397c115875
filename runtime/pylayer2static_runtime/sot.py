"""How the bytecode translator (SOT) treats the runtime's entry points.

SOT simulates the user's function and inlines the Python functions it calls; what it cannot
simulate breaks the graph, and that call runs eagerly between two subgraphs. The framework's
SOT has no PyLayer support, so left to itself it breaks the graph at every PyLayer call.

**Recorded as one call** where the release can (`paddle.jit.marker.unified`, paddle 3.3.1):
`apply` and `applier`'s wrappers are marked unified, so SOT neither simulates nor breaks at
them: it records each call as one call of its graph, the tensors as symbolic inputs, like a
paddle API (3.3.1 jit/sot/opcode_translator/executor/variables/callable.py
`PaddleApiVariable`). SOT runs a recorded call twice, neither time in dynamic mode: once in a
scratch program to learn its outputs' shapes ("infer meta", 3.3.1 jit/sot/infer_meta.py
`VariableCreator.infer_meta`) and once when it compiles the graph; both times `apply` builds
the `pylayer` op, as under AST to_static. PyLayer calls no longer split SOT's graph: a model
that breaks it nowhere else is one subgraph. In dynamic mode `apply` is still the eager
`cls.apply`.

The runtime's `recompute` and `recompute_sequential` (recompute.py) are recorded the same way
(`built_in_graph`), or SOT would simulate Paddle's eager recompute behind them (the saving lost,
or a graph break). Their build reads the function's parameters as AST's does, program parameters
of dy2static's parameter recorder, so SOT infers their meta under dy2static's graph tracing
(`graph_tracing_guard`, as it does for a function dy2static converted; it compiles its graph
under it anyway): a parameter read there is converted, and its record dropped with the scratch
program's. Unlike a user's PyLayer (below), the op's inputs are those parameters themselves, so
the re-run and `paddle.grad` in backward reach the values autodiff gives gradients to; a build
that raises (a function holding a random op) is a break request, the call then eager.

A call that cannot be built soundly inside SOT's graph is kept out of it: while SOT infers its
meta, the runtime raises SOT's own break request (3.3.1 jit/sot/utils/exceptions.py
`BreakGraphError`, which `FunctionGraph.call_paddle_api` passes on to the break-graph handling
of the calling opcode), so SOT breaks the graph at that call and runs it eagerly, as 2.6.2
does every PyLayer call. Its reason, in SOT's break-reason report, starts "pylayer2static:".
The runtime does so when
- forward reads an eager tensor that is no parameter directly, not through its arguments (a
  layer's buffer, a tensor a closure holds): SOT makes the tensors it traces inputs of its
  graph (`pd_op.data`), while a tensor read inside the call becomes a program value of its own
  (dy2static's parameter recorder), so one tensor would be two values in one program, and a
  backward taking `paddle.grad` over the one it was given would find no path to what forward
  computed from the other;
- building it raises (a user's error in forward, a contract violation): eagerly, the call then
  raises the user's own exception from the user's own line, as it did before;
- forward (or a PyLayer applied inside it) writes Python state (`core/writes.py`: a counter on
  its class, a list of logged calls, a module's dict, an object passed to `apply`): SOT runs a
  recorded call while it infers
  its meta and again as it compiles its graph, and reuses the meta of a call alike without
  running it, so the effect would happen twice, or not at all, per call. Eagerly it happens
  once, in call order, as in eager (`check_repeatable`);
- forward reads Python state that may change (`core/purity.py` cannot list what it reads: a
  module's dict, a class's attribute, a layer) while SOT holds writes of the model's own code it
  has not made yet (its side-effect record, 3.3.1 opcode_translator/executor/side_effects.py,
  applied only when its graph has run): the body would read the old value. Such a call is
  never served from SOT's cache of inferred metas (3.3.1 infer_meta.py `InferMetaCache`), so the
  check is made at every call (`_uncached_meta`).

A parameter forward reads directly (a recompute PyLayer re-running a layer's method or a Layer
passed in, its parameters passed too, as `*args`) is no reason to keep the call out. SOT makes
each parameter it traces an input of its graph, its variable named by a symbol; the runtime files
that symbol and parameter in the graph's `ParametersHolder` (3.3.1 symbolic/statement_ir.py,
which SOT itself fills only in its parameters' persistent mode: `_parameters_held`). As SOT
compiles the graph (`_compiled_with_parameters`), each argument of a recorded call that is the
graph's input for a parameter is given as the program's parameter instead
(`_as_program_parameters`): the value forward's direct read gives, and the re-run in backward
(which reads the program's parameter by name: pir/adapter.py `_traced_parameters`), so the op
takes, re-runs on and `paddle.grad` differentiates over one value, as under AST. Where the
model's own code reads that parameter outside the call too (a tied weight), SOT's input and the
program's parameter are two values of one tensor's data, whose gradients the eager parameter
adds up. While SOT infers the call's meta the values are a scratch program's and the parameter
read there is one more: only the outputs' shapes are asked of that build.

SOT infers a meta under a unique-name generator with a prefix of its own, which made the names
dy2static gives what it adds to converted code miss their prefix test: a body with a `for` inside
an `if` (PaddleFormers' `FusedHeadAndCrossEntropy.backward`), or a function it calls, failed to
compile (SyntaxError, "no binding for nonlocal '___SOT_INFER_META_INNER_VAR__for_loop_iter_
iterator_1'"), and the call broke the graph. A call is built with a prefix-free generator
(`convert.plain_names`), so its bodies and every function they call convert as under AST.

SOT guards the values a recorded call, or a break at it, depends on, and 3.3.1 guards a bound
method and a `functools.partial` by their repr (`VariableBase.make_stringified_guard`, used by
`MethodVariable` and `PartialVariable`): `x == <bound method ...>`, a SyntaxError when SOT
compiles its guards, after which SOT gives up the whole function and runs it eagerly. A PyLayer
call taking one (recompute PyLayers take `self._run`) would never be recorded, nor broken at
cleanly, so with the marker the runtime gives both kinds the guards SOT gives a function and a
Layer (`_install_guards`).

**A clean break** where the release cannot (2.6.2 has no marker; a release with a marker but
without one of the SOT internals used here gets `paddle.jit.marker.force_dynamic`): SOT breaks
the graph at each PyLayer call, and
- the eager call runs with SOT's frame evaluation off (`run_eagerly`), so the user's forward
  runs natively inside `cls.apply`, as in eager mode; 2.6.2's SOT otherwise translates that
  frame too and fails on e.g. a `for` over `*args` (it does so for unconverted code as well);
- the runtime's files are in SOT's skip list (paddle 3.3.1 and 2.6.2
  `paddle/jit/sot/opcode_translator/skip_files.py`), so the eagerly run call is not
  translated again as a new frame. Without this, 2.6.2 translates `apply` itself and
  replays a cached resume function of it with another call's keyword arguments.
Both hold on 3.3.1 too, for the calls kept out of the graph and for the functions SOT leaves
to CPython: on Python 3.11 its eval-frame hook does not translate a function holding a `with`
block (a code object with an exception table, paddle/fluid/pybind/sot/eval_frame.c), which
then runs natively, its PyLayer calls eagerly.
"""
import functools
import os
import types
from typing import Any, Callable, Dict, List, Tuple

import paddle

from . import dy2static, framework, patch
from .convert import plain_names
from .core import purity, scope, structure, writes

BREAK_PREFIX = "pylayer2static: "


def run_eagerly(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` with SOT's frame evaluation switched off meanwhile
    (as paddle 3.3.1 and 2.6.2 `paddle.jit.sot.utils.no_eval_frame` do)."""
    previous = paddle.framework.core.set_eval_frame(None)
    try:
        return fn(*args, **kwargs)
    finally:
        paddle.framework.core.set_eval_frame(previous)


def skip_runtime_files() -> None:
    """Have SOT run the runtime's frames natively, like the framework's own files."""
    from paddle.jit.sot.opcode_translator import skip_files

    skip_files.skip_file_names.add(os.path.dirname(os.path.abspath(__file__)) + os.sep)
    skip_files.setup_skip_files()


def _in_sot_infer_meta() -> bool:
    """Whether SOT is running a recorded call to learn its outputs' shapes: it does so in
    static mode under `program_guard(VariableCreator().main_program, ...)` (paddle 3.3.1
    jit/sot/infer_meta.py `VariableCreator.infer_meta`; VariableCreator is a singleton)."""
    if paddle.in_dynamic_mode():
        return False
    from paddle.jit.sot.infer_meta import VariableCreator

    return paddle.static.default_main_program() is VariableCreator().main_program


def break_request(reason: str) -> Exception:
    """SOT's request to break the graph at the call being recorded (paddle 3.3.1
    jit/sot/utils/exceptions.py: `BreakGraphError` takes a `BreakGraphReasonBase`, and files
    it with SOT's break-reason collector)."""
    from paddle.jit.sot.utils.exceptions import BreakGraphError, DygraphInconsistentWithStaticBreak

    return BreakGraphError(DygraphInconsistentWithStaticBreak(BREAK_PREFIX + reason))


def _break_error() -> type:
    from paddle.jit.sot.utils.exceptions import BreakGraphError

    return BreakGraphError


def _pending_side_effects() -> bool:
    """Whether SOT, simulating the user's code, holds writes to Python objects it has not made
    yet (3.3.1 opcode_translator/executor/side_effects.py `SideEffects`: the containers and
    objects it mutated through their proxies; each executor on its call stack has its graph's;
    `framework.sot_unified_marker` checked they exist). An object the simulated code made itself
    (its variable's tracker a `DummyTracker`: a list built there) is no state a body can read.
    Unknown for an executor: True."""
    from paddle.jit.sot.opcode_translator.executor.opcode_executor import OpcodeExecutorBase
    from paddle.jit.sot.opcode_translator.executor.tracker import DummyTracker

    for executor in OpcodeExecutorBase.call_stack:
        effects = getattr(getattr(executor, "_graph", None), "side_effects", None)
        if effects is None:
            return True
        # (its `mutable_variables` are tensors' metas, no Python state)
        if any(not isinstance(variable.tracker, DummyTracker) for variable in effects.proxy_variables):
            return True
    return False


def _reads_changing_state(cls: type) -> bool:
    """Whether forward reads Python state that may change between calls (what `purity.reads`
    cannot list: it is refused from replay for the same reason)."""
    return purity.reads(cls.forward) is None


def check_repeatable(cls: type, objects: Tuple[str, ...]) -> None:
    """While SOT infers a call's meta: SOT's break request when building the call inside its
    graph would not give eager's Python state (the module docstring says when). `objects`:
    forward's parameters bound to Python objects of the caller's (`writes.first_write`)."""
    write = writes.first_write(cls.forward, objects)
    if write is not None:
        raise break_request(
            f"forward of {cls.__qualname__} writes Python state ({write}); SOT runs a call it "
            "records more than once while it builds its graph, or not at all: the call runs eagerly, "
            "its effects once per call, as in eager"
        )
    if _reads_changing_state(cls) and _pending_side_effects():
        raise break_request(
            f"forward of {cls.__qualname__} reads Python state that may change, and SOT holds "
            "writes of the model's code it has not made yet: the call runs eagerly, after them, "
            "as in eager"
        )


def _uncached_meta(key_fn: Callable[..., Any]) -> Callable[..., Any]:
    """`InferMetaCache.key_fn`, giving a call of the runtime's entry points whose forward reads
    changing state a key that is never served from the cache (unhashable: SOT's `Cache` then
    infers the meta again), so `check_repeatable` runs at that call; and so a call of
    `built_in_graph`'s, whose build may be refused (a break) by state SOT does not guard."""

    @functools.wraps(key_fn)
    def key(self: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(func, _BUILT_IN_GRAPH, False):
            return [func]
        layer_of = getattr(func, _LAYER_OF, None)
        cls = layer_of(args) if layer_of is not None else None
        if isinstance(cls, type) and issubclass(cls, paddle.autograd.PyLayer) and _reads_changing_state(cls):
            return [func]
        return key_fn(self, func, *args, **kwargs)

    return key


def _build_for_sot(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` while SOT infers the call's meta, or SOT's break request when the
    call cannot be one call of its graph (the module docstring says when, and why)."""
    recorder = framework.parameter_recorder()._global_parameter_recorder
    convert = recorder.get
    read: List[str] = []

    def get(program: Any, tensor: Any) -> Any:
        if not isinstance(tensor, paddle.base.framework.EagerParamBase):
            read.append(tensor.name)
        return convert(program, tensor)

    try:
        # A PyLayer applied inside the call is part of it, not a call of SOT's graph.
        # SOT's unique-name prefix makes dy2static's names miss (convert.py): the bodies and
        # every function they call (converted by dy2static's `convert_call`) are converted here.
        with scope.entered(sot_recording=True), patch.swapped("sot.parameter_recorder.get", recorder, "get", get), \
                plain_names():
            out = fn(*args, **kwargs)
    except _break_error():
        raise
    except Exception as exc:  # noqa: BLE001 - turned into a break: eager raises it again
        raise break_request(
            f"building the call raised {type(exc).__name__}: {exc}; the call runs eagerly"
        ) from exc
    if read:
        raise break_request(
            f"forward reads {', '.join(sorted(set(read)))} directly, not through its arguments; "
            "in SOT's graph that tensor would be two values (SOT's input and one of the "
            "call's own): the call runs eagerly"
        )
    return out


def _method_guard(self: Any) -> List[Any]:
    """The guard of a bound method: its type, its instance by id (as SOT guards a Layer,
    3.3.1 variables/callable.py `LayerVariable.make_stringified_guard`, without keeping it
    alive) and its function by identity."""
    from paddle.jit.sot.opcode_translator.executor.guard import StringifiedExpression, union_free_vars

    tracer = self.tracker.trace_value_from_frame()
    method = self.get_py_value()
    func = f"__p2s_method_func_{self.id}"
    return [
        StringifiedExpression(
            f"id(type({{0}})) == {id(types.MethodType)} and id({{0}}.__self__) == {id(method.__self__)}"
            f" and {{0}}.__func__ is {func}",
            [tracer],
            union_free_vars(tracer.free_vars, {func: method.__func__}),
        )
    ]


def _delegating(guard: Callable[..., Any]) -> Callable[..., Any]:
    """`guard` behind a function of the runtime's own (the patch's mark goes on it, not on
    a function of the framework's that other classes use too)."""

    @functools.wraps(guard)
    def delegate(self: Any) -> Any:
        return guard(self)

    return delegate


def _install_guards() -> None:
    """Guards SOT can compile for a bound method and a `functools.partial` (the module
    docstring says why): the method's (above); the partial's, SOT's own guard of an object
    (3.3.1 opcode_translator/executor/guard.py `object_equal_stringified_guard`, as for a
    function: equal to the partial the graph was built with, which it keeps)."""
    from paddle.jit.sot.opcode_translator.executor.guard import check_guard, object_equal_stringified_guard
    from paddle.jit.sot.opcode_translator.executor.variables.callable import MethodVariable, PartialVariable

    patch.install("sot.MethodVariable.guard", MethodVariable, "make_stringified_guard",
                  lambda guard: check_guard(_method_guard))
    patch.install("sot.PartialVariable.guard", PartialVariable, "make_stringified_guard",
                  lambda guard: _delegating(object_equal_stringified_guard))


_LAYER_OF = "_p2s_layer_of"
_BUILT_IN_GRAPH = "_p2s_built_in_graph"


def one_call_in_graph(layer_of: Callable[[Tuple[Any, ...]], Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark an entry point so SOT records each call of it as one call in its graph where the
    release can, and keeps unsound ones out; elsewhere SOT breaks the graph at it.
    `layer_of`: the PyLayer class (or what stands for it) a call's positional arguments apply."""

    def marked(fn: Callable[..., Any]) -> Callable[..., Any]:
        recorded = _one_call_in_graph(fn)
        setattr(recorded, _LAYER_OF, layer_of)
        return recorded

    return marked


def _one_call_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    unified = framework.sot_unified_marker()
    if unified is None:
        force_dynamic = framework.sot_force_dynamic()
        if force_dynamic is not None:
            force_dynamic(fn)
        return fn

    @functools.wraps(fn)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        current = scope.current()
        if current.sot_graph_parameters is not None and not current.sot_recording:
            args, kwargs = _as_program_parameters(current.sot_graph_parameters, args, kwargs)
        if current.sot_recording or not _in_sot_infer_meta():
            return fn(*args, **kwargs)
        return _build_for_sot(fn, args, kwargs)

    # SOT names a recorded call by its module (paddle 3.3.1 jit/sot/utils/utils.py
    # `get_api_fullname`), which fails on None: `functools.wraps(cls.apply)` copies the
    # module of a builtin method, None, onto `applier`'s wrapper.
    recorded.__module__ = fn.__module__ or __package__
    # For SOT and for AST conversion (as `paddle.jit.not_to_static`, which `unified` replaces).
    unified(recorded)
    return recorded


def _as_program_parameters(graph_parameters: Any, args: Tuple[Any, ...],
                           kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """A recorded call's arguments as SOT compiles its graph, each input of the graph that
    stands for a parameter (`graph_parameters`: SOT's `ParametersHolder`, symbol to parameter,
    `_parameters_held`) replaced by the program's parameter: the value the call's forward and
    its re-run in backward read when they read that parameter directly (the module docstring
    says why)."""
    recorder = framework.parameter_recorder()._global_parameter_recorder
    program = paddle.static.default_main_program()

    def program_parameter(value: Any) -> Any:
        op = value.get_defining_op() if isinstance(value, paddle.pir.Value) else None
        if op is None or op.name() != "pd_op.data":
            return value
        parameter = graph_parameters._params.get(op.attrs()["name"])
        return value if parameter is None else recorder.get(program, parameter)

    return structure.map_leaves(program_parameter, (args, kwargs))


def _parameters_held(from_value: Callable[..., Any]) -> Callable[..., Any]:
    """`VariableFactory.from_value`, also filing each parameter SOT makes a variable of in its
    graph's `ParametersHolder` by its symbol (paddle 3.3.1 variables/basic.py
    `ParameterVariable.from_value` files it there only in the parameters' persistent mode, where
    they are no inputs of the graph; the holder is weak and read by SOT in that mode only)."""
    from paddle.jit.sot.opcode_translator.executor.variables.basic import ParameterVariable

    @functools.wraps(from_value)
    def made(value: Any, graph: Any, tracker: Any) -> Any:
        variable = from_value(value, graph, tracker)
        if isinstance(variable, ParameterVariable) and isinstance(value, paddle.base.framework.EagerParamBase):
            graph.parameters_holder.set(variable.get_symbol().name, value)
        return variable

    return made


def _compiled_with_parameters(compile_sir: Callable[..., Any]) -> Callable[..., Any]:
    """`compile_sir`, its graph function built with the graph's parameters in the build scope
    (`sot_graph_parameters`), for `_as_program_parameters`."""

    @functools.wraps(compile_sir)
    def compiled(builder: Any, name: str, parameters_holder: Any) -> Any:
        run = compile_sir(builder, name, parameters_holder)

        @paddle.jit.not_to_static
        @functools.wraps(run)
        def graph_function(args: Any) -> Any:
            with scope.entered(sot_graph_parameters=parameters_holder):
                return run(args)

        return graph_function

    return compiled


def _cell_value(cell: Any) -> Any:
    """The value a closure cell holds (an empty cell: itself, which stays as it is)."""
    try:
        return cell.cell_contents
    except ValueError:
        return cell


def _python_value(item: Any) -> Any:
    """The Python value of SOT's variable `item` (through the cell variables holding it), or
    `item` itself when it is none."""
    from paddle.jit.sot.opcode_translator.executor.variables.base import VariableBase
    from paddle.jit.sot.opcode_translator.executor.variables.basic import CellVariable

    while isinstance(item, CellVariable):
        item = item.cell_content()
    return item.get_py_value() if isinstance(item, VariableBase) else item


def _as_eager_made(value: Any) -> Any:
    """`value` as eager would have made it, where SOT made it while simulating the caller: a
    function whose closure cells hold SOT's variables (3.3.1 opcode_executor.py
    `attach_new_attribute`: `MAKE_FUNCTION` fills each cell with the cell variable of its value)
    is rebuilt with each variable's Python value (a Layer, a constant). A function made to be
    recomputed (PaddleNLP's `recompute(create_custom_forward(layer), ...)`) would otherwise call a
    variable, which fails; a cell holding a traced tensor has no Python value and still fails
    (a break: the call runs eagerly)."""
    from paddle.jit.sot.opcode_translator.executor.variables.base import VariableBase

    if not isinstance(value, types.FunctionType) or not value.__closure__:
        return value
    contents = [_cell_value(cell) for cell in value.__closure__]
    if not any(isinstance(item, VariableBase) for item in contents):
        return value
    cells = tuple(item if isinstance(item, types.CellType) else types.CellType(_python_value(item)) for item in contents)
    rebuilt = types.FunctionType(value.__code__, value.__globals__, value.__name__, value.__defaults__, cells)
    rebuilt.__kwdefaults__ = value.__kwdefaults__
    return rebuilt


def _eager_made(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """A call's arguments, each as eager would have made it (`_as_eager_made`)."""
    return tuple(_as_eager_made(value) for value in args), {name: _as_eager_made(value) for name, value in kwargs.items()}


def built_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `fn` (the runtime's `recompute`, `recompute_sequential`) so SOT records each call
    of it as one call of its graph where the release can (`paddle.jit.marker.unified`): SOT
    neither simulates it (nor Paddle's eager code it calls in dynamic mode) nor breaks at it.
    `fn` builds its op when SOT infers the call's meta and when it compiles the graph, neither
    in dynamic mode. The meta is inferred under dy2static's graph tracing, as compiling is
    (the module docstring says why); a build that raises (a refused function) is SOT's break
    request, so the call runs eagerly, as `fn` does in dynamic mode. A function SOT made while
    simulating the caller is given as eager would have made it (`_as_eager_made`). Whether it raises may
    depend on state SOT does not guard (a layer's `training`: a dropout in train mode is refused,
    none in eval mode), so SOT infers the meta of every call it records, none served from its
    cache (`_uncached_meta`): a model run in eval mode, then trained, breaks at the call instead
    of failing while SOT compiles its graph. Elsewhere `fn` is as given."""
    unified = framework.sot_unified_marker()
    if unified is None:
        return fn

    @functools.wraps(fn)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if paddle.in_dynamic_mode():
            return fn(*args, **kwargs)
        if not _in_sot_infer_meta():
            eager_args, eager_kwargs = _eager_made(args, kwargs)
            return fn(*eager_args, **eager_kwargs)
        from paddle.jit.dy2static.utils import graph_tracing_guard

        try:
            # graph tracing drops the scratch program's records when the build returns; a refused
            # build's go too (`dy2static.records_forgotten_on_error`)
            with dy2static.records_forgotten_on_error(), graph_tracing_guard(paddle.static.default_main_program()), \
                    plain_names():
                eager_args, eager_kwargs = _eager_made(args, kwargs)
                return fn(*eager_args, **eager_kwargs)
        except _break_error():
            raise
        except Exception as exc:  # noqa: BLE001 - turned into a break: eager raises it again
            raise break_request(f"building the call raised {type(exc).__name__}: {exc}; the call runs eagerly") from exc

    setattr(recorded, _BUILT_IN_GRAPH, True)
    unified(recorded)
    return recorded


def install() -> None:
    """Have SOT run the runtime's frames natively and, where it records PyLayer calls, give it
    guards it can compile for the arguments they take (`_install_guards`) and infer again the
    meta of a call whose forward reads changing state (`_uncached_meta`)."""
    skip_runtime_files()
    if framework.sot_unified_marker() is not None:
        from paddle.jit.sot.infer_meta import InferMetaCache

        from paddle.jit.sot.opcode_translator.executor.variables.base import VariableFactory
        from paddle.jit.sot.symbolic import compile_cache

        _install_guards()
        patch.install("sot.InferMetaCache.key_fn", InferMetaCache, "key_fn", _uncached_meta)
        patch.install("sot.VariableFactory.from_value", VariableFactory, "from_value", _parameters_held)
        patch.install("sot.compile_cache.compile_sir", compile_cache, "compile_sir", _compiled_with_parameters)
