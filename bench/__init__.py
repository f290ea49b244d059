"""reactorfed's benchmarks against their peers (Ray, xronos, raw ZeroMQ and Unix sockets).

Run each from the repository's root as a module, e.g. ``python -m bench.marl --quick``;
``python -m bench.run_all`` runs them all. Results follow one convention (``bench.common``):
JSON lines on stdout and in ``bench/results/NAME.jsonl``, a PNG plot beside them.
"""
