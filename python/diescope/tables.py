"""Tables as pandas DataFrames when pandas can be imported, otherwise as diescope.Table
(docs/python.md#dataframes-and-the-fallback)."""
import array
import os

try:
    import numpy as _np
except ImportError:  # the fallback works without numpy too
    _np = None

try:
    import pandas as _pd
except ImportError:
    _pd = None


def pandas_available():
    """True when tables come back as pandas DataFrames: pandas imports and DIESCOPE_FRAMES is not
    'table'."""
    return _pd is not None and os.environ.get("DIESCOPE_FRAMES", "auto") != "table"


class Table(dict):
    """The fallback for a DataFrame: column name -> column, in order.

    A numeric column is a numpy array (float64 or int64), or an array.array ('d' or 'q') where numpy
    is missing; a text column is a list of str. `rows` is the number of rows, `units` maps each column
    to its unit. `to_pandas()` makes the DataFrame once pandas is there.
    """

    def __init__(self, columns=(), units=None, rows=None):
        super().__init__(columns)
        self.units = dict(units or {})
        if rows is None:
            rows = len(next(iter(self.values()))) if self else 0
        self.rows = rows

    @property
    def columns(self):
        return list(self.keys())

    def row(self, i):
        """Row i as a dict."""
        return {name: column[i] for name, column in self.items()}

    def to_pandas(self):
        if _pd is None:
            raise ImportError("pandas is not installed: install it (Debian: apt-get install python3-pandas) "
                              "or keep using this Table")
        frame = _pd.DataFrame({k: list(v) if isinstance(v, array.array) else v for k, v in self.items()})
        frame.attrs["units"] = dict(self.units)
        return frame

    def __repr__(self):
        return "diescope.Table(%d rows: %s)" % (self.rows, ", ".join(self.keys()))


def numeric(values, typecode):
    """A numeric column from a sequence of values: numpy when present, else array.array."""
    if _np is not None:
        return _np.asarray(values, dtype=_np.float64 if typecode == "d" else _np.int64)
    return array.array(typecode, values)


def empty_numeric(rows, typecode):
    if _np is not None:
        return _np.empty(rows, dtype=_np.float64 if typecode == "d" else _np.int64)
    return array.array(typecode, bytes(8 * rows))


def buffer_address(column):
    """The address of a numeric column's memory, for the C library to fill."""
    if _np is not None:
        return column.ctypes.data
    address, _ = column.buffer_info()
    return address


def make(columns, units=None, rows=None):
    """A DataFrame (pandas present) or a Table from an ordered dict of columns."""
    table = Table(columns, units, rows)
    return table.to_pandas() if pandas_available() else table


def from_records(records, names, units=None):
    """A table from a list of dicts (text or numbers); a missing value is NaN (numbers) or ''."""
    columns = {}
    for name in names:
        values = [r.get(name) for r in records]
        if all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            columns[name] = numeric([float("nan") if v is None else float(v) for v in values], "d")
        else:
            columns[name] = ["" if v is None else v for v in values]
    return make(columns, units, len(records))
