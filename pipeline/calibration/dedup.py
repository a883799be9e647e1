"""Exact and near-duplicate detection over conversation texts.

Exact duplicates share the SHA256 of their normalised text (NFKC, case-folded, whitespace
collapsed). Near duplicates are found with MinHash LSH (``datasketch``) over word
3-shingles: a text whose estimated Jaccard similarity to an earlier kept text passes the
threshold is a near duplicate of it. The first occurrence wins, so the same input order
gives the same result (the MinHash seed is fixed, and among several earlier candidates
the earliest kept one is reported).

Example:
    >>> dedup = Deduplicator(threshold=0.8, num_perm=128)
    >>> text = "please reset the password on my account " * 10
    >>> dedup.add("a", text).kept
    True
    >>> dedup.add("b", text.upper()).exact_duplicate_of
    'a'
    >>> dedup.add("c", text + "thanks").near_duplicate_of
    'a'

Memory at scale: the LSH index keeps, per kept text, one entry per band (b=9 bands of r=13
values at threshold 0.8, num_perm=128; the bands are datasketch's own ``MinHashLSH``
parameters and bucket keys) mapping the band's 8-byte bucket key to the first kept text in
that bucket, since only the earliest candidate is ever reported: ~0.7 KB per kept text,
plus ~150 B for the exact-hash index and keys (datasketch's in-memory ``MinHashLSH``, which
keeps every key of every bucket and a reverse index, measured ~3.4 KB). Signatures are not
kept, so LSH candidates are not re-verified: a pair a little under the threshold can be
flagged, one a little over it missed (that is the usual LSH trade-off; ``num_perm``
narrows it). :func:`dedup_keys_of` computes what :meth:`Deduplicator.add_keys` needs in
another process (the `split` stage's scrub workers do).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from datasketch import MinHash, MinHashLSH

from pipeline.contracts.business_record import Record

logger = logging.getLogger(__name__)

SHINGLE_WORDS = 3
DEFAULT_SEED = 1
_WS_RE = re.compile(r"\s+")
_WORD_RE = re.compile(r"\w+")


def normalize_text(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed and stripped."""
    return _WS_RE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def conversation_text(record: Record) -> str:
    """The text compared for duplicates: every message as ``role: content``, one per line."""
    return "\n".join(f"{m.role}: {m.content}" for m in record.messages)


def content_hash(text: str) -> str:
    """SHA256 (hex) of the normalised text: equal for exact duplicates."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def shingles(text: str, size: int = SHINGLE_WORDS, *, normalized: bool = False) -> set[bytes]:
    """Word ``size``-grams of the normalised text (the whole text when it is shorter);
    ``normalized``: ``text`` is :func:`normalize_text`'s output already."""
    words = _WORD_RE.findall(text if normalized else normalize_text(text))
    if len(words) <= size:
        return {" ".join(words).encode("utf-8")} if words else set()
    return {" ".join(words[i:i + size]).encode("utf-8") for i in range(len(words) - size + 1)}


@functools.lru_cache(maxsize=8)
def _empty_minhash(num_perm: int, seed: int) -> MinHash:
    # Drawing the permutations is most of the cost of a new MinHash: draw them once and
    # copy (what ``MinHash.bulk`` does).
    return MinHash(num_perm=num_perm, seed=seed)


@functools.lru_cache(maxsize=8)
def _scratch_minhash(num_perm: int, seed: int) -> MinHash:
    return _empty_minhash(num_perm, seed).copy()  # not thread-safe: one caller at a time


def minhash(text: str, num_perm: int, seed: int = DEFAULT_SEED) -> MinHash | None:
    """MinHash signature of the text's shingles; None for a text without words."""
    grams = shingles(text)
    if not grams:
        return None
    signature = _empty_minhash(num_perm, seed).copy()
    signature.update_batch(list(grams))
    return signature


def _check_params(threshold: float, num_perm: int) -> None:
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"near-duplicate threshold must be in (0, 1), got {threshold}; 0.8 is usual")
    if num_perm < 16:
        raise ValueError(f"num_perm must be at least 16, got {num_perm}; 128 is usual")


def _band_key(band: bytes) -> bytes:
    # 8-byte bucket keys instead of r×8 bytes per band: a third of the LSH index's memory.
    return hashlib.blake2b(band, digest_size=8).digest()


def _new_lsh(threshold: float, num_perm: int) -> MinHashLSH:
    return MinHashLSH(threshold=threshold, num_perm=num_perm, hashfunc=_band_key)


@functools.lru_cache(maxsize=8)
def _bands(threshold: float, num_perm: int) -> tuple[tuple[int, int], ...]:
    """The LSH bands (start, end) datasketch picks for this threshold and num_perm."""
    return tuple(_new_lsh(threshold, num_perm).hashranges)


@dataclass(frozen=True, slots=True)
class DedupKeys:
    """What :class:`Deduplicator` needs of one text: the SHA256 prefix of its normalised
    text and one 64-bit bucket key per LSH band (None for a text without words). Small
    and picklable, so worker processes can compute it."""

    digest: bytes
    bands: tuple[int, ...] | None


def dedup_keys_of(text: str, threshold: float, num_perm: int, seed: int = DEFAULT_SEED) -> DedupKeys:
    """:class:`DedupKeys` of ``text``: the band keys are datasketch's (``MinHashLSH`` with
    the same threshold, num_perm and bucket hash), band ``i`` tagged into bits 64 and up."""
    normal = normalize_text(text)
    digest = hashlib.sha256(normal.encode("utf-8")).digest()[:16]
    grams = shingles(normal, normalized=True)
    if not grams:
        return DedupKeys(digest, None)
    # One MinHash reused (cleared) per call: a copy costs as much as the hashing itself.
    scratch = _scratch_minhash(num_perm, seed)
    scratch.clear()
    scratch.update_batch(list(grams))
    values = scratch.hashvalues
    bands = tuple(int.from_bytes(_band_key(bytes(values[start:end].byteswap().data)), "big") | (i << 64)
                  for i, (start, end) in enumerate(_bands(threshold, num_perm)))
    return DedupKeys(digest, bands)


@dataclass(frozen=True, slots=True)
class DedupResult:
    """What :meth:`Deduplicator.add` decided for one key."""

    key: str
    exact_duplicate_of: str | None = None
    near_duplicate_of: str | None = None

    @property
    def kept(self) -> bool:
        return self.exact_duplicate_of is None and self.near_duplicate_of is None


class Deduplicator:
    """Keeps the first of every group of exact or near duplicates, in the order added.

    Only kept texts are indexed, so a chain A≈B≈C where C is not near A keeps A and C.
    """

    def __init__(self, threshold: float = 0.8, num_perm: int = 128, *,
                 seed: int = DEFAULT_SEED) -> None:
        _check_params(threshold, num_perm)
        self.threshold = threshold
        self.num_perm = num_perm
        self.seed = seed
        self._exact: dict[bytes, int] = {}
        self._keys: list[str] = []  # kept keys; the indexes store their index, not the string
        # The LSH index, compactly: bucket key (band-tagged) -> index of the first kept text
        # in that bucket. datasketch's in-memory MinHashLSH keeps every key of every bucket
        # (and a reverse index); only the earliest candidate is ever reported, and texts are
        # never removed, so the first one is all that is needed (~10x less memory).
        self._buckets: dict[int, int] = {}
        self.n_bands = len(_bands(threshold, num_perm))
        self.counts = {"kept": 0, "exact": 0, "near": 0}

    def keys_of(self, text: str) -> DedupKeys:
        """The :class:`DedupKeys` this deduplicator computes for ``text``."""
        return dedup_keys_of(text, self.threshold, self.num_perm, self.seed)

    def add(self, key: str, text: str) -> DedupResult:
        """Decide whether ``text`` duplicates an earlier kept text; keep it if not."""
        return self.add_keys(key, self.keys_of(text))

    def add_keys(self, key: str, keys: DedupKeys) -> DedupResult:
        """:meth:`add` for a text whose :class:`DedupKeys` were computed already."""
        first = self._exact.get(keys.digest)
        if first is not None:
            self.counts["exact"] += 1
            return DedupResult(key, exact_duplicate_of=self._keys[first])
        buckets = self._buckets
        if keys.bands is not None:
            candidates = [found for band in keys.bands if (found := buckets.get(band)) is not None]
            if candidates:
                self.counts["near"] += 1
                return DedupResult(key, near_duplicate_of=self._keys[min(candidates)])
        index = len(self._keys)
        self._keys.append(key)
        self._exact[keys.digest] = index
        if keys.bands is not None:
            for band in keys.bands:
                buckets.setdefault(band, index)
        self.counts["kept"] += 1
        return DedupResult(key)

    def __len__(self) -> int:
        """Number of kept texts."""
        return len(self._keys)


def near_duplicates_between(texts_a: Iterable[str], texts_b: Iterable[str], threshold: float = 0.8,
                            num_perm: int = 128, *, seed: int = DEFAULT_SEED
                            ) -> list[tuple[int, int]]:
    """Sorted (index in a, index in b) pairs that are exact or near duplicates.

    Use it to prove two pools disjoint (the result must be empty). ``texts_a`` is indexed
    and ``texts_b`` streamed, so pass the smaller pool as ``texts_a``.
    """
    _check_params(threshold, num_perm)
    lsh = _new_lsh(threshold, num_perm)
    exact: dict[bytes, list[int]] = {}
    for i, text in enumerate(texts_a):
        exact.setdefault(hashlib.sha256(normalize_text(text).encode()).digest(), []).append(i)
        signature = minhash(text, num_perm, seed)
        if signature is not None:
            lsh.insert(i, signature, check_duplication=False)
    pairs: set[tuple[int, int]] = set()
    for j, text in enumerate(texts_b):
        pairs.update((i, j) for i in exact.get(hashlib.sha256(normalize_text(text).encode()).digest(), ()))
        signature = minhash(text, num_perm, seed)
        if signature is not None:
            pairs.update((i, j) for i in lsh.query(signature))
    result = sorted(pairs)
    logger.info("near-duplicate pairs between pools: %d", len(result))
    return result


def near_duplicate_pairs(keys_a: Iterable[DedupKeys], keys_b: Iterable[DedupKeys]) -> list[tuple[int, int]]:
    """:func:`near_duplicates_between` for texts whose :class:`DedupKeys` are computed already
    (the same threshold and num_perm on both sides): a pair is an exact duplicate (same
    normalised text) or shares an LSH bucket in some band, as datasketch's index would report.
    ``keys_a`` is indexed and ``keys_b`` streamed, so pass the smaller side as ``keys_a``."""
    exact: dict[bytes, list[int]] = {}
    buckets: dict[int, list[int]] = {}
    for i, keys in enumerate(keys_a):
        exact.setdefault(keys.digest, []).append(i)
        for band in keys.bands or ():
            buckets.setdefault(band, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for j, keys in enumerate(keys_b):
        pairs.update((i, j) for i in exact.get(keys.digest, ()))
        for band in keys.bands or ():
            pairs.update((i, j) for i in buckets.get(band, ()))
    return sorted(pairs)


def dedup_keys(items: Sequence[tuple[str, str]], threshold: float = 0.8,
               num_perm: int = 128) -> list[DedupResult]:
    """Convenience: run a fresh :class:`Deduplicator` over (key, text) pairs in order."""
    dedup = Deduplicator(threshold, num_perm)
    return [dedup.add(key, text) for key, text in items]
