"""Which ops do something beyond their results, and so stay even when nothing reads them.

After inlining, an op of a PyLayer's backward whose results no gradient uses (an input that
stops gradient, a frozen weight whose gradient backward computes anyway, a value a
`None`-returning branch leaves behind) is dropped (`pir/unused.py`, `legacy/unused.py`), as
autodiff never builds such work for built-in ops. An op that writes in place, prints, talks to
other processes, checks, draws random numbers (the generator's state moves on) or feeds,
fetches or updates a parameter must stay whatever reads its results: `has_effects` says so by
the op's type (PIR's name, with or without its dialect prefix, or the legacy IR's type). The
IR packages add what only they can see (an in-place write by name, sub-blocks, an op with no
result).
"""

_EFFECTS = frozenset((
    # Feeding, fetching, persisting.
    "feed", "fetch", "fetch_v2", "data", "shadow_output", "set_parameter", "set_persistable_value",
    "save", "save_combine", "load", "load_combine", "share_data", "share_buffer", "memcpy", "memcpy_d2h",
    "memcpy_h2d",
    # Printing and checking.
    "print", "assert", "check_numerics", "check_finite_and_unscale", "update_loss_scaling",
    # Random state: each draw moves the generator on, for what is drawn after.
    "seed", "dropout", "uniform", "uniform_random", "gaussian", "gaussian_random", "randint", "randperm",
    "bernoulli", "multinomial", "truncated_gaussian_random", "poisson", "exponential", "random_routing",
    "class_center_sample", "rrelu",
    # Collectives and point-to-point communication.
    "send", "recv", "send_v2", "recv_v2", "partial_send", "partial_recv", "barrier", "all_reduce",
    "all_gather", "all_to_all", "broadcast", "reduce", "reduce_scatter", "c_scatter", "alltoall",
    "c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod", "c_allreduce_avg",
    "c_allgather", "c_broadcast", "c_reduce_sum", "c_reduce_max", "c_reduce_min", "c_reduce_prod",
    "c_reducescatter", "c_concat", "c_split", "c_identity", "c_sync_calc_stream", "c_sync_comm_stream",
    "c_embedding", "c_softmax_with_cross_entropy", "mp_allreduce_sum", "distributed_push_sparse",
    # Optimizers: they write the parameters and their moments.
    "sgd", "momentum", "adam", "adamw", "adamax", "adagrad", "adadelta", "rmsprop", "lamb", "lars_momentum",
    "merged_adam", "merged_momentum", "fused_adam", "ftrl", "dgc_momentum", "increment",
))


def has_effects(op_type: str) -> bool:
    """Whether an op of `op_type` ("pd_op.print", "print", "pd_op.sgd_") must run even when
    nothing reads its results: an in-place op (a trailing `_`) writes its input; the others are
    `_EFFECTS`'s."""
    name = op_type.rsplit(".", 1)[-1]
    return name.endswith("_") or name in _EFFECTS
