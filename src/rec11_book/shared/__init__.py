"""Modules that both the extensions and the commands use: the pages' cells and front matter
(pages, pagefacts), the figures' files, the plain-Markdown writer, the why-did-it-run record.
A shared module imports no extension and no command."""
