"""The byte movers: ZeroMQ sockets (:mod:`.transport`, the one module that imports zmq),
same-host Unix stream sockets (:mod:`.local`) and shared-memory rings (:mod:`.shm`).

They know frames and bytes, not tags: they import nothing of :mod:`..coordination` or
:mod:`..process`.
"""
