"""``python -m dpbounds``: the command-line interface."""
from dpbounds.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
