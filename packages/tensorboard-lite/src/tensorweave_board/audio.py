"""Audio summaries' sound: float samples in [-1, 1] as 16-bit little-endian PCM WAV, as TF1's AudioSummaryV2 writes
them (each sample times 32768, rounded half away from zero, clipped to int16), through Python's ``wave``."""

import io
import wave

import numpy as np


def to_int16(samples):
    """TF's float-to-int16 sample conversion, in float32 as TF computes it."""
    scaled = np.asarray(samples, np.float32) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    return np.clip(np.nan_to_num(rounded), -32768, 32767).astype("<i2")


def encode_wav(clip, sample_rate):
    """The WAV file of one [frames, channels] clip at ``sample_rate`` Hz."""
    frames, channels = clip.shape
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(int(np.floor(sample_rate + 0.5)))  # TF rounds a fractional rate to the nearest Hz
        wav.writeframes(to_int16(clip).tobytes())
    return out.getvalue()
