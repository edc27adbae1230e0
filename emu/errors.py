"""The errors emu reports to users, each with the exit code the CLI gives it.

Every failure a user can cause (a bad file, a bad scenario) or observe (a loader that
faults) is one of these, so the CLI can print one paragraph and exit with a code that
says what happened, never a traceback.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_EXPECTATION_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_FAULT = 3
EXIT_INTERNAL = 4


class EmuError(Exception):
    """Base of every error emu reports; `exit_code` is what the CLI exits with."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, path: str | None = None):
        self.message = message
        self.path = path
        super().__init__(self.render())

    def render(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class BadInput(EmuError):
    """The user gave emu something it cannot use (exit 2)."""


class ObjectFormatError(BadInput):
    """The object file is not an ELF relocatable object emu can load."""

    @classmethod
    def unreadable(cls, path: str, error: OSError) -> "ObjectFormatError":
        """The file cannot be opened or read (the one wording, whichever step found it)."""
        return cls(f"cannot read the object file: {error.strerror or error}", path=path)


class RelocationError(ObjectFormatError):
    """A relocation cannot be applied; the message names type, section, offset and symbol."""


class ScenarioError(BadInput):
    """The scenario file is unreadable or invalid; the message names file, line and field."""


class BuildError(BadInput):
    """A scenario's kernel could not be exported with the installed nvidia-cutlass-dsl."""


class DslNotInstalled(BuildError):
    """A scenario builds its object, and nvidia-cutlass-dsl is not installed (pytest skips it)."""


class UnknownFormatWarning(UserWarning):
    """`emu.trace` ran an export whose format or metadata emu does not know (ObjectRun.format_warning says why);
    `warnings.simplefilter("error", UnknownFormatWarning)` makes it an exception."""


class StubFailure(Exception):
    """A stub could not do its job (an unreadable argument, an unwritable out-pointer): the entry stops with a
    `stub_error` fault, or with the fault kind the exception names (emu.stubs.libc's exit and abort)."""


class StubStop(StubFailure):
    """A stub call ends the entry with a fault of `kind` whose message the stub layer words whole (a call to a
    symbol nothing models, under the default missing_symbols policy)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
