"""diescope's errors as Python exceptions: the same cause, fix and exit code as the command line
prints for the same failure (docs/python.md#errors)."""


class Error(Exception):
    """A failure diescope names with its cause and its fix.

    cause: what went wrong; fix: what to do about it; exit_code: the code `diescope` exits with for
    the same failure (2 usage, 3 a file, 4 the device, 70 a bug).
    """

    def __init__(self, cause, fix="", exit_code=1, kind="error"):
        self.cause = cause
        self.fix = fix
        self.exit_code = exit_code
        self.kind = kind
        super().__init__(cause + ("\n  fix: " + fix if fix else ""))


class InputError(Error, ValueError):
    """A file that is missing, unreadable or not what it claims to be (exit code 3)."""


class UsageError(Error, ValueError):
    """A bad argument (exit code 2)."""


class DeviceError(Error, RuntimeError):
    """No GPU, no driver, or the counters may not be read (exit code 4)."""


_KINDS = {"input": InputError, "usage": UsageError, "device": DeviceError}


def from_json(e):
    cls = _KINDS.get(e.get("kind"), Error)
    return cls(e.get("cause", ""), e.get("fix", ""), e.get("exit_code", 1), e.get("kind", "error"))
