"""The client's version (also in pyproject.toml; the contract test checks they agree)."""

__version__ = "0.3.0"
