"""Data files of the analyzers (lesson claims)."""
