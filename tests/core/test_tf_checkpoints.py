"""TensorFlow's checkpoint format (tensor bundle V2) with the core alone: checkpoints real TensorFlow wrote
(tests/fixtures/tf1/make_tf_checkpoints.py) read value for value, the LevelDB table and the slice keys
against TF's bytes, writing and merging TF's format, and damaged files refused naming the file."""

import os
import shutil
import struct

import crc32c
import numpy as np
import pytest
from tf1_fixtures import FOLDER, load

from tensorweave import dtypes, errors
from tensorweave.formats import checkpoint_format, leveldb_table, tf_bundle
from tensorweave.records.format import mask
from tensorweave.train import checkpoint_management

CASES = load("tf_checkpoints")
CHECKPOINTS = FOLDER / "tf_checkpoints"


def expected_value(saved):
    if saved["dtype"] == "string":
        return np.array([v.encode("latin-1") for v in saved["value"]], dtype=object).reshape(saved["shape"])
    value = np.array(saved["value"], dtype=np.float64 if saved["dtype"].startswith("complex") else saved["dtype"])
    if saved["dtype"].startswith("complex"):
        value = value[..., 0] + 1j * value[..., 1]
    return value.reshape(saved["shape"]).astype(saved["dtype"] if saved["dtype"] != "string" else object)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reads_every_tensor_tensorflow_wrote(case):
    reader = checkpoint_format.CheckpointReader(CHECKPOINTS / CASES[case]["prefix"])
    tensors = CASES[case]["tensors"]
    assert reader.format == "tensorflow"
    assert reader.variable_to_shape_map() == {name: t["shape"] for name, t in tensors.items()}
    assert reader.variable_to_dtype_map() == {name: dtypes.as_dtype(t["dtype"]) for name, t in tensors.items()}
    for name, saved in tensors.items():
        value = reader.get_tensor(name)
        assert value.dtype == expected_value(saved).dtype, name
        np.testing.assert_array_equal(value, expected_value(saved), err_msg=name)


def test_partitioned_variable_slices_are_found_by_tfs_slice_keys():
    prefix = CHECKPOINTS / CASES["dtypes"]["prefix"]
    keys = [k for k, _ in leveldb_table.read_table(f"{prefix}.index") if k.startswith(b"\x00")]
    # fixed_size_partitioner(3) of [7, 4]: rows 0-2, 3-4, 5-6 (TF's spec "7 4 0,3:0,4" gives every length)
    assert keys == sorted(tf_bundle.slice_key("partitioned", [(s, n), (0, 4)]) for s, n in ((0, 3), (3, 2), (5, 2)))
    assert tf_bundle.slice_key("v", [(0, 3), (0, -1)]).endswith(b"\x80\x83\x80\x7f")  # '-': no length, -1
    reader = checkpoint_format.CheckpointReader(prefix)
    full = expected_value(CASES["dtypes"]["tensors"]["partitioned"])
    np.testing.assert_array_equal(reader.get_slice("partitioned", "7 4 3,2:-"), full[3:5])
    np.testing.assert_array_equal(reader.get_slice("partitioned", "7 4 2,4:1,2"), full[2:6, 1:3])
    with pytest.raises(errors.InvalidArgumentError, match=r"shape \[7, 4\]"):
        reader.get_slice("partitioned", "8 4 0,2:-")


def test_signed_ordered_code_matches_tensorflows_examples():
    # values from TF's ordered_code_test.cc (WriteSignedNumIncreasing)
    assert tf_bundle._signed_increasing(0) == b"\x80"
    assert tf_bundle._signed_increasing(-1) == b"\x7f"
    assert tf_bundle._signed_increasing(63) == b"\xbf"
    assert tf_bundle._signed_increasing(64) == b"\xc0\x40"
    assert tf_bundle._signed_increasing(-65) == b"\x3f\xbf"
    assert tf_bundle._signed_increasing(2 ** 63 - 1) == b"\xff\xc0\x7f\xff\xff\xff\xff\xff\xff\xff"
    values = [-2 ** 63, -70000, -65, -64, -1, 0, 1, 63, 64, 8191, 8192, 2 ** 40, 2 ** 63 - 1]
    encoded = [tf_bundle._signed_increasing(v) for v in values]
    assert encoded == sorted(encoded)


def test_state_file_written_by_tensorflow_names_the_latest():
    directory = str(CHECKPOINTS / "dtypes")
    assert checkpoint_management.latest_checkpoint(directory) == os.path.join(directory, "model.ckpt-2")
    state = checkpoint_management.get_checkpoint_state(directory)
    assert state.all_model_checkpoint_paths == [os.path.join(directory, p) for p in ("model.ckpt-1", "model.ckpt-2")]
    assert checkpoint_format.is_intact(os.path.join(directory, "model.ckpt-1"))


def test_table_round_trip_over_many_blocks(monkeypatch, tmp_path):
    monkeypatch.setattr(leveldb_table, "BLOCK_SIZE", 200)
    items = [(f"key/{i:04d}/{'x' * (i % 7)}".encode(), bytes([i % 256]) * (i % 13)) for i in range(300)]
    for name, table in (("many", items), ("empty", [])):
        (tmp_path / name).write_bytes(leveldb_table.table_bytes(table))
        assert leveldb_table.read_table(str(tmp_path / name)) == table
    with pytest.raises(ValueError, match="increasing"):
        leveldb_table.table_bytes(items[::-1])


# ---- writing -------------------------------------------------------------------------------------------
ENTRIES = [
    ("floats", "", np.arange(6, dtype=np.float32).reshape(2, 3), dtypes.float32),
    ("strings", "", np.array([b"a", b"", b"\x00\xff", b"long" * 40], dtype=object), dtypes.string),
    ("scalar", "", np.int64(-5), dtypes.int64),
    ("empty", "", np.zeros([0, 2], np.float64), dtypes.float64),
    ("flags", "", np.array([True, False]), dtypes.bool),
    ("split", "5 2 0,3:-", np.arange(6, dtype=np.int32).reshape(3, 2), dtypes.int32),
    ("split", "5 2 3,2:-", np.arange(6, 10, dtype=np.int32).reshape(2, 2), dtypes.int32),
]


def _check_entries(prefix):
    reader = checkpoint_format.CheckpointReader(prefix)
    assert reader.format == "tensorflow"
    for name, spec, value, _ in ENTRIES:
        if not spec:
            np.testing.assert_array_equal(reader.get_tensor(name), value)
    np.testing.assert_array_equal(reader.get_tensor("split"), np.arange(10, dtype=np.int32).reshape(5, 2))
    np.testing.assert_array_equal(reader.get_slice("split", "5 2 3,2:-"), np.arange(6, 10).reshape(2, 2))
    assert reader.variable_to_shape_map()["split"] == [5, 2]


def test_writes_tensorflows_format_and_reads_it_back(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    checkpoint_format.write_checkpoint(prefix, ENTRIES, "tensorflow")
    assert sorted(os.listdir(tmp_path)) == [".checkpoint.lock", "model.ckpt.data-00000-of-00001", "model.ckpt.index"]
    assert tf_bundle.is_tf_checkpoint(prefix) and checkpoint_format.is_intact(prefix)
    _check_entries(prefix)
    checkpoint_format.write_checkpoint(prefix, [("floats", "", np.ones(2, np.float32), dtypes.float32)], "tensorflow")
    np.testing.assert_array_equal(checkpoint_format.CheckpointReader(prefix).get_tensor("floats"), np.ones(2))
    checkpoint_format.delete_checkpoint(prefix)
    assert sorted(os.listdir(tmp_path)) == [".checkpoint.lock"]


def test_merges_per_device_parts_into_shards(tmp_path):
    parts = [str(tmp_path / "parts" / f"part-{i:05d}-of-00002") for i in range(2)]
    checkpoint_format.write_checkpoint(parts[0], ENTRIES[:3] + ENTRIES[5:6], "tensorflow")
    checkpoint_format.write_checkpoint(parts[1], ENTRIES[3:5] + ENTRIES[6:], "tensorflow")
    prefix = str(tmp_path / "model.ckpt")
    checkpoint_format.merge_checkpoints(parts, prefix)
    assert not (tmp_path / "parts").exists()
    assert sorted(os.listdir(tmp_path)) == [".checkpoint.lock", "model.ckpt.data-00000-of-00002",
                                            "model.ckpt.data-00001-of-00002", "model.ckpt.index"]
    _check_entries(prefix)


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(errors.InvalidArgumentError, match="'tensorflow'"):
        checkpoint_format.write_checkpoint(str(tmp_path / "m"), ENTRIES[:1], "tf")


# ---- damaged files -------------------------------------------------------------------------------------
@pytest.fixture
def copy(tmp_path):
    shutil.copytree(CHECKPOINTS / "sharded", tmp_path / "sharded")
    return str(tmp_path / "sharded" / "model.ckpt")


def _flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x10]))


def test_bad_crc_in_the_index_names_it(copy):
    _flip(copy + ".index", 3)
    with pytest.raises(errors.DataLossError, match=r"model\.ckpt\.index.*CRC32C"):
        checkpoint_format.CheckpointReader(copy)
    assert not checkpoint_format.is_intact(copy)


def test_truncated_index_names_it(copy):
    with open(copy + ".index", "r+b") as f:
        f.truncate(100)
    with pytest.raises(errors.DataLossError, match=r"model\.ckpt\.index"):
        checkpoint_format.CheckpointReader(copy)
    assert not checkpoint_format.looks_intact(copy)


@pytest.mark.parametrize("shard, offset, tensor", [
    (1, 2, "on_cpu1"), (0, 24, "strings_cpu0"), (0, 19, "strings_cpu0")])  # a number; a string's bytes; its check
def test_bad_crc_in_the_data_names_the_file_and_tensor(copy, shard, offset, tensor):
    reader = checkpoint_format.CheckpointReader(copy)
    _flip(copy + f".data-0000{shard}-of-00002", offset)
    with pytest.raises(errors.DataLossError, match=rf"data-0000{shard}-of-00002', tensor '{tensor}'.*CRC32C"):
        reader.get_tensor(tensor)


def test_truncated_data_file(copy):
    with open(copy + ".data-00001-of-00002", "r+b") as f:
        f.truncate(20)
    assert not checkpoint_format.is_intact(copy)
    with pytest.raises(errors.DataLossError, match=r"data-00001-of-00002.*truncated"):
        checkpoint_format.CheckpointReader(copy).verify()


def test_missing_shard(copy):
    os.remove(copy + ".data-00000-of-00002")
    assert not checkpoint_format.is_intact(copy)
    with pytest.raises(errors.DataLossError, match=r"data-00000-of-00002.*missing"):
        checkpoint_format.CheckpointReader(copy).get_tensor("on_cpu0")


def test_snappy_blocks_are_refused_with_the_reason(tmp_path):
    data = bytearray(leveldb_table.table_bytes([(b"", b"x")]))
    (offset, size), _ = leveldb_table._handle(data[-leveldb_table.FOOTER_SIZE:], 0, "")  # the metaindex block
    first_size = offset - leveldb_table.TRAILER_SIZE  # the data block starts the file
    data[first_size] = leveldb_table.SNAPPY
    data[first_size + 1:first_size + 5] = struct.pack("<I", mask(crc32c.crc32c(bytes(data[:first_size + 1]))))
    path = tmp_path / "snappy.index"
    path.write_bytes(bytes(data))
    with pytest.raises(errors.UnimplementedError, match="snappy"):
        leveldb_table.read_table(str(path))


def _write_crafted(prefix, change_index, header_fields=None):
    """A TF-format checkpoint of ENTRIES whose index entries (``change_index``) or header were changed."""
    data, index = tf_bundle.shard_contents(ENTRIES[:2], 0)
    change_index(index)
    with open(tf_bundle.data_path(prefix, 0, 1), "wb") as f:
        f.write(data)
    table = tf_bundle.index_bytes(index, 1)
    if header_fields:
        items = leveldb_table.read_table_bytes(table, prefix)
        header = tf_bundle.tensor_bundle.BundleHeaderProto.FromString(items[0][1])
        header.MergeFrom(tf_bundle.tensor_bundle.BundleHeaderProto(**header_fields))
        table = leveldb_table.table_bytes([(b"", header.SerializeToString())] + items[1:])
    with open(prefix + ".index", "wb") as f:
        f.write(table)


def test_a_dtype_tensorweave_lacks_is_named_and_the_rest_loads(tmp_path):
    prefix = str(tmp_path / "m")
    _write_crafted(prefix, lambda index: setattr(index[b"floats"], "dtype", 11))  # DT_QINT8
    reader = checkpoint_format.CheckpointReader(prefix)
    assert reader.variable_to_shape_map()["floats"] == [2, 3]
    with pytest.raises(errors.UnimplementedError, match="'floats'.*qint8"):
        reader.get_tensor("floats")
    assert reader.dtype_of("strings") is dtypes.string
    np.testing.assert_array_equal(reader.get_tensor("strings"), ENTRIES[1][2])


def test_big_endian_and_newer_bundles_are_refused(tmp_path):
    prefix = str(tmp_path / "m")
    _write_crafted(prefix, lambda index: None, {"endianness": tf_bundle.tensor_bundle.BundleHeaderProto.BIG})
    with pytest.raises(errors.UnimplementedError, match="big-endian"):
        checkpoint_format.CheckpointReader(prefix)
    version = tf_bundle.framework.VersionDef(producer=2, min_consumer=2)
    _write_crafted(prefix, lambda index: None, {"version": version})
    with pytest.raises(errors.UnimplementedError, match="version 2"):
        checkpoint_format.CheckpointReader(prefix)
