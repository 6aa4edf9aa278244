"""Adapters for a deployment's work dir: private files and the config-download git repo;
and the backup archive of the whole data directory (:mod:`.backup_archive`)."""
