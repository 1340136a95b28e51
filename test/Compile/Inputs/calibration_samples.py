#!/usr/bin/python3
"""Writes two calibration samples for make_models.py's gemm_plain model
(inputs A [2, 3], B [3, 4], C [1, 4]) under DIR/s0 and DIR/s1, and a live
input under LIVE (A beyond the calibrated range).

Usage: calibration_samples.py DIR LIVE

The largest |A| over the samples is 127/64 (sample 1), the largest |B|
127/32 (sample 0): the calibrated scales are exactly 1/64 and 1/32.
"""
import os
import sys

import numpy as np


def save(d, **arrays):
    os.makedirs(d, exist_ok=True)
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), np.asarray(a, np.float32))


def main():
    out = sys.argv[1]
    base_a = np.array([[0.5, -1.0, 0.25], [0.125, 0.75, -0.5]])
    base_b = np.linspace(-1, 1, 12).reshape(3, 4)
    c = np.zeros((1, 4))
    b0 = base_b.copy()
    b0[0, 0] = -127 / 32
    save(os.path.join(out, "s0"), A=base_a, B=b0, C=c)
    a1 = base_a.copy()
    a1[1, 2] = 127 / 64
    save(os.path.join(out, "s1"), A=a1, B=base_b, C=c)
    live = base_a * 4  # |A| up to 4: saturates at 127/64 when calibrated
    save(sys.argv[2], A=live, B=base_b, C=c)


if __name__ == "__main__":
    main()
