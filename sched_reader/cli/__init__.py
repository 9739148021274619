"""The command-line interface (typer): thin command files over ``cli.runners``.

Importing the CLI turns off pydantic's third-party plugin discovery for this process (unless the user set
``PYDANTIC_DISABLE_PLUGINS`` themselves): the scan reads every installed distribution's entry points on the
first model class (~10-40 ms of start-up per command) and no plugin has business observing sched-reader's own
validation. Library use (``import sched_reader.models``) is untouched.
"""

import os

os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
