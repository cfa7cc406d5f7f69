"""Peer tools' outputs (nccl-tests, nvbandwidth, BabelStream, mamf-finder) read into triaudit's names
and written as Google Benchmark-shaped run folders (`triaudit import`); standard library only."""
