"""sched_reader.analyzers"""
