"""``python -m sched_reader`` runs the CLI."""

from sched_reader.cli.entry import main

main()
