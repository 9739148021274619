"""sched_reader.report"""
