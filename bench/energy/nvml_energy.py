"""NVML's total energy counter (nvmlDeviceGetTotalEnergyConsumption) through ctypes, for the reference
programs of bench/energy/ (nvml_energy_log.py, resnet50_steps.py): the driver's libnvidia-ml.so.1,
loaded at run time, one device, reads safe from several threads. Every failure exits with the
program's name, the cause and the fix."""
import ctypes
import threading

LIBRARY_NAMES = ("libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1")


class NvmlEnergy:
    """One GPU's energy counter, in millijoules since the driver loaded."""

    def __init__(self, index, program):
        self.program = program
        lib = None
        for name in LIBRARY_NAMES:
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if lib is None:
            raise SystemExit("%s: libnvidia-ml.so.1 not found; run on a machine with the NVIDIA driver" % program)
        if lib.nvmlInit_v2() != 0:
            raise SystemExit("%s: nvmlInit_v2 failed; check the driver with nvidia-smi" % program)
        self.lib = lib
        self.handle = ctypes.c_void_p()
        if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(self.handle)) != 0:
            raise SystemExit("%s: no NVML device %d; pick one nvidia-smi lists" % (program, index))
        self.lock = threading.Lock()

    def millijoules(self):
        value = ctypes.c_ulonglong()
        with self.lock:
            rc = self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(value))
        if rc != 0:
            raise SystemExit("%s: nvmlDeviceGetTotalEnergyConsumption returned %d" % (self.program, rc))
        return value.value
