#!/usr/bin/python3
"""Errors from the Python module: each user error is a loom.Error (a
RuntimeError) with one line naming the problem; loom.plan plans (and
names the nearest plan when none meets the targets). Also dims, onnx.ModelProto models and the bf16 dtype mapping.

Uses small models built with onnx.helper (no zoo needed).
Environment: LOOM_TEST_WORK (a scratch directory), PYTHONPATH.
"""

import os
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import loom

WORK = os.environ["LOOM_TEST_WORK"]


def matmul_relu(batch=2):
    """y = relu(x @ w), x f32[batch, 4] (batch an int or a dim_param)."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3],
                           np.arange(12, dtype=np.float32).reshape(4, 3).ravel() / 10 - 0.5)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["y"], name="relu")],
        "matmul_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])],
        [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def bf16_round_trip():
    """x bf16[4] -> y = float(x) (f32), z = bf16(y)."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["y"], ["z"], to=TensorProto.BFLOAT16)],
        "bf16_round_trip",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("z", TensorProto.BFLOAT16, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def reshape_by_input():
    """y = reshape(x, shape) + 1, x f32[2, 3], shape i64[2] a graph input."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
         helper.make_node("Add", ["r", "one"], ["y"], name="add")],
        "reshape_by_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.model = os.path.join(WORK, "matmul_relu.onnx")
        onnx.save(matmul_relu(), cls.model)
        cls.program = loom.compile(cls.model)

    def assertLoomError(self, fn, *fragments):
        """fn() raises loom.Error whose one-line message contains each
        fragment; returns the message."""
        with self.assertRaises(loom.Error) as cm:
            fn()
        msg = str(cm.exception)
        self.assertIsInstance(cm.exception, RuntimeError)
        self.assertNotIn("\n", msg)
        self.assertTrue(msg.strip(), "empty message")
        for fragment in fragments:
            self.assertIn(fragment, msg)
        print(f"  loom.Error: {msg}")
        return msg

    def test_error_class(self):
        self.assertTrue(issubclass(loom.Error, RuntimeError))
        self.assertEqual(loom.Error.__module__, "loom")
        self.assertEqual(loom.Error.__name__, "Error")

    def test_missing_model_file(self):
        missing = os.path.join(WORK, "no-such-model.onnx")
        self.assertLoomError(lambda: loom.compile(missing), missing, "cannot open")
        self.assertLoomError(lambda: loom.evaluate(missing, {}), missing, "cannot open")
        self.assertLoomError(lambda: loom.check(missing), missing, "cannot open")

    def test_unknown_target(self):
        msg = self.assertLoomError(lambda: loom.compile(self.model, target="no-such-chip"),
                                   "no-such-chip", "unknown target")
        self.assertIn("tsp-v1", msg)  # lists the presets

    def test_bad_options(self):
        self.assertLoomError(lambda: loom.compile(self.model, precision="fp33"), "fp33")
        self.assertLoomError(lambda: loom.compile(self.model, mapping="diagonal"), "diagonal")
        self.assertLoomError(lambda: loom.compile(self.model, objective="beauty"), "beauty")
        with self.assertRaises(TypeError):
            loom.compile(self.model, target=3)
        with self.assertRaises(TypeError):
            loom.compile(12345)

    def test_input_of_the_wrong_shape(self):
        x = np.zeros((2, 5), np.float32)
        self.assertLoomError(lambda: self.program.run({"x": x}),
                             "input 'x'", "f32[2x5]", "expects f32[2x4]")
        self.assertLoomError(lambda: loom.evaluate(self.model, {"x": x}),
                             "input 'x'", "f32[2x5]", "expects f32[2x4]")
        self.assertLoomError(lambda: loom.check(self.program, {"x": x}),
                             "input 'x'", "f32[2x5]", "f32[2x4]")

    def test_input_of_the_wrong_dtype(self):
        x = np.zeros((2, 4), np.float64)
        self.assertLoomError(lambda: self.program.run({"x": x}),
                             "input 'x'", "f64[2x4]", "expects f32[2x4]")
        self.assertLoomError(lambda: self.program.run({"x": np.zeros((2, 4), np.complex64)}),
                             "input 'x'", "complex64", "not supported")

    def test_input_names_and_counts(self):
        x = np.zeros((2, 4), np.float32)
        self.assertLoomError(lambda: self.program.run({"x": x, "extra": x}),
                             "unknown input 'extra'", "'x'")
        self.assertLoomError(lambda: self.program.run({}), "missing input 'x'")
        self.assertLoomError(lambda: self.program.run([x, x]), "1 input(s)", "got 2")

    def test_not_a_program_file(self):
        self.assertLoomError(lambda: loom.load(self.model), self.model, "not a Loom program")
        missing = os.path.join(WORK, "no-such-program.loom")
        self.assertLoomError(lambda: loom.load(missing), missing, "cannot read")
        self.assertLoomError(lambda: loom.run(missing, {}), missing, "cannot read")

    def test_loaded_program_has_no_model_for_check(self):
        path = os.path.join(WORK, "matmul_relu.loom")
        self.program.save(path)
        loaded = loom.load(path)
        self.assertLoomError(lambda: loom.check(loaded), path, "pass the model")
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        np.testing.assert_array_equal(loaded.run(x)["y"], self.program.run(x)["y"])

    def test_plan(self):
        models = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "models")
        config = os.path.join(models, "llama3-70b.json")
        result = loom.plan(config, "h100", concurrency=64, tpot_ms=50, top=1)
        best = result["plans"][0]
        self.assertTrue(best["meets_targets"])
        self.assertGreaterEqual(best["concurrency"], 64)
        self.assertLessEqual(best["tpot_s"], 0.05)
        # An onnx file is not a config; a target no plan meets names the
        # nearest plan.
        self.assertLoomError(lambda: loom.plan(self.model, "h100"), "invalid JSON")
        self.assertLoomError(lambda: loom.plan(config, "h100", tpot_ms=0.5),
                             "the nearest")
        # The engine's token budget bounds the batch (640 tokens at
        # 1024/256 hold 128 sequences), and the server scenario is there.
        budget = loom.plan(config, "h100", max_num_tokens=640, top=1)
        self.assertEqual(budget["request"]["max_num_tokens"], 640)
        self.assertLessEqual(budget["plans"][0]["batch"], 128)
        server = loom.plan(config, "h100", scenario="server", ttft_ms=2000, top=1)
        self.assertEqual(server["request"]["scenario"], "server")
        # A target file named as no preset compiles its layers from the file.
        root = os.path.dirname(models)
        custom = os.path.join(root, "test", "Compile", "Inputs", "tsp-v1-custom.json")
        spatial = loom.plan(os.path.join(models, "tiny-mixtral.json"), custom,
                            input_len=20, output_len=10, top=1)
        self.assertEqual(spatial["plans"][0]["decode_priced_by"], "compiled layer")

    def test_kv_precision(self):
        models = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "models")
        config = os.path.join(models, "tiny-llama.json")
        fp32 = loom.compile(config)
        fp8 = loom.compile(config, kv_precision="fp8")
        # The fp8 cache moves a quarter of the bytes: a shorter step.
        self.assertLess(fp8.total_cycles, fp32.total_cycles)
        # Checked at the cache's tolerance: its present_* outputs are
        # rounded to fp8, beyond fp32's.
        self.assertTrue(loom.check(fp8).ok)
        self.assertFalse(loom.check(fp8, scale_tol=1e-4).ok)
        self.assertLoomError(lambda: loom.compile(config, kv_precision="int8"),
                             "int8 needs a scale")
        self.assertLoomError(lambda: loom.compile(self.model, kv_precision="fp8"),
                             "applies to an LLM config.json")

    def test_values_are_right(self):
        x = np.array([[1, 2, 3, 4], [-1, -2, -3, -4]], np.float32)
        w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5
        expected = np.maximum(x @ w, 0)
        np.testing.assert_allclose(self.program.run({"x": x})["y"], expected, rtol=1e-6)
        np.testing.assert_allclose(loom.evaluate(self.model, x)["y"], expected, rtol=1e-6)
        self.assertTrue(loom.check(self.program, x).ok)

    def test_check_compares_as_loom_check(self):
        # loom.check's comparison is the runtime's (_loom.compare): an
        # integer within fp32's rtol is still another integer (a NumPy
        # copy of the rule let 1001 pass for 1000), NaN matches NaN, the
        # scale term allows 4e-4 beside a 4.
        rtol, atol, scale = loom._loom.check_tolerance("fp32")
        ok, _, _, worst, bad = loom._loom.compare(
            np.array([7, 1000]), np.array([7, 1001]), rtol, atol, scale)
        self.assertEqual((ok, worst, bad), (False, 1, 1))
        e = np.array([[np.nan, 4.0], [0.0, 1.0]], np.float32)
        a = np.array([[np.nan, 4.0], [4e-4, 1.0]], np.float32)
        self.assertTrue(loom._loom.compare(e, a, rtol, atol, scale)[0])
        self.assertFalse(loom._loom.compare(e, a, rtol, atol, 0.0)[0])
        _, _, failure = loom._compare("y", e, a, rtol, atol, 0.0)
        self.assertTrue(failure.startswith(
            "output 'y': 1 of 4 elements differ; worst at (1, 0): simulated "), failure)

    def test_dynamic_dimension_needs_dims(self):
        path = os.path.join(WORK, "matmul_relu_dynamic.onnx")
        onnx.save(matmul_relu("batch"), path)
        self.assertLoomError(lambda: loom.compile(path), "'batch'", "dynamic", "batch=")
        program = loom.compile(path, dims={"batch": 5})
        self.assertEqual(program.input_specs, {"x": ((5, 4), "float32")})
        self.assertEqual(program.run(np.ones((5, 4), np.float32))["y"].shape, (5, 3))
        result = loom.check(program)  # evaluate binds the same dims
        self.assertTrue(result.ok, result.report())
        with self.assertRaises(TypeError):
            loom.compile(path, dims={"batch": "5"})

    def test_model_proto(self):
        program = loom.compile(matmul_relu(3))
        self.assertTrue(os.path.isfile(program.model_path))
        self.assertEqual(program.input_specs, {"x": ((3, 4), "float32")})
        self.assertTrue(loom.check(matmul_relu(3)).ok)

    def test_bf16_as_float32(self):
        path = os.path.join(WORK, "bf16_round_trip.onnx")
        onnx.save(bf16_round_trip(), path)
        program = loom.compile(path)
        self.assertEqual(program.input_specs, {"x": ((4,), "bfloat16")})
        self.assertEqual(program.output_specs["z"], ((4,), "bfloat16"))
        # 1 + 2^-8 and 1 + 3 * 2^-8 are ties: rounded to even (1 and 1 + 2^-6).
        x = np.array([1.0, 1.00390625, 1.01171875, -3.0], np.float32)
        expected = np.array([1.0, 1.0, 1.015625, -3.0], np.float32)
        for outputs in (program.run({"x": x}), loom.evaluate(path, {"x": x})):
            for name in ("y", "z"):
                self.assertEqual(outputs[name].dtype, np.float32)
                np.testing.assert_array_equal(outputs[name], expected)
        self.assertLoomError(lambda: program.run({"x": x.astype(np.float64)}),
                             "input 'x' is bf16", "float32")

    def test_bind(self):
        path = os.path.join(WORK, "reshape_by_input.onnx")
        onnx.save(reshape_by_input(), path)
        shape = np.array([3, -1], np.int64)
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        # Without the shape the Reshape cannot be compiled.
        self.assertLoomError(lambda: loom.compile(path), "node 'reshape'",
                             "compile-time constant")
        program = loom.compile(path, bind={"shape": shape})
        self.assertEqual(program.input_names, ["x"])
        np.testing.assert_array_equal(program.run(x)["y"], x.reshape(3, 2) + 1)
        self.assertTrue(loom.check(program, x).ok)
        self.assertTrue(loom.check(path, bind={"shape": shape}).ok)
        np.testing.assert_array_equal(loom.evaluate(program, x)["y"],
                                      x.reshape(3, 2) + 1)
        # A path is read as --bind reads it.
        npy = os.path.join(WORK, "shape.npy")
        np.save(npy, shape)
        self.assertEqual(loom.compile(path, bind={"shape": npy}).input_names, ["x"])
        self.assertLoomError(lambda: loom.compile(path, bind={"shap": shape}),
                             "the model has no input 'shap' (its inputs: x, shape)")
        self.assertLoomError(
            lambda: loom.compile(path, bind={"shape": shape.astype(np.int32)}),
            "--bind shape: the value is i32[2] but input 'shape' is i64[2]")
        self.assertLoomError(lambda: loom.check(program, bind={"shape": shape}),
                             "inputs were bound by compile(bind=...)")
        with self.assertRaises(TypeError):
            loom.compile(path, bind=[shape])


if __name__ == "__main__":
    unittest.main(verbosity=2)
