"""The workflow engine's store part (README: Layout)."""
