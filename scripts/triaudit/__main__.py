"""`python -m triaudit ...`: the triaudit command line (the same as the `triaudit` command)."""

from triaudit.commands import entry

entry()
