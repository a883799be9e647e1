"""`python -m demo …`: the same commands as `qpipe-demo`."""

from demo.cli import app

app(prog_name="qpipe-demo")
