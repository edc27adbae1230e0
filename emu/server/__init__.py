"""`python -m emu serve`: an opt-in warm server that runs emu commands in forked children.

A cold `python -m emu` spends most of its time importing (pydantic, unicorn, yaml, emu's
models); the run itself takes milliseconds.  The server imports and warms everything once,
then serves each `python -m emu ...` by forking a child that runs the command line exactly
as a fresh process would: the client's argv, working folder, environment, umask and its own
stdin/stdout/stderr (passed as file descriptors), with the exit code handed back.

    address.py   where the socket lives (a private 0700 folder) and the compatibility key
    protocol.py  length-prefixed JSON messages, with file descriptors (SCM_RIGHTS)
    client.py    what `python -m emu` does first: use a live, compatible server, else nothing
    serve.py     the server: preload, listen, fork each request's child before it comes (a spare), report exit codes
    warm.py      what the server imports and builds once (never runs anything)
    child.py     what a forked child does to look like a fresh process, then runs emu.commands.cli

client.py and address.py import only the standard library: they run before anything heavy.
"""
