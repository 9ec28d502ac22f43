"""What a LiveBind server refused, as exceptions."""


class LiveBindError(Exception):
    """The server refused a request: `status` and its `application/problem+json` (`problem`)."""

    def __init__(self, status, problem=None):
        self.status = status
        self.problem = problem if isinstance(problem, dict) else {"detail": str(problem or "")}
        super().__init__(f"{status}: {self.problem.get('detail') or self.problem.get('title') or ''}")


class ConflictError(LiveBindError):
    """A write was refused because the model changed since the revision it was made against (412),
    or does not apply to the model as it is now (409, 422). A mirror has rolled its local copy back."""
