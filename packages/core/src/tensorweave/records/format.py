"""The TFRecord framing: each record is

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

little-endian. The CRC is CRC32C, masked (rotated and offset) so a CRC of data holding CRCs stays well mixed.
"""

import struct

import crc32c

HEADER = struct.Struct("<QI")  # length, masked CRC of the length's 8 bytes
FOOTER = struct.Struct("<I")  # masked CRC of the data
MASK_DELTA = 0xA282EAD8
LENGTH_CHECK = "the length's checksum does not match"
DATA_CHECK = "the data's checksum does not match"
MAX_LENGTH = (1 << 31) - 1  # protobuf neither writes nor reads a message of 2 GiB or more


def mask(crc):
    """TensorFlow's mask of a CRC32C: rotated right by 15 bits, plus a constant."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def masked_crc(data):
    """The masked CRC32C of ``data``, as the framing stores it."""
    return mask(crc32c.crc32c(data))


def frame(data):
    """The bytes of one record holding ``data``."""
    length = struct.pack("<Q", len(data))
    return b"".join((length, FOOTER.pack(masked_crc(length)), data, FOOTER.pack(masked_crc(data))))


def too_long(length):
    """Why a record of ``length`` bytes cannot hold a protocol buffer (its length field is damaged)."""
    return f"its length field says {length:,} bytes; no event or Example is 2 GiB or longer"


def header_problem(head):
    """(length, None) for a record header whose checksum matches, else (length, why it is corrupt)."""
    length, length_crc = HEADER.unpack(head)
    return length, (None if masked_crc(head[:8]) == length_crc else LENGTH_CHECK)
