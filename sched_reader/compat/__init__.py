"""sched_reader.compat"""
