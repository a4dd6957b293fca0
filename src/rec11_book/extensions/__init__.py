"""The book's Sphinx extensions: each module here is listed in _config.yml's
``extra_extensions`` and has a ``setup(app)``. An extension imports Sphinx, the shared
modules (``rec11_book.shared``) and the seam to other packages' internals
(``rec11_book.compat``), never another extension: what one needs from another comes through a
Sphinx event. docs/architecture.md has the order they run in."""
