"""One base error and a few specific ones.

Every message says what went wrong, where, and how to fix it.  Codes are stable so that
users can search for them and tests can assert on them.
"""
from __future__ import annotations


class CppdbError(Exception):
    """Base class of every error cppdb raises on purpose."""

    code = "E000"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        text = f"[{self.code}] {message}"
        if hint:
            text += f"\n  How to fix: {hint}"
        super().__init__(text)


class ConfigError(CppdbError):
    """The configuration (TOML file or ``--set`` override) is invalid."""

    code = "E100"


class BadInputError(CppdbError):
    """An input file is missing, empty, corrupt, mis-encoded or inconsistent."""

    code = "E200"


class BackendUnavailableError(CppdbError):
    """A backend's Python package (or a system dependency) is not installed."""

    code = "E300"


class ModelNotFoundError(CppdbError, FileNotFoundError):
    """A full-model backend is installed but its model files are not on disk."""

    code = "E310"


class ModelFetchError(CppdbError):
    """`cppdb models fetch` cannot download (no internet, unknown model)."""

    code = "E320"


class RunStateError(CppdbError):
    """A run directory is inconsistent with the requested operation."""

    code = "E400"


class RunMismatchError(RunStateError):
    """A run directory was made with other settings, inputs or models (``--fresh`` redoes it)."""


class OutputPathError(CppdbError):
    """An output path cannot be written (missing permission, wrong kind, foreign data)."""

    code = "E500"


class RunInterrupted(BaseException):
    """Ctrl-C or SIGTERM: finished stages are kept.  A BaseException (like KeyboardInterrupt)
    so that library code catching ``Exception`` cannot swallow or re-wrap it."""

    code = "E600"

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"[{self.code}] {message}")
