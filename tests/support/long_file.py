"""The long file the marks tests edit: a session rewrites `compute_total` in the middle of 125 lines,
so a mark on the edited lines (60-62) is told apart from one on the whole file."""

LONG_BEFORE = "".join(f"def helper_{n}(x):\n    return x + {n}\n\n\n" for n in range(15))  # 60 lines
EDITED_OLD = "def compute_total(items):\n    return 0\n"
EDITED_NEW = "def compute_total(items):\n    subtotal = sum(i.price for i in items)\n    return round(subtotal, 2)\n"
LONG = LONG_BEFORE + EDITED_NEW + "\n\n" + LONG_BEFORE.replace("helper_", "tail_")  # the edit at lines 60-62
