"""A federate's heap kept for the next payload, instead of handed back to the kernel.

A federate receives, and frees, payloads of much the same size over and over (an
observation, a frame, a rollout). With glibc's defaults, freeing more than 128 KB at the
top of a heap gives it back to the kernel, and blocks from 128 KB up are fresh mappings
until glibc's dynamic threshold has risen; the next payload then faults its pages in
again: about 4 us a 4 KB page on this project's 2-core machine, 100 us for a 100 KB frame,
as much as ZeroMQ's decryption of it. Kept, the memory is reused and costs nothing.

So a federate process asks glibc (``mallopt``) to serve blocks up to 32 MB from its heaps
and to keep up to 64 MB free at their tops. The price is memory that stays resident after
a burst: at most that much per heap. A ``MALLOC_TRIM_THRESHOLD_`` or
``MALLOC_MMAP_THRESHOLD_`` in the environment is the user's choice and is left alone; on
a C library other than glibc nothing changes.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "keep_payload_memory"]

log = logging.getLogger("reactorfed.federate")

#: blocks up to this size come from the heaps (glibc's own ceiling for its dynamic threshold)
MMAP_THRESHOLD = 32 << 20
#: free memory at a heap's top up to this much stays with the process
TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
_ENV = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")


def keep_payload_memory() -> bool:
    """Set this process's malloc to keep payload memory (see the module); whether it did."""
    if platform.libc_ver()[0] != "glibc" or any(v in os.environ for v in _ENV):
        return False
    try:
        libc = ctypes.CDLL(None)
        done = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        done = done and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    except (OSError, AttributeError) as e:  # (a static or unusual build)
        log.debug("malloc left as it is: %s", e)
        return False
    return done
