"""The owner engine: each shard of clusters polled by the one worker holding its lease."""
