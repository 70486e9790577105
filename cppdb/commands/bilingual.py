"""Commands of this area (registered into the main app by cppdb.cli)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
