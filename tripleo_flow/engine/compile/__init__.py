"""The workflow engine's compile part (README: Layout)."""
