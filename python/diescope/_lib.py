"""Loads libdiescope-c.so (include/diescope/capi/diescope_c.h) through ctypes.

ctypes needs no compiler and no Python headers, and the library's plain C interface loads under any
Python 3, which is why the module is built this way (docs/python.md#why-a-c-api-and-ctypes).
"""
import ctypes
import json
import os

from . import errors

API_VERSION = 1  # src/capi/capi_internal.hpp, kApiVersion

_LIB_NAME = "libdiescope-c.so"
_lib = None


def _find_library():
    # DIESCOPE_LIBRARY names the library; otherwise it sits beside this file (the build tree's
    # python/diescope/ folder, or wherever the package was copied with it).
    named = os.environ.get("DIESCOPE_LIBRARY")
    if named:
        return named
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIB_NAME)


def _declare(lib):
    c_char_p, c_int, c_void_p = ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p
    # Strings the library allocates come back as c_void_p so that they can be freed.
    lib.ds_api_version.restype = c_int
    lib.ds_versions_json.restype = c_void_p
    lib.ds_last_error_json.restype = c_char_p
    lib.ds_free_string.argtypes = [c_void_p]
    lib.ds_report_of_recording.argtypes = [c_char_p, c_char_p, c_int]
    lib.ds_report_of_recording.restype = c_void_p
    lib.ds_load_report.argtypes = [c_char_p]
    lib.ds_load_report.restype = c_void_p
    lib.ds_samples_of_recording.argtypes = [c_char_p, c_int]
    lib.ds_samples_of_recording.restype = c_void_p
    lib.ds_table_free.argtypes = [c_void_p]
    lib.ds_table_rows.argtypes = [c_void_p]
    lib.ds_table_rows.restype = ctypes.c_int64
    lib.ds_table_columns_json.argtypes = [c_void_p]
    lib.ds_table_columns_json.restype = c_void_p
    lib.ds_table_copy_f64.argtypes = [c_void_p, c_int, c_void_p]
    lib.ds_table_copy_f64.restype = c_int
    lib.ds_table_copy_i64.argtypes = [c_void_p, c_int, c_void_p]
    lib.ds_table_copy_i64.restype = c_int
    lib.ds_table_text_json.argtypes = [c_void_p, c_int]
    lib.ds_table_text_json.restype = c_void_p
    lib.ds_spans_of_recording.argtypes = [c_char_p, c_void_p, c_void_p, ctypes.c_int64, c_int]
    lib.ds_spans_of_recording.restype = c_void_p
    lib.ds_measure_start.argtypes = [c_char_p]
    lib.ds_measure_start.restype = c_void_p
    lib.ds_measure_marker.argtypes = [c_void_p, c_char_p]
    lib.ds_measure_marker.restype = c_int
    lib.ds_measure_stop.argtypes = [c_void_p]
    lib.ds_measure_stop.restype = c_void_p
    lib.ds_measure_free.argtypes = [c_void_p]
    lib.ds_report_run.argtypes = [c_char_p, c_char_p, c_int, c_char_p]
    lib.ds_report_run.restype = c_void_p


def lib():
    """The loaded library; raises diescope.Error with the fix when it cannot be loaded."""
    global _lib
    if _lib is not None:
        return _lib
    path = _find_library()
    try:
        loaded = ctypes.CDLL(path)
    except OSError as e:
        raise errors.Error(
            "cannot load diescope's C library %s: %s" % (path, e),
            "build it (cmake --build build/release --target diescope_capi) and import diescope from "
            "build/release/python, or set DIESCOPE_LIBRARY to the libdiescope-c.so to use",
            3, "input") from None
    _declare(loaded)
    version = loaded.ds_api_version()
    if version != API_VERSION:
        raise errors.Error(
            "%s has C API version %d; this Python module speaks version %d" % (path, version, API_VERSION),
            "use the Python files and the library of the same build", 3, "input")
    _lib = loaded
    return _lib


def encode(text):
    return None if text is None else os.fsencode(text)


def raise_last():
    """Raises the library's last error on this thread as the matching exception."""
    text = lib().ds_last_error_json()
    if not text:
        raise errors.Error("diescope's C library failed without saying why",
                           "please report this with the call you made", 70, "internal")
    raise errors.from_json(json.loads(text.decode("utf-8", "replace")))


def take_string(pointer):
    """The text of a library-allocated string, freed; raises the last error when it is NULL."""
    if not pointer:
        raise_last()
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib().ds_free_string(pointer)


def take_json(pointer):
    return json.loads(take_string(pointer))
