"""sched_reader.readers"""
