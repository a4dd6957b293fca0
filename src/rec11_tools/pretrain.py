"""Train every model the book's pages use: ``python -m rec11_tools.pretrain`` from the book's root.

It runs each page's code cells (``rec11_tools.run_pages``), so the model cache ends up
holding exactly the models the pages ask for. Binder's postBuild calls it, so that
live cells load models instead of training them on a slow CPU.
"""

import sys

from rec11_tools.run_pages import main

if __name__ == "__main__":
    sys.exit(main([]))
