"""The environment variables mpvi reads (``MPVI_*``), each validated where it is read.

A value that is not one of the accepted spellings is an :class:`EnvironmentSettingError`
naming the variable, the value and what is accepted -- never silently read as on or off
(``MPVI_COMPILED=abc`` used to mean on); so is an empty value (unset the variable for the
default).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

ON = ("1", "yes", "true", "on")
"""The spellings of a flag that is on (case and surrounding blanks ignored)."""

OFF = ("0", "no", "false", "off")
"""The spellings of a flag that is off."""


class EnvironmentSettingError(ValueError):
    """An ``MPVI_*`` environment variable holds a value mpvi does not accept.  A
    ``ValueError``; the message names the variable, its value and the accepted values."""


def _raw(name: str, accepted: str) -> str | None:
    """The stripped value of ``name``, or None if it is unset; an empty value is an
    :class:`EnvironmentSettingError` (``accepted``: what is, for the message)."""
    raw = os.environ.get(name)
    if raw is None:
        return None
    if not raw.strip():
        raise EnvironmentSettingError(f"{name}={raw!r} is empty: set it to {accepted}, or "
                                      "unset it for the default")
    return raw.strip()


def flag(name: str, default: bool) -> bool:
    """The on/off environment variable ``name`` (``default`` if unset).

    Raises
    ------
    EnvironmentSettingError
        A value that is none of :data:`ON` or :data:`OFF` (an empty one included).
    """
    raw = _raw(name, f"one of {', '.join(OFF + ON)}")
    if raw is None:
        return default
    if raw.lower() in ON:
        return True
    if raw.lower() in OFF:
        return False
    raise EnvironmentSettingError(
        f"{name}={os.environ[name]!r} is not a flag: set it to one of {', '.join(OFF)} (off) "
        f"or {', '.join(ON)} (on), or unset it (default {'on' if default else 'off'})")


def count(name: str, default: int | None, what: str, unset: str = "") -> int | None:
    """The non-negative integer environment variable ``name`` (``default`` if unset);
    ``what`` says what it counts and ``unset`` what happens without it (default: "default
    ``default``"), for the message.

    Raises
    ------
    EnvironmentSettingError
        Anything but decimal digits (an empty value included).
    """
    given = os.environ.get(name)
    if given is None:
        return default
    raw = given.strip()
    if not re.fullmatch(r"[0-9]+", raw, re.ASCII):
        raise EnvironmentSettingError(
            f"{name}={os.environ[name]!r}: must be a non-negative integer ({what}; "
            f"{unset or f'default {default}'})")
    return int(raw)


def directory(name: str, default: Path) -> Path:
    """The directory environment variable ``name`` (``default`` if unset).

    Raises
    ------
    EnvironmentSettingError
        A relative path (it would name another directory in every working directory), an
        empty one or one with a NUL character.
    """
    raw = _raw(name, "an absolute directory path")
    if raw is None:
        return default
    if "\0" in raw or not os.path.isabs(raw):
        raise EnvironmentSettingError(
            f"{name}={os.environ[name]!r}: must be an absolute directory path (a relative one "
            f"would change with the working directory), or unset for {default}")
    return Path(raw)
