#!/usr/bin/python3
"""The GPT-2-style decode step (KV cache in, present cache out) compiled
across four tsp-v1 chips from Python (tp 2 x pp 2), simulated, and compared
with ONNX Runtime (issue 6). The program's input and output specs are the
model's whole tensors, not one chip's parts.

Environment (set by test/python/CMakeLists.txt): LOOM_ZOO_DIR (holds
gpt2_decode.onnx, from the `zoo` fixture), LOOM_TEST_WORK, PYTHONPATH.
"""

import os
import unittest

import numpy as np

import loom
import peers

ZOO = os.environ["LOOM_ZOO_DIR"]
WORK = os.environ["LOOM_TEST_WORK"]
MODEL = os.path.join(ZOO, "gpt2_decode.onnx")
RTOL, ATOL = 1e-3, 1e-4


class DecodeAcrossChips(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.inputs = peers.make_inputs(MODEL, os.path.join(WORK, "make_inputs"))
        cls.program = loom.compile(MODEL, target="tsp-v1", tp=2, pp=2, precision="fp32")
        cls.outputs = ["logits"] + ["present_%s_%d" % (kv, i)
                                    for i in range(4) for kv in ("key", "value")]
        cls.ort = peers.run_ort(MODEL, cls.inputs, WORK, cls.outputs)

    def test_specs_are_whole_tensors(self):
        p = self.program
        self.assertEqual(p.input_specs["past_key_0"], ((1, 4, 31, 64), "float32"))
        self.assertEqual(p.output_specs["present_value_3"], ((1, 4, 32, 64), "float32"))
        self.assertEqual(p.input_names.count("past_key_0"), 1)
        self.assertIn("tp 2 x pp 2", p.mapping_report)

    def test_matches_onnx_runtime(self):
        got = self.program.run(self.inputs)
        for name in self.outputs:
            np.testing.assert_allclose(got[name], self.ort[name], rtol=RTOL, atol=ATOL,
                                       err_msg=name)

    def test_a_split_that_does_not_divide_is_an_error(self):
        with self.assertRaises(loom.Error) as e:
            loom.compile(MODEL, target="tsp-v1", chips=4, tp=3)
        self.assertIn("tp 3 does not divide 4 chips", str(e.exception))


if __name__ == "__main__":
    unittest.main()
