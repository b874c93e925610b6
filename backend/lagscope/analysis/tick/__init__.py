"""One tick's decisions, as one pure function: :func:`judge.judge_tick` over what the cluster's
last ticks left (:mod:`before`) and this tick's polls gives every figure, state and event the
tick records (:mod:`decisions`); ingest/recording.py only loads the before and writes the result.
"""
