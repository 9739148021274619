"""sched_reader.cli"""
