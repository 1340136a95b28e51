#!/usr/bin/python3
"""loom.from_torch: small torch modules exported through torch.onnx and
compiled for the tiny target; the simulated outputs match ONNX Runtime on
the exported file, and torch itself (issue 8, "Python entry point").

Environment (set by test/python/CMakeLists.txt): LOOM_TEST_WORK (a scratch
directory), PYTHONPATH (the build's python/ directory).
"""

import gc
import os
import unittest
import warnings

import numpy as np
import torch
import torch.nn as nn

import loom
import peers

WORK = os.environ["LOOM_TEST_WORK"]
RTOL, ATOL = 1e-3, 1e-4          # against ONNX Runtime (fp32)
TORCH_RTOL, TORCH_ATOL = 1e-3, 1e-3  # against torch: loosely


class Mlp(nn.Module):
    """Two layers with GELU (erf)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 256)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(256, 32)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ConvNet(nn.Module):
    """conv-bn-relu-pool, conv-relu, global pool, linear; two inputs (the
    second is added to the features) and two outputs (logits, features)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)
        with torch.no_grad():  # non-trivial running statistics to fold
            self.bn.running_mean.uniform_(-0.1, 0.1)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x, bias):
        y = torch.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        y = torch.relu(self.conv2(y))
        features = y.mean(dim=(2, 3)) + bias
        return self.fc(features), features


def torch_outputs(module, inputs):
    with torch.no_grad():
        out = module(*inputs)
    out = out if isinstance(out, tuple) else (out,)
    return [o.numpy() for o in out]


class FromTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        warnings.simplefilter("ignore")  # torch.onnx's tracer warnings
        torch.manual_seed(0)

    def check_module(self, name, module, inputs, expected_outputs):
        path = os.path.join(WORK, name + ".onnx")
        if os.path.exists(path):
            os.remove(path)
        program = loom.from_torch(module, inputs, target="tiny", path=path)
        self.assertTrue(os.path.isfile(path))
        self.assertEqual(program.model_path, os.path.abspath(path))
        self.assertEqual(program.target, "tiny")
        self.assertFalse(module.training)  # put in eval mode
        names = [f"input{i}" for i in range(len(inputs))]
        self.assertEqual(program.input_names, names)
        self.assertEqual(program.output_names, expected_outputs)
        for n, x in zip(names, inputs):
            self.assertEqual(program.input_specs[n], (tuple(x.shape), "float32"))

        feeds = {n: x.numpy() for n, x in zip(names, inputs)}
        outputs = program.run(feeds)
        self.assertEqual(list(outputs), expected_outputs)
        ort = peers.run_ort(path, feeds, os.path.join(WORK, name), expected_outputs)
        ref = torch_outputs(module, inputs)
        for n, t in zip(expected_outputs, ref):
            err = peers.assert_close(outputs[n], ort[n], RTOL, ATOL,
                                     f"{name} '{n}': simulated vs ONNX Runtime")
            peers.assert_close(outputs[n], t, TORCH_RTOL, TORCH_ATOL,
                               f"{name} '{n}': simulated vs torch")
            self.assertGreater(float(np.abs(t).max()), 1e-2)  # not all zeros
            print(f"{name} '{n}': max abs err vs ONNX Runtime {err:.3g}")

        # check() finds the exported model through model_path.
        result = loom.check(program, feeds)
        self.assertTrue(result.ok, result.report())
        self.assertEqual(list(result.reference), expected_outputs)
        for n in expected_outputs:
            self.assertLess(result.max_abs_error[n], ATOL)
        synthetic = loom.check(program)
        self.assertTrue(synthetic.ok, synthetic.report())
        # Positional inputs, and tensors straight from torch.
        again = program.run(list(inputs))
        for n in expected_outputs:
            np.testing.assert_array_equal(again[n], outputs[n])
        return program

    def test_mlp_with_gelu(self):
        x = torch.randn(8, 64)
        self.check_module("mlp", Mlp(), (x,), ["output0"])

    def test_conv_net_two_inputs_two_outputs(self):
        x = torch.randn(2, 3, 16, 16)
        bias = torch.randn(2, 16) * 0.1
        program = self.check_module("convnet", ConvNet(), (x, bias), ["output0", "output1"])
        self.assertEqual(program.output_specs["output0"], ((2, 10), "float32"))
        self.assertEqual(program.output_specs["output1"], ((2, 16), "float32"))

    def test_names_and_compile_options(self):
        x = torch.randn(4, 64)
        program = loom.from_torch(Mlp(), x, target="tiny", input_names=["features"],
                                  output_names=["scores"], mapping="sequential")
        self.assertEqual(program.input_names, ["features"])
        self.assertEqual(program.output_names, ["scores"])
        self.assertEqual(program.mapping, "sequential")
        self.assertEqual(program.options["mapping"], "sequential")
        self.assertEqual(program.run(x)["scores"].shape, (4, 32))

    def test_temporary_model_lives_as_long_as_the_program(self):
        program = loom.from_torch(Mlp(), torch.randn(2, 64), target="tiny")
        path = program.model_path
        self.assertTrue(os.path.isfile(path), path)
        self.assertTrue(loom.check(program).ok)
        del program
        gc.collect()
        self.assertFalse(os.path.exists(path), f"{path} was not deleted with its Program")


if __name__ == "__main__":
    unittest.main(verbosity=2)
