"""`python -m collector.cli`."""

from collector.cli import main

main()
