"""The errors cao-workflows raises; each is a ``CaoError`` subclass, so the server answers with its
HTTP status and the CLI prints its message."""

from __future__ import annotations

from cao_hookspecs.errors import AgentFailed, CaoError, Conflict, InvalidInput, NotFound


class WorkflowFileError(InvalidInput):
    """A workflow file that cannot be run: missing, not a Python file, a syntax error, no ``workflow``
    function, or a profile it names that does not exist."""


class BadRunInput(InvalidInput):
    """A run id, an input or a limit that breaks the rules (the message says which rule)."""


class RunNotFound(NotFound):
    """No workflow run has this id."""


class RunStateConflict(Conflict):
    """The run is not in a state that allows the request (approving a run that asks nothing...)."""


class StepFailed(AgentFailed):
    """An agent step ended in error, or its terminal disappeared before it answered."""


class StepTimedOut(StepFailed):
    """An agent step's worker gave no answer within the step's timeout."""

    http_status = 504


class StaleGeneration(Conflict):
    """A step call from an earlier attempt of a script run (the run's script has been started again
    since, after a server restart): the newer attempt owns the run's steps."""


class ScriptFailed(CaoError):
    """A workflow script exited with an error, ran past its time, or printed a result that is not JSON
    where a result was required; the message holds the end of what it wrote to stderr."""


class WorkflowsUnavailable(CaoError):
    """The workflow engine cannot run in this process (another kernel owns it)."""

    http_status = 503
