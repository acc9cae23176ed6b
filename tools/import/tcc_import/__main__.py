"""`python3 -m tcc_import` (and `tcc import`, which runs this file)."""
import os
import sys

# The package lives in the source tree: leave no __pycache__ there.
sys.dont_write_bytecode = True
if not __package__:
    # Run as a script by `tcc import`: make the package importable.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcc_import.cli import main  # noqa: E402

sys.exit(main())
