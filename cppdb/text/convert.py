"""Traditional -> simplified Chinese conversion with OpenCC (registry capability "converter")."""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

from cppdb.errors import BackendUnavailableError, ConfigError
from cppdb.registry import Backend

#: OpenCC profiles that produce simplified or traditional Chinese (see the OpenCC docs)
KNOWN_PROFILES = ("t2s", "tw2s", "tw2sp", "hk2s", "s2t", "s2tw", "s2twp", "s2hk", "t2tw",
                  "t2hk", "tw2t", "hk2t", "jp2t", "t2jp")


class OpenCCConverter(Backend):
    """Script conversion with OpenCC; ``profile`` is an OpenCC config name (default t2s)."""

    name: ClassVar[str] = "opencc"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("opencc", "opencc"),)
    install_hint: ClassVar[str] = "pip install opencc"
    description: ClassVar[str] = "OpenCC script conversion (traditional -> simplified)"

    def __init__(self, profile: str = "t2s") -> None:
        if profile.removesuffix(".json") not in KNOWN_PROFILES:
            raise ConfigError(f"unknown OpenCC profile '{profile}'",
                              hint=f"choose one of: {', '.join(KNOWN_PROFILES)}")
        self.profile = profile.removesuffix(".json")
        self._impl: Any = None

    def _converter(self) -> Any:
        if self._impl is None:
            self.check()
            try:
                import opencc
            except ImportError as exc:  # pragma: no cover - check() covers the usual case
                raise BackendUnavailableError(f"cannot import opencc: {exc}",
                                              hint=self.install_hint) from exc
            self._impl = opencc.OpenCC(self.profile)
        return self._impl

    def convert_one(self, text: str) -> str:
        return self._converter().convert(text)

    def convert(self, texts: Sequence[str]) -> list[str]:
        impl = self._converter()
        return [impl.convert(text) for text in texts]

    def signature(self) -> str:
        return f"{self.name}:{self.profile}[{self.version()}]"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "profile": self.profile}


@lru_cache(maxsize=8)
def default_converter(profile: str = "t2s") -> OpenCCConverter:
    """A shared converter per profile (OpenCC loads its dictionaries once per process)."""
    return OpenCCConverter(profile)
