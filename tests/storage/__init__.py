"""Tests of swath.storage."""
