"""KV block allocators: a paged allocator with real block tables, and the counting form the fast engine uses.

Both follow vLLM's KV cache manager: a request holds ``ceil(slots / block_size)`` blocks for the slots it
has asked for, grows one block at a time as it crosses block boundaries, and releases everything when it
finishes or is preempted. Shared prompt prefixes (prefix caching) are blocks held by a cache entry with a
reference count; an entry with no references stays cached but is evictable (least recently released
first) and counts as available.
"""

from __future__ import annotations

from collections import OrderedDict


def cdiv(a: int, b: int) -> int:
    """Ceiling division for non-negative ints."""
    return -(-a // b)


class PrefixEntry:
    """A cached shared prefix: ``blocks`` full blocks, ``refs`` running requests using it."""

    __slots__ = ("blocks", "refs", "ids")

    def __init__(self, blocks: int, ids: list[int] | None = None) -> None:
        self.blocks = blocks
        self.refs = 1
        self.ids = ids


class CountingAllocator:
    """Block accounting by counts: ``free`` blocks, private blocks per request, prefix entries.

    ``take(k)`` claims k blocks, evicting unreferenced prefix entries (LRU) when the free pool is short.
    """

    track_ids = False

    def __init__(self, num_blocks: int) -> None:
        self.num_blocks = num_blocks
        self.free = num_blocks
        self.entries: dict[int, PrefixEntry] = {}
        self.evictable: OrderedDict[int, None] = OrderedDict()
        self.evictable_blocks = 0

    @property
    def available(self) -> int:
        """Blocks an allocation may use: free plus evictable cached blocks."""
        return self.free + self.evictable_blocks

    @property
    def used(self) -> int:
        """Blocks held by requests (private plus referenced prefixes)."""
        return self.num_blocks - self.free - self.evictable_blocks

    def take(self, k: int, rid: int = -1) -> None:
        """Claim k blocks for request ``rid`` (caller checked ``available``)."""
        while k > self.free:
            pid, _ = self.evictable.popitem(last=False)
            e = self.entries.pop(pid)
            self.evictable_blocks -= e.blocks
            if self.track_ids:
                self._release_ids(e)
            self.free += e.blocks
        self.free -= k
        if self.track_ids:
            self._claim_ids(rid, k)

    def give(self, k: int, rid: int = -1) -> None:
        """Return k private blocks of ``rid`` to the free pool."""
        self.free += k
        if self.track_ids:
            self._drop_ids(rid, k)

    # --- prefix cache ---
    def hit(self, pid: int) -> PrefixEntry | None:
        """The cached entry for prefix ``pid`` (not yet referenced by the caller)."""
        return self.entries.get(pid)

    def ref(self, pid: int) -> None:
        e = self.entries[pid]
        if e.refs == 0:
            del self.evictable[pid]
            self.evictable_blocks -= e.blocks
        e.refs += 1

    def unref(self, pid: int) -> None:
        e = self.entries[pid]
        e.refs -= 1
        if e.refs == 0:
            self.evictable[pid] = None
            self.evictable_blocks += e.blocks

    def register(self, pid: int, blocks: int, rid: int) -> None:
        """Turn the first ``blocks`` private blocks of ``rid`` into the cached prefix ``pid`` (1 reference)."""
        self.entries[pid] = PrefixEntry(blocks, self._move_ids(rid, blocks))

    def warm(self, pid: int, blocks: int) -> None:
        """Cache prefix ``pid`` as ``blocks`` unreferenced (evictable) blocks, as a server holds a prefix an
        earlier run computed (caller checked ``available``)."""
        rid = -2 - pid   # a placeholder owner for the moment between claiming and registering
        self.take(blocks, rid)
        self.register(pid, blocks, rid)
        self._forget(rid)
        self.unref(pid)

    # --- block-id hooks (no-ops here; called only when ``track_ids``) ---
    def _forget(self, rid: int) -> None: ...
    def _claim_ids(self, rid: int, k: int) -> None: ...
    def _drop_ids(self, rid: int, k: int) -> None: ...
    def _release_ids(self, e: PrefixEntry) -> None: ...
    def _move_ids(self, rid: int, k: int) -> list[int] | None: return None


class PagedAllocator(CountingAllocator):
    """The same accounting with physical block ids and a block table per request (for audits and tests).

    ``tables[rid]`` lists the request's private block ids in logical order; a request's full table is
    its prefix entry's ids followed by these. Freed ids go back to a LIFO free list.
    """

    track_ids = True

    def __init__(self, num_blocks: int) -> None:
        super().__init__(num_blocks)
        self.free_ids = list(range(num_blocks - 1, -1, -1))
        self.tables: dict[int, list[int]] = {}

    def _claim_ids(self, rid: int, k: int) -> None:
        if k:
            got = self.free_ids[-k:]
            del self.free_ids[-k:]
            self.tables.setdefault(rid, []).extend(reversed(got))

    def _drop_ids(self, rid: int, k: int) -> None:
        t = self.tables.get(rid, [])
        if k:
            self.free_ids.extend(reversed(t[-k:]))
            del t[-k:]
        if not t:
            self.tables.pop(rid, None)

    def _forget(self, rid: int) -> None:
        self.tables.pop(rid, None)

    def _release_ids(self, e: PrefixEntry) -> None:
        self.free_ids.extend(reversed(e.ids or []))

    def _move_ids(self, rid: int, k: int) -> list[int]:
        t = self.tables.get(rid, [])
        ids, self.tables[rid] = t[:k], t[k:]
        return ids

    def check(self) -> None:
        """Assert the invariants: no block in two places, counts match ids, nothing above the budget."""
        seen: list[int] = list(self.free_ids)
        for t in self.tables.values():
            seen.extend(t)
        for e in self.entries.values():
            seen.extend(e.ids or [])
        assert len(seen) == len(set(seen)) == self.num_blocks, "a block is shared or lost"
        assert len(self.free_ids) == self.free
        assert sum(e.blocks for e in self.entries.values() if e.refs == 0) == self.evictable_blocks
        assert 0 <= self.used <= self.num_blocks
