"""The interactive terminal: `stayer` with no `-p` on a terminal (see `app`)."""
