"""The three string hashes TF buckets strings with, bit for bit: Fingerprint64 (farmhash, for
``to_hash_bucket_fast``, lookup tables' OOV buckets and, chained by FingerprintCat64, hashed feature crosses; from
pyfarmhash), SipHash-2-4 keyed by two uint64 (for
``to_hash_bucket_strong``) and TF's own Hash64, a MurmurHash64A with seed 0xDECAFCAFFE (for ``to_hash_bucket``)."""

import struct

import farmhash

_MASK = (1 << 64) - 1


def fingerprint64(data):
    return farmhash.fingerprint64(data)


_CAT_MUL = 0xC6A4A7935BD1E995


def _shift_mix(v):
    return v ^ (v >> 47)


def fingerprint_cat64(fp1, fp2):
    """TF's FingerprintCat64: two fingerprints mixed into one (tf.sparse.cross_hashed chains a row's features)."""
    result = fp1 ^ _CAT_MUL
    result ^= (_shift_mix((fp2 * _CAT_MUL) & _MASK) * _CAT_MUL) & _MASK
    result = (result * _CAT_MUL) & _MASK
    result = (_shift_mix(result) * _CAT_MUL) & _MASK
    return _shift_mix(result)


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _MASK


def siphash24(k0, k1, data):
    """SipHash-2-4 of ``data`` with the key (k0, k1), as TF's StrongKeyedHash."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, n):
        for _ in range(n):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    whole = len(data) // 8 * 8
    for (m,) in struct.iter_unpack("<Q", data[:whole]):
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = (len(data) & 0xFF) << 56 | int.from_bytes(data[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def hash64(data, seed=0xDECAFCAFFE):
    """TF's Hash64 (core/lib/hash): MurmurHash64A over little-endian 8-byte words."""
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & _MASK
    whole = len(data) // 8 * 8
    for (k,) in struct.iter_unpack("<Q", data[:whole]):
        k = (k * m) & _MASK
        k ^= k >> r
        k = (k * m) & _MASK
        h = ((h ^ k) * m) & _MASK
    tail = data[whole:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * m) & _MASK
    h ^= h >> r
    h = (h * m) & _MASK
    return h ^ (h >> r)
