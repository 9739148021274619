"""sched_reader.models"""
