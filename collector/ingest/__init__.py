"""Ingest: find result trees, parse every log format, read system descriptions and published
studies, check compliance, and write it all into the store."""
