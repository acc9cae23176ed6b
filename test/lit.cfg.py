# lit configuration of the tcc test suite.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tcc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tcc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "check_accuracy.py", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit", "lib", "runtime", "gradients", "e2e"]

config.substitutions.append(("%examples", os.path.join(config.tcc_src_root, "examples")))
# %exit1 CMD: CMD must fail with exactly status 1 (a user error), not crash.
config.substitutions.append(
    ("%exit1", "%s %s 1" % (config.python_executable,
                            os.path.join(config.test_source_root, "lib", "exit-status.py"))))
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
# lit runs two tests at once, often beside another ctest test: OpenMP threads
# that spin at a barrier for a thread of another process slow a trainer down
# a hundredfold (test/CMakeLists.txt, tcc_tests_wait_passively).
config.environment["OMP_WAIT_POLICY"] = "passive"
# tcc's object cache (tools/tcc/ObjectCache.h) in the build folder, not the
# user's: the suite's trainers share their runtime objects there. A
# TCC_CACHE_DIR of your own is kept (set and empty: no cache, as before it).
config.environment["TCC_CACHE_DIR"] = os.environ.get(
    "TCC_CACHE_DIR", os.path.join(config.tcc_obj_root, "tcc-cache"))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# TCC_TEST_DEPENDS (test/CMakeLists.txt): the tools that tcc-test-tools builds.
llvm_config.add_tool_substitutions(config.tcc_tools, [config.tcc_tools_dir])
if config.tcc_have_cuda:
    config.available_features.add("cuda")

# %{gpu}: "gpu" where the NVIDIA driver shows a GPU (tcc compile's default
# target is then cuda, codegen/cuda/CudaBackend.cpp), "no-gpu" otherwise.
def _driver_sees_a_gpu():
    import ctypes
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 \
        and count.value > 0


config.substitutions.append(("%{gpu}", "gpu" if _driver_sees_a_gpu() else "no-gpu"))

# `tcc import` tests need PyTorch and torchvision for the Python tcc import
# runs (TCC_IMPORT_PYTHON, Debian's python3-torch and python3-torchvision).
def _python_has(python, *modules):
    import subprocess
    check = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None " \
            "for m in sys.argv[1:]))"
    try:
        return subprocess.run([python, "-c", check, *modules]).returncode == 0
    except OSError:
        return False


if _python_has(config.tcc_import_python, "torch", "torchvision"):
    config.available_features.add("torch")
config.substitutions.append(("%{import_python}", config.tcc_import_python))
