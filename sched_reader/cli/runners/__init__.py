"""What each command does once its options are parsed: call the analyzers, pick a formatter, return the
exit code. A command file (``cli/cmd_*.py``) imports its runner lazily, in the command body, so that
``sched-reader --help`` and the light commands never pay for numpy, pydantic or rich; a runner imports
everything it needs at module level.
"""
