"""The triangle at a glance: each card's headline figure per corner (headline.py), the three
accounts as fractions drawn side by side (triangle.py), which corner binds named workloads
(workloads.py) and a sentence per pair of cards (pairs.py). The report's first section
(section.py) and summary.md are made of them."""
