"""diescope from Python: read recordings and reports as DataFrames, and measure training steps from
inside the program (docs/python.md).

    import diescope
    samples, report, units = diescope.read_recording("gpu0.dsrec")
    with diescope.measure() as m:
        for batch in loader:
            train_step(batch)
            m.step()
    m.steps      # one row per step: time, DIE-Util, GPU-Util, gap, limiting unit, energy
"""
from .errors import DeviceError, Error, InputError, UsageError
from .reading import Recording, Report, read_recording, read_report, span_figures, unit_table
from .tables import Table, pandas_available

__all__ = ["read_recording", "read_report", "span_figures", "unit_table", "Recording", "Report", "Table",
           "pandas_available", "Error", "InputError", "UsageError", "DeviceError"]

try:
    from .measure import Measurement, measure  # noqa: F401
    __all__ += ["measure", "Measurement"]
except ImportError:  # pragma: no cover - measure.py is part of the package
    pass
