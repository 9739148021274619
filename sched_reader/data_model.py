"""``DataModel``: the base of every pydantic model in sched-reader.

Its one setting, ``defer_build``, makes pydantic build a model's validation schema when the model is first
used rather than when its module is imported. A command imports many modules whose models it never
instantiates (explain-log's log records in ``diagnose``, the tune sweep's points in ``config`` ...); building
~45 schemas up front cost about a quarter of the CLI's import time. Behaviour is otherwise pydantic's own:
a subclass's ``model_config`` is merged over this one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class DataModel(BaseModel):
    """A pydantic model whose schema is built on first use (see the module docstring)."""

    model_config = ConfigDict(defer_build=True)
