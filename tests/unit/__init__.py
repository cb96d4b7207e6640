"""In-process tests of one part at a time: `pytest -m unit` runs this fast tier alone."""
