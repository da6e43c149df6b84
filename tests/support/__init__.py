"""Shared helpers of the test tiers: paths, handler loading, runtime injection, AWS fakes."""
