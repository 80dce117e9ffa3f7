"""Hashes and MACs from CPython's built-in implementations, without OpenSSL.

`import hashlib` (or `hmac`) loads and initialises OpenSSL, a few milliseconds of every one-file
scan, and a scan needs only a few small digests. The built-in modules below are the same
algorithms hashlib falls back to when OpenSSL is missing (`hashlib.blake2b` is `_blake2.blake2b`),
so every digest is the one hashlib gives; on a Python without them, hashlib is used.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
    from _operator import _compare_digest as compare_digest
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import blake2b
    from hmac import compare_digest

try:
    from _sha1 import sha1 as _sha1
except ImportError:  # pragma: no cover
    from hashlib import sha1 as _sha1

try:
    from _sha256 import sha256 as _sha256  # Python 3.11
except ImportError:  # pragma: no cover
    try:
        from _sha2 import sha256 as _sha256  # Python 3.12 and later
    except ImportError:
        from hashlib import sha256 as _sha256

__all__ = ["blake2b", "compare_digest", "content_hash", "keyed_mac", "sha1_hex", "sha256_hex"]


def sha1_hex(data: bytes) -> str:
    return _sha1(data).hexdigest()


def sha256_hex(data: bytes) -> str:
    return _sha256(data).hexdigest()


def content_hash(*chunks: bytes) -> str:
    """64 hex digits identifying the bytes (BLAKE2b-256)."""
    digest = blake2b(digest_size=32)
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def keyed_mac(secret: bytes, data: bytes) -> str:
    """64 hex digits authenticating `data` under `secret`: BLAKE2b's keyed mode (RFC 7693), a MAC."""
    return blake2b(data, key=secret, digest_size=32).hexdigest()
