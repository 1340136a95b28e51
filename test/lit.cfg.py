# Lit configuration for Loom's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Loom"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.loom_tools_dir, append_path=True)

config.substitutions.append(("%loom-opt", os.path.join(config.loom_tools_dir, "loom-opt")))
config.substitutions.append(("%loom", os.path.join(config.loom_tools_dir, "loom")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%srcdir", config.loom_source_dir))
import shutil
if shutil.which("script"):
    config.available_features.add("script")
