"""The package version (one place; low enough that any layer may import it)."""
__version__ = "0.1.0"
