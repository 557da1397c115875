"""Fleet `mp_ops`-style model-parallel ops: PyLayer classes defined inside helper functions,
non-tensor arguments (group, flags, reduce-op name), identity forward with sum backward,
and a forward returning its input as it is; column/row parallel linears built from them.

Model-parallel world size 1, so every collective is the single rank's split/concat/sum.
"""
import paddle
import paddle.nn.functional as F
from paddle.autograd import PyLayer


class _Group:
    """A model-parallel communication group of one rank."""

    nranks = 1
    rank = 0
    id = 0


_GROUP = _Group()


def _all_reduce(tensor, group, op="sum"):
    # sum over the group's ranks: one rank holds the whole sum
    assert op == "sum"
    parts = [tensor for _ in range(group.nranks)]
    return paddle.add_n(parts) if len(parts) > 1 else paddle.assign(parts[0])


def _split_last(tensor, group):
    return paddle.split(tensor, group.nranks, axis=-1)[group.rank]


def _concat_last(tensor, group):
    return paddle.concat([tensor for _ in range(group.nranks)], axis=-1)


def _c_identity(tensor, group=None, skip_c_identity_dynamic=False):
    group = _GROUP if group is None else group

    class c_identity_eager(PyLayer):
        @staticmethod
        def forward(ctx, tensor, group, skip_c_identity_dynamic):
            ctx.group = group
            if skip_c_identity_dynamic:
                return tensor
            return paddle.assign(tensor)

        @staticmethod
        def backward(ctx, dy):
            return _all_reduce(dy, ctx.group, op="sum")

    return c_identity_eager.apply(tensor, group, skip_c_identity_dynamic)


def _mp_allreduce(tensor, op="sum", group=None, use_calc_stream=True, use_model_parallel=True):
    group = _GROUP if group is None else group

    class mp_allreduce_eager(PyLayer):
        @staticmethod
        def forward(ctx, tensor, group, use_calc_stream, use_model_parallel, op):
            ctx.ring_id = group.id
            ctx.use_model_parallel = use_model_parallel
            return _all_reduce(tensor, group, op=op)

        @staticmethod
        def backward(ctx, dy):
            # the identity of c_identity: every rank already holds the full gradient
            return paddle.assign(dy)

    return mp_allreduce_eager.apply(tensor, group, use_calc_stream, use_model_parallel, op)


def _c_split(tensor, group=None):
    group = _GROUP if group is None else group

    class c_split_eager(PyLayer):
        @staticmethod
        def forward(ctx, tensor, group):
            ctx.group = group
            return _split_last(tensor, group)

        @staticmethod
        def backward(ctx, dy):
            return _concat_last(dy, ctx.group)

    return c_split_eager.apply(tensor, group)


def _c_concat(tensor, group=None):
    group = _GROUP if group is None else group

    class c_concat_eager(PyLayer):
        @staticmethod
        def forward(ctx, tensor, group):
            ctx.group = group
            return _concat_last(tensor, group)

        @staticmethod
        def backward(ctx, dy):
            return _split_last(dy, ctx.group)

    return c_concat_eager.apply(tensor, group)


class ColumnParallelLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, gather_output=True):
        super().__init__()
        self.weight = self.create_parameter([in_features, out_features // _GROUP.nranks])
        self.bias = self.create_parameter([out_features // _GROUP.nranks], is_bias=True)
        self.gather_output = gather_output

    def forward(self, x):
        input_parallel = _c_identity(x, group=_GROUP)
        output_parallel = F.linear(input_parallel, self.weight, self.bias)
        if self.gather_output:
            return _c_concat(output_parallel, group=_GROUP)
        return output_parallel


class RowParallelLinear(paddle.nn.Layer):
    def __init__(self, in_features, out_features, input_is_parallel=False):
        super().__init__()
        self.weight = self.create_parameter([in_features // _GROUP.nranks, out_features])
        self.bias = self.create_parameter([out_features], is_bias=True)
        self.input_is_parallel = input_is_parallel

    def forward(self, x):
        input_parallel = x if self.input_is_parallel else _c_split(x, group=_GROUP)
        output_parallel = paddle.matmul(input_parallel, self.weight)
        output = _mp_allreduce(output_parallel, group=_GROUP, use_calc_stream=True, use_model_parallel=True)
        return output + self.bias


class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.qkv = ColumnParallelLinear(6, 12, gather_output=False)
        self.out = RowParallelLinear(12, 6, input_is_parallel=True)
        self.fc1 = ColumnParallelLinear(6, 8, gather_output=True)
        self.fc2 = RowParallelLinear(8, 6, input_is_parallel=False)

    def forward(self, x):
        h = self.out(paddle.tanh(self.qkv(x)))
        # skip_c_identity_dynamic: forward hands back its (non-leaf) input itself
        h = _c_identity(h * 1.0, skip_c_identity_dynamic=True)
        return self.fc2(F.relu(self.fc1(h))) + h


INPUTS = [([3, 6], "float32", True)]
