"""The book's commands, run as ``python -m rec11_book.commands.<name>`` (the Makefile's
targets call them): build, preview, handout, quickstart, and preexecute (a step of build).
A command may import extensions and shared modules; no extension imports a command."""
