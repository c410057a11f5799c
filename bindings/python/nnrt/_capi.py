"""Finding and loading libnnrt, and the ctypes signature of every C function the package calls.

Every declaration is one `_declare("nnrt_...", restype, [argtypes])` line, so that
tests/bindings/check_bindings.py can tell which functions of nnrt.h this binding covers (the rest are
in ../left_out.txt with the reason).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from ctypes import POINTER, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint32, c_void_p
from typing import List, Optional

#: The ABI major this package is written against (NNRT_ABI_VERSION in nnrt.h).
ABI_VERSION = 1
MAX_DIMS = 8
SONAME = "libnnrt.so.1"


class Progress(ctypes.Structure):
    """nnrt_progress as nnrt.h lays it out; members after validation_score were added later, so the
    reader checks struct_size before it touches them."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("epoch", c_int32),
        ("iteration", c_int64),
        ("examples_seen", c_int64),
        ("loss", c_double),
        ("learning_rate", c_double),
        ("examples_per_second", c_double),
        ("epoch_end", c_int32),
        ("validation_score", c_double),
        ("batches_per_epoch", c_int64),
        ("batch", c_int64),
        ("device_utilization_percent", c_int32),
        ("device_temperature_celsius", c_int32),
        ("device_memory_used_bytes", c_int64),
        ("device_memory_total_bytes", c_int64),
    ]


PROGRESS_FN = ctypes.CFUNCTYPE(c_int, POINTER(Progress), c_void_p)
TOKEN_FN = ctypes.CFUNCTYPE(c_int, c_int64, c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)
RELEASE_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
ABORT_FN = ctypes.CFUNCTYPE(c_int, c_void_p)

P = c_void_p
PP = POINTER(c_void_p)
STATUS = c_int
SIZE_P = POINTER(c_size_t)

_DECLARATIONS: List[tuple] = []


def _declare(name: str, restype, argtypes) -> None:
    _DECLARATIONS.append((name, restype, argtypes))


# Version and errors
_declare("nnrt_abi_version", c_uint32, [])
_declare("nnrt_version_string", c_char_p, [])
_declare("nnrt_status_name", c_char_p, [c_int])
_declare("nnrt_last_error", c_char_p, [])
_declare("nnrt_set_log_callback", None, [LOG_FN, P, c_int])
_declare("nnrt_dtype_size", c_size_t, [c_int])
# Contexts
_declare("nnrt_context_create", STATUS, [c_char_p, PP])
_declare("nnrt_context_release", None, [P])
_declare("nnrt_context_describe", STATUS, [P, c_char_p, c_size_t, SIZE_P])
# Arrays and ops
_declare("nnrt_array_create", STATUS, [P, c_int, c_int32, POINTER(c_int64), PP])
_declare("nnrt_array_from_host", STATUS, [P, c_int, c_int32, POINTER(c_int64), P, c_size_t, PP])
_declare("nnrt_array_wrap_host", STATUS,
         [P, c_int, c_int32, POINTER(c_int64), POINTER(c_int64), P, c_size_t, RELEASE_FN, P, PP])
_declare("nnrt_array_to_host", STATUS, [P, P, c_size_t])
_declare("nnrt_array_info", STATUS, [P, POINTER(c_int), POINTER(c_int32), POINTER(c_int64)])
_declare("nnrt_array_nbytes", STATUS, [P, SIZE_P])
_declare("nnrt_array_release", None, [P])
_declare("nnrt_op", STATUS, [P, c_char_p, PP, c_int32, c_char_p, PP, c_int32])
# Run options
_declare("nnrt_run_options_create", STATUS, [PP])
_declare("nnrt_run_options_release", None, [P])
_declare("nnrt_run_options_cancel", STATUS, [P])
_declare("nnrt_run_options_reset", STATUS, [P])
_declare("nnrt_run_options_set_timeout", STATUS, [P, c_double])
_declare("nnrt_run_options_set_abort_callback", STATUS, [P, ABORT_FN, P])
# Models
_declare("nnrt_model_create", STATUS, [P, c_char_p, PP])
_declare("nnrt_model_load", STATUS, [P, c_char_p, PP])
_declare("nnrt_model_load_ex", STATUS, [P, c_char_p, P, PP])
_declare("nnrt_model_import_onnx", STATUS, [P, c_char_p, c_char_p, PP])
_declare("nnrt_model_import_onnx_ex", STATUS, [P, c_char_p, c_char_p, P, PP])
_declare("nnrt_model_import_onnx_memory", STATUS, [P, P, c_size_t, c_char_p, PP])
_declare("nnrt_model_export_onnx", STATUS, [P, c_char_p])
_declare("nnrt_model_save", STATUS, [P, c_char_p])
_declare("nnrt_model_share", STATUS, [P, PP])
_declare("nnrt_model_quantize", STATUS, [P, P, c_char_p, PP])
_declare("nnrt_model_release", None, [P])
_declare("nnrt_model_predict", STATUS, [P, P, PP])
_declare("nnrt_model_predict_ex", STATUS, [P, P, P, PP])
_declare("nnrt_model_predict_into", STATUS, [P, P, P, P])
_declare("nnrt_model_output_shape", STATUS, [P, c_int64, POINTER(c_int32), POINTER(c_int64)])
_declare("nnrt_model_predict_many", STATUS, [P, POINTER(P), c_int32, P, POINTER(P), c_int32])
_declare("nnrt_model_input_count", STATUS, [P, POINTER(c_int32)])
_declare("nnrt_model_input", STATUS, [P, c_int32, c_char_p, c_size_t, SIZE_P, POINTER(c_int32), POINTER(c_int64)])
_declare("nnrt_model_output_count", STATUS, [P, POINTER(c_int32)])
_declare("nnrt_model_generate", STATUS,
         [P, POINTER(c_int64), c_size_t, c_char_p, POINTER(c_int64), c_size_t, SIZE_P, TOKEN_FN, P])
_declare("nnrt_model_summary", STATUS, [P, c_char_p, c_size_t, SIZE_P])
_declare("nnrt_model_param_count", STATUS, [P, POINTER(c_int64)])
_declare("nnrt_model_get_param", STATUS, [P, c_char_p, PP])
_declare("nnrt_model_set_param", STATUS, [P, c_char_p, P])
_declare("nnrt_model_evaluate", STATUS, [P, P, PP])
_declare("nnrt_model_evaluate_ex", STATUS, [P, P, P, PP])
# Datasets
_declare("nnrt_dataset_from_arrays", STATUS, [P, P, P, PP])
_declare("nnrt_dataset_load", STATUS, [P, c_char_p, PP])
_declare("nnrt_dataset_size", STATUS, [P, POINTER(c_int64)])
_declare("nnrt_dataset_examples", STATUS, [P, P, c_int64, c_int64, PP, PP])
_declare("nnrt_dataset_release", None, [P])
# Trainers
_declare("nnrt_trainer_create", STATUS, [P, c_char_p, PP])
_declare("nnrt_trainer_rank", STATUS, [P, POINTER(c_int32), POINTER(c_int32)])
_declare("nnrt_trainer_release", None, [P])
_declare("nnrt_trainer_set_progress", STATUS, [P, PROGRESS_FN, P])
_declare("nnrt_trainer_step", STATUS, [P, P, P, POINTER(c_double)])
_declare("nnrt_trainer_fit", STATUS, [P, P, P, c_int32])
_declare("nnrt_trainer_result", STATUS, [P, c_char_p, c_size_t, SIZE_P])
_declare("nnrt_trainer_save", STATUS, [P, c_char_p])
_declare("nnrt_trainer_restore", STATUS, [P, c_char_p])
_declare("nnrt_trainer_cancel", STATUS, [P])
# Evaluations
_declare("nnrt_evaluation_accuracy", STATUS, [P, POINTER(c_double)])
_declare("nnrt_evaluation_report", STATUS, [P, c_char_p, c_size_t, SIZE_P])
_declare("nnrt_evaluation_release", None, [P])


def _pkg_config_dirs() -> List[str]:
    """The library folders pkg-config names for nnrt (an installed nnrt.pc, or a build folder's
    nnrt-uninstalled.pc on PKG_CONFIG_PATH); none without pkg-config."""
    if shutil.which("pkg-config") is None:
        return []
    try:
        out = subprocess.run(["pkg-config", "--libs-only-L", "nnrt"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [flag[2:] for flag in out.stdout.split() if flag.startswith("-L")]


def _in_folder(folder: str) -> Optional[str]:
    for name in (SONAME, "libnnrt.so"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def candidates(path: Optional[str] = None) -> List[tuple]:
    """[(how, library path or name)] in the order they are tried; see find_library."""
    if path is not None:
        path = os.fspath(path)
        return [("the argument", _in_folder(path) or path if os.path.isdir(path) else path)]
    env = os.environ.get("NNRT_LIB_DIR")
    if env:
        # Set but wrong is an error, not a reason to look elsewhere: whoever set it meant that library.
        found = _in_folder(env)
        if found is None:
            raise OSError(f"NNRT_LIB_DIR={env} holds no libnnrt.so")
        return [("NNRT_LIB_DIR", found)]
    tried = []
    for folder in _pkg_config_dirs():
        found = _in_folder(folder)
        if found:
            tried.append(("pkg-config", found))
    # The system loader: LD_LIBRARY_PATH, the ld.so cache, the default folders.
    tried.append(("the system loader", SONAME))
    system = ctypes.util.find_library("nnrt")
    if system:
        tried.append(("ctypes.util.find_library", system))
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = _in_folder(os.path.join(here, "lib"))
    if bundled:
        tried.append(("the copy bundled with the package", bundled))
    # Running from a checkout (bindings/python/nnrt): its meson build folder.
    checkout = _in_folder(os.path.join(here, "..", "..", "..", "build"))
    if checkout:
        tried.append(("the checkout's build folder", os.path.normpath(checkout)))
    return tried


class Library:
    """libnnrt loaded, its functions declared, and how it was found."""

    def __init__(self, cdll: ctypes.CDLL, how: str, path: str):
        self.cdll, self.how, self.path = cdll, how, path
        for name, restype, argtypes in _DECLARATIONS:
            fn = getattr(cdll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        abi = self.nnrt_abi_version()
        if abi != ABI_VERSION:
            raise OSError(f"{path} has nnrt ABI {abi}; this package needs ABI {ABI_VERSION}")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p), ("dli_sname", c_char_p), ("dli_saddr", c_void_p)]


def _loaded_file(cdll: ctypes.CDLL, name: str) -> str:
    """The file the loader opened for `name` (a bare soname says little), asked of dladdr; the name
    itself where dladdr is not to be had."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [c_void_p, POINTER(_DlInfo)]
        info = _DlInfo()
        if dladdr(ctypes.cast(cdll.nnrt_abi_version, c_void_p), ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    except (AttributeError, OSError):
        pass
    return name


def load(path: Optional[str] = None) -> Library:
    """Loads the first library candidates() names that loads; OSError naming every attempt if none."""
    failures = []
    for how, where in candidates(path):
        try:
            cdll = ctypes.CDLL(where)
        except OSError as e:
            failures.append(f"{how} ({where}): {e}")
            continue
        return Library(cdll, how, _loaded_file(cdll, where))
    raise OSError("cannot load libnnrt: " + "; ".join(failures) +
                  ". Set NNRT_LIB_DIR to the folder holding libnnrt.so, put nnrt.pc on PKG_CONFIG_PATH, "
                  "install nnrt where the system loader finds it, or call nnrt.load_library(path).")


_lib: Optional[Library] = None


def lib() -> Library:
    """The loaded library, loading it on first use."""
    global _lib
    if _lib is None:
        _lib = load()
    return _lib


def load_library(path: Optional[str] = None) -> Library:
    """Loads libnnrt from `path` (the library file, or a folder holding it) or, without one, in the
    order the package README gives. Once a library is loaded another cannot replace it (handles made
    by one must not reach the other): loading the same file again returns it, another is an error."""
    global _lib
    if _lib is None:
        _lib = load(path)
        return _lib
    if path is not None:
        wanted = os.fspath(path)
        wanted = _in_folder(wanted) or wanted if os.path.isdir(wanted) else wanted
        if os.path.realpath(wanted) != os.path.realpath(_lib.path):
            raise RuntimeError(f"libnnrt is already loaded from {_lib.path}; cannot switch to {wanted}")
    return _lib
