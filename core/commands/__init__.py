"""The commands of ``python -m core``: their bodies, the parser and how an answer is
written. Shared by the two front ends that run them: the terminal (``core.__main__``)
and the app's loopback endpoint, for a CLI beside the running app (``handover``)."""
