"""Parsers: one per source format, each turning raw bytes into validated records or failures.

The demo loader and the live harvesters use the same parsers.
"""
