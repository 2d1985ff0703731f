"""The vector engine's Bloom filter: never "no" for a key added, rarely "maybe" for
one that was not."""

from __future__ import annotations

import numpy as np
import pytest

from osf_check.explorer.store.levels import Bloom


def _keys(seed: int, n: int, words: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**63, size=(n, words), dtype=np.uint64)


@pytest.mark.parametrize("words", [1, 2, 3])
def test_every_key_added_is_found_even_when_many_share_a_word(words):
    # a filter of one 64-bit word: every key of one add names it, and only one write
    # to a word named twice in one assignment sticks unless the lost ones are redone
    b = Bloom(words, capacity=6)
    assert len(b.bits) == 1
    keys = _keys(1, 50, words)
    b.add(keys)
    assert b.maybe(keys).all()
    assert 4 <= bin(int(b.bits[0])).count("1") <= 64


@pytest.mark.parametrize("bits_per_key, most", [(10, 0.021), (16, 0.0065)])
def test_false_maybes_stay_near_a_plain_filters(bits_per_key, most):
    # three bits anywhere: 1.75 % at 10 bits a key, 0.50 % at 16; a key's bits in one
    # word: 1.9 % and 0.53 % (measured on 4 M look-ups); one or two bits a key would be
    # 3 to 10 % and fail here
    n = 200_000
    b = Bloom(1, capacity=n * bits_per_key // 10)
    b.add(_keys(2, n))
    false = b.maybe(_keys(3, 2_000_000)).mean()
    assert 0.3 * most < false < most


def test_a_refill_keeps_every_key_and_the_rate():
    b = Bloom(2)
    parts = [_keys(10 + i, 5_000 * (i + 1), 2) for i in range(6)]
    for i, p in enumerate(parts):
        b.add(p, refill=lambda i=i: iter(parts[:i + 1]))
    assert b.capacity >= sum(len(p) for p in parts)
    assert all(b.maybe(p).all() for p in parts)
    assert b.maybe(_keys(99, 200_000, 2)).mean() < 0.021
