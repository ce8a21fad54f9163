"""`python -m stayer` runs the command line."""

from stayer.cli import main

main()
