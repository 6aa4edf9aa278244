"""The workflow engine's jobs part (README: Layout)."""
