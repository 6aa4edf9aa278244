"""Adapters for a deployment's work dir: private files and the config-download git repo."""
