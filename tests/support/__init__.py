"""Test doubles that speak real wire protocols (see fake_anthropic.py)."""
