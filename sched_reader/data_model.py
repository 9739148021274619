"""``DataModel``: the base of every pydantic model in sched-reader.

Its one setting, ``defer_build``, makes pydantic build a model's validation schema when the model is first
used rather than when its module is imported. A command imports many modules whose models it never
instantiates (explain-log's log records in ``diagnose``, the tune sweep's points in ``config`` ...); building
~45 schemas up front cost about a quarter of the CLI's import time. Behaviour is otherwise pydantic's own:
a subclass's ``model_config`` is merged over this one.

The modules that define models do not use ``from __future__ import annotations``: pydantic would turn each
string annotation into a ForwardRef, compile and evaluate it (~330 of them in a ``diagnose``, ~1.3% of that
process's instructions). A model's annotations are types (``tests/cli/test_startup_costs.py`` checks).
"""

from pydantic import BaseModel, ConfigDict


class DataModel(BaseModel):
    """A pydantic model whose schema is built on first use (see the module docstring)."""

    model_config = ConfigDict(defer_build=True)


# Default factories for fields that start empty: ``Field(default_factory=new_list)`` rather than
# ``Field(default_factory=list)``. Pydantic asks each factory's signature (does it take the validated data?)
# when it builds a schema; for a builtin type that means parsing its text signature with ``tokenize`` and
# ``ast``: about 1 ms per field, ~20 ms of a ``diagnose`` process over its ~25 such fields (the first one also
# compiles tokenize's regular expressions). A plain function's signature is read from its code object.
def new_list() -> list:
    """A new empty list."""
    return []


def new_dict() -> dict:
    """A new empty dict."""
    return {}
