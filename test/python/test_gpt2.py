#!/usr/bin/python3
"""The GPT-2-style zoo model compiled, simulated and checked from Python on
tsp-v1, against ONNX Runtime (issue 8, "Python entry point").

Environment (set by test/python/CMakeLists.txt): LOOM_ZOO_DIR (holds
gpt2.onnx, from the `zoo` fixture), LOOM_TEST_WORK (a scratch directory),
PYTHONPATH (the build's python/ directory).
"""

import os
import unittest

import numpy as np

import loom
import peers

ZOO = os.environ["LOOM_ZOO_DIR"]
WORK = os.environ["LOOM_TEST_WORK"]
MODEL = os.path.join(ZOO, "gpt2.onnx")
TARGET = "tsp-v1"
# fp32 against ONNX Runtime: the tolerance of test/e2e/compiled_vs_ort.sh.
RTOL, ATOL = 1e-3, 1e-4


class Gpt2(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.inputs = peers.make_inputs(MODEL, os.path.join(WORK, "make_inputs"))
        # fp32 on the vector unit (tsp-v1's default_precision is fp16).
        cls.program = loom.compile(MODEL, target=TARGET, precision="fp32")
        cls.ort = peers.run_ort(MODEL, cls.inputs, WORK, ["logits"])

    def test_program_describes_the_model(self):
        p = self.program
        self.assertEqual(p.target, TARGET)
        self.assertEqual(p.input_names, ["input_ids"])
        self.assertEqual(p.input_specs, {"input_ids": ((1, 32), "int64")})
        self.assertEqual(p.output_specs, {"logits": ((1, 32, 1000), "float32")})
        self.assertEqual(p.model_path, os.path.abspath(MODEL))
        self.assertGreater(p.total_cycles, 0)
        self.assertGreater(p.num_kernels, 10)
        self.assertIn("kernels", p.summary)
        self.assertIn(f"{p.total_cycles} cycles", p.summary)
        self.assertTrue(p.mapping_report.startswith(f"{p.mapping} (objective latency"),
                        p.mapping_report)
        names = [n for n, _ in p.timings]
        self.assertEqual(names[0], "import")
        self.assertEqual(names[-1], "emit-and-verify")
        self.assertTrue(all(s >= 0 for _, s in p.timings))
        self.assertEqual(p.bytes[4:8], b"LOOM")  # the FlatBuffers file identifier

    def test_inputs_are_the_e2e_ones(self):
        ids = self.inputs["input_ids"]
        self.assertEqual(ids.dtype, np.int64)
        self.assertEqual(ids.shape, (1, 32))
        self.assertTrue(((ids >= 0) & (ids < 1000)).all())
        self.assertGreater(len(np.unique(ids)), 20)  # real token ids, not 0/1

    def test_simulated_outputs_match_onnx_runtime(self):
        outputs = self.program.run(self.inputs)
        self.assertEqual(list(outputs), ["logits"])
        logits = outputs["logits"]
        self.assertEqual(logits.dtype, np.float32)
        err = peers.assert_close(logits, self.ort["logits"], RTOL, ATOL,
                                 "simulated logits vs ONNX Runtime")
        print(f"simulated vs ONNX Runtime: max abs err {err:.3g}")
        # Not a constant or a copy of the inputs: the logits vary by position.
        self.assertGreater(float(logits.std()), 1e-3)
        self.assertGreater(float(np.abs(logits[0, 0] - logits[0, 1]).max()), 1e-4)
        stats = self.program.last_stats
        self.assertEqual(stats["target"], TARGET)
        self.assertEqual(stats["total_cycles"], self.program.total_cycles)
        self.assertEqual(stats["declared_total_cycles"], self.program.total_cycles)

    def test_check_ok_with_the_same_inputs(self):
        result = loom.check(self.program, self.inputs)
        self.assertTrue(result.ok, result.report())
        self.assertEqual(result.failures, [])
        self.assertEqual(list(result.max_abs_error), ["logits"])
        self.assertLess(result.max_abs_error["logits"], ATOL)
        # The golden reference agrees with ONNX Runtime too.
        peers.assert_close(result.reference["logits"], self.ort["logits"], RTOL, ATOL,
                           "golden reference vs ONNX Runtime")
        np.testing.assert_array_equal(result.outputs["logits"],
                                      self.program.run(self.inputs)["logits"])

    def test_check_fails_when_nothing_is_tolerated(self):
        # BLAS in fp32 against the fp64-accumulating reference differs by
        # rounding: with every tolerance 0 the comparison must fail.
        result = loom.check(self.program, self.inputs, rtol=0, atol=0, scale_tol=0)
        self.assertFalse(result.ok)
        self.assertEqual(len(result.failures), 1)
        self.assertIn("output 'logits'", result.failures[0])
        self.assertGreater(result.max_abs_error["logits"], 0)

    def test_check_from_the_path_with_synthetic_inputs(self):
        # No precision: the target's default_precision, fp16 on tsp-v1,
        # checked at fp16's tolerance.
        result = loom.check(MODEL, target=TARGET)
        self.assertTrue(result.ok, result.report())
        self.assertEqual(result.program.options["precision"], "fp16")
        self.assertEqual(result.scale_tol, 4e-3)  # fp16 (docs/numerics.md)
        self.assertEqual(result.program.target, TARGET)
        ids = result.inputs["input_ids"]
        self.assertEqual((ids.dtype, ids.shape), (np.dtype(np.int64), (1, 32)))
        self.assertEqual(set(np.unique(ids)), {0, 1})
        np.testing.assert_array_equal(ids, loom.synthetic_inputs(self.program)["input_ids"])

    def test_bf16_policy_from_python(self):
        fp32 = loom.check(self.program, self.inputs)
        bf16 = loom.check(MODEL, self.inputs, target=TARGET, precision="bf16")
        self.assertTrue(bf16.ok, bf16.report())
        self.assertEqual(bf16.scale_tol, 0.04)
        # bf16 keeps 8 bits of mantissa: clearly less accurate than fp32.
        self.assertGreater(bf16.max_abs_error["logits"], 100 * fp32.max_abs_error["logits"])

    def test_saved_program_runs_the_same(self):
        path = os.path.join(WORK, "gpt2.loom")
        self.program.save(path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), self.program.bytes)
        loaded = loom.load(path)
        self.assertIsNone(loaded.model_path)
        self.assertEqual(loaded.total_cycles, self.program.total_cycles)
        a = loom.run(path, self.inputs)["logits"]
        b = self.program.run(self.inputs)["logits"]
        np.testing.assert_array_equal(a, b)
        timing = loaded.run_timing()
        self.assertEqual(timing["total_cycles"], self.program.total_cycles)

    def test_evaluate_matches_onnx_runtime(self):
        ref = loom.evaluate(MODEL, [self.inputs["input_ids"]])
        self.assertEqual(list(ref), ["logits"])
        peers.assert_close(ref["logits"], self.ort["logits"], RTOL, ATOL,
                           "loom.evaluate vs ONNX Runtime")


if __name__ == "__main__":
    unittest.main(verbosity=2)
