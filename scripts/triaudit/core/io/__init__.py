"""The one way in and out: every path a command reads or writes goes through this layer, which owns
the rules once (a command declares which of its options are inputs and outputs in its Row, and
gets them all):

- an input is a regular file or a folder; a FIFO, a socket or a device is refused before it is
  opened (it would block or never end), and so is an empty path, a missing one, a symbolic link
  loop, a folder where a file is wanted and back (checks.py);
- an output folder is never an input, inside one or above one, nor a run folder (report, compare
  and history would read what is written there as results); it is replaced whole by an atomic
  rename, and only the files the tool itself wrote, listed inside that folder, are ever removed
  (outputs.py);
- an output file is replaced whole (temporary name, rename) and only when this command wrote it;
  an append target (`--markdown`) is never a file inside an input;
- a permission or space error is exit 2 with the path named (errors.py); an interrupt is exit 130,
  the output whole or absent (interrupts.py); worker processes ignore Ctrl-C, only the parent
  handles it.

Standard library only: `run`, `doctor` and `soak` use it on bare GPU machines.
"""
