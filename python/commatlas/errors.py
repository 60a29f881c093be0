"""The two ways a command ends early: the user asked for something impossible, or something broke.

cli.main turns both into one line on stderr (`commatlas: error: ...`) and an exit status, so
no traceback ever reaches a user.
"""


# The exit status of a command the user interrupted (Ctrl-C): 128 + SIGINT, as a shell reports it.
EXIT_INTERRUPTED = 130


class CommatlasError(Exception):
    """Something failed while doing what was asked (exit status 1)."""

    exit_status = 1


class UsageError(CommatlasError):
    """The request cannot be honoured as given: bad option, missing backend (exit status 2)."""

    exit_status = 2
