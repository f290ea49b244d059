"""Flow control on data links (sans-IO): a sender keeps at most a window of bytes ahead of
what its receiver has processed.

Without it a federate that runs ahead (a source with no upstream, a sampler beside a slow
learner) fills its receiver's event queue as fast as the link carries bytes: the
receiver's memory grows without bound, and every payload lands in fresh pages (a page
fault each 4 KB, the receiver's largest cost for 100 KB frames).

The receiver (:class:`CreditLedger`) notes each large payload that arrives, with its tag;
when it has processed tags that consumed :data:`CREDIT_STEP` bytes from one peer, it sends
that peer a CREDIT with the last tag it processed. The sender (:class:`SendWindow`) drops
what it sent for tags up to a CREDIT's tag. Before sending a large payload at tag ``t`` it
waits while :data:`WINDOW` bytes or more that it sent for tags *before* ``t`` are not
credited: the receiver can process those tags without anything more from this sender
(whose next messages are at ``t`` or later, and whose held-back report and batch go out
before it waits), so the wait ends as the receiver goes on; a chain of waiting senders has
strictly decreasing tags, so it cannot close into a cycle. What it sends for ``t`` itself
never waits: one tag's messages may exceed the window.

Credits name tags, not bytes: the two sides need not agree on sizes, a credit lost with a
replaced connection or a forged one can only end a wait early, and a receiver that never
credits (an older peer, one that keeps what it receives without processing its tag) costs
the sender a bounded wait (:data:`PATIENCE_NS`, in the driver) before it sends past the window.
Only payloads of :data:`FLOW_MIN` bytes or more count, and only on links with a
connection back to the sender (ZeroMQ's; not a Unix socket's, whose large arrays go
through a shared-memory ring paced on its own), and never on physical links (stamped at
arrival, their tags are the receiver's, not the sender's).
"""

from __future__ import annotations

import heapq

from ...time.tag import TagT

__all__ = ["CREDIT_STEP", "FLOW_MIN", "PATIENCE_NS", "WINDOW", "CreditLedger", "SendWindow"]

#: payloads this large or larger count against a link's window (smaller ones hold little memory)
FLOW_MIN = 16 * 1024
#: the bytes a sender may have sent for earlier tags than the one it sends at, unprocessed
WINDOW = 16 << 20
#: a receiver credits a peer after processing this many of its bytes (a credit per 4 MB)
CREDIT_STEP = WINDOW // 4
#: the longest a sender waits for a credit before sending past its window
PATIENCE_NS = 2_000_000_000


class SendWindow:
    """The sender's side, for one downstream peer: what it sent and the receiver has not
    credited yet, by tag."""

    def __init__(self, window: int = WINDOW) -> None:
        assert window >= CREDIT_STEP  # (else a sender could wait for a credit never due)
        self.window = window
        self._sent: list[tuple[TagT, int]] = []  # a heap: (tag, bytes), the earliest tag first
        self.outstanding = 0  # bytes sent, not credited
        self._last: TagT | None = None  # the latest tag sent at, and the bytes sent for it
        self._last_bytes = 0

    def sent(self, tag: TagT, nbytes: int) -> None:
        heapq.heappush(self._sent, (tag, nbytes))
        self.outstanding += nbytes
        if self._last is None or tag > self._last:
            self._last, self._last_bytes = tag, nbytes
        elif tag == self._last:
            self._last_bytes += nbytes

    def credit(self, tag: TagT) -> None:
        """The receiver processed every tag up to ``tag``."""
        sent = self._sent
        while sent and sent[0][0] <= tag:
            self.outstanding -= heapq.heappop(sent)[1]
        if not sent:  # (else the latest tag sent at is later than ``tag``: its entry stays)
            self._last, self._last_bytes = None, 0

    def full(self) -> bool:
        """Whether a send may have to wait (cheap: most sends stop here)."""
        return self.outstanding >= self.window

    def blocks(self, tag: TagT) -> bool:
        """Whether a payload for ``tag`` must wait: the window is full of bytes sent for
        earlier tags."""
        if self.outstanding < self.window:
            return False
        last = self._last
        if last is not None and tag > last:
            earlier = self.outstanding
        elif last is not None and tag == last:
            earlier = self.outstanding - self._last_bytes
        else:  # sending for an earlier tag than one sent before (links with different delays)
            earlier = sum(b for t, b in self._sent if t < tag)
        return earlier >= self.window


class CreditLedger:
    """The receiver's side: per upstream peer, the large payloads received and not yet
    processed (by tag), and the bytes processed since that peer's last credit."""

    def __init__(self, step: int = CREDIT_STEP) -> None:
        self.step = step
        self._held: dict[int, list[tuple[TagT, int]]] = {}  # peer -> heap of (tag, bytes)
        self._processed: dict[int, int] = {}  # peer -> bytes processed since its last credit
        self.holding = False  # something is held (what completed() looks at first)

    def received(self, peer: int, tag: TagT, nbytes: int) -> None:
        held = self._held.get(peer)
        if held is None:
            held = self._held[peer] = []
            self._processed.setdefault(peer, 0)
        heapq.heappush(held, (tag, nbytes))
        self.holding = True

    def processed(self, tag: TagT) -> list[int]:
        """Every tag up to ``tag`` is processed: the peers to send a CREDIT for ``tag``."""
        due: list[int] = []
        holding = False
        for peer, held in self._held.items():
            if held and held[0][0] <= tag:
                n = self._processed[peer]
                while held and held[0][0] <= tag:
                    n += heapq.heappop(held)[1]
                if n >= self.step:
                    due.append(peer)
                    n = 0
                self._processed[peer] = n
            holding = holding or bool(held)
        self.holding = holding
        return due

    def forget(self, peer: int) -> None:
        """``peer``'s process was replaced: what its last one sent is not credited to the next."""
        self._held.pop(peer, None)
        self._processed.pop(peer, None)
