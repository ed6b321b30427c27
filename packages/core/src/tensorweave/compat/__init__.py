"""``tf.compat``: TF1's string helpers (``as_bytes``, ``as_text``, ``as_str``, ``as_str_any``, with which programs
build the bytes of Example features and read fetched strings back), and ``tf.compat.v1``, which is Tensorweave
itself: the whole API is TF1's. ``tensorweave/__init__.py`` sets ``compat.v1`` (and ``import
tensorweave.compat.v1``) to the package once it is built, so this module imports nothing above it."""

import codecs

__all__ = ["as_bytes", "as_str", "as_str_any", "as_text"]


def _not_a_string(value):
    return TypeError(f"Expected binary or unicode string, got {value!r}")


def as_bytes(bytes_or_text, encoding="utf-8"):
    """``bytes`` of a str (encoded with ``encoding``), bytes or bytearray; anything else is a TypeError."""
    codecs.lookup(encoding)  # an unknown encoding fails even for bytes, as in TF
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise _not_a_string(bytes_or_text)


def as_text(bytes_or_text, encoding="utf-8"):
    """``str`` of a str or bytes (decoded with ``encoding``); a bytearray, like anything else, is a TypeError."""
    codecs.lookup(encoding)
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise _not_a_string(bytes_or_text)


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """``str(value)``, except that bytes are decoded with ``encoding``."""
    return as_str(value, encoding=encoding) if isinstance(value, bytes) else str(value)
