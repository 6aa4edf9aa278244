"""The workflow engine's lang part (README: Layout)."""
