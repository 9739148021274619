"""sched-reader: predict what vLLM's scheduler does with a deploy config, before a GPU is rented."""

__version__ = "0.1.0"
