"""Commands and captures: :class:`Step` (``step(...)``), a contenox command and what must
hold of it, optionally capturing values later steps use as ``"{name}"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ...checks import check_step
from .. import containment
from ..action import (
    Action,
    CaseError,
    Expect,
    _builds,
    _relative,
    _strings,
    _timeout,
    _tuple,
    written_in,
)

if TYPE_CHECKING:
    from ..run import Run


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True, kw_only=True)
class Step(Expect, Action):
    """One contenox command and what must hold of it (see :class:`Expect`).

    ``full_stderr`` puts the whole redacted stderr in the transcript, not only
    the notices. ``args``, ``stdin`` and ``env`` values may hold placeholders.
    """

    kind: ClassVar[str] = "step"
    args: Sequence[str]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    full_stderr: bool = False
    # Where the command runs, relative to the scratch root (``work/src``,
    # ``tmp/other-project``); created if absent. None: the workspace.
    cwd: str | None = None

    def _prepare(self) -> None:
        # Types, NUL bytes and env overrides that would leave the scratch root,
        # checked on the fields as written, before they are normalised.
        try:
            check_step(self, CaseError)
        except CaseError as err:
            raise CaseError(f"{written_in(self.kind)}{err}") from None
        if not isinstance(self.args, str):
            object.__setattr__(self, "args", _tuple(self.args))
        object.__setattr__(self, "env", dict(self.env))
        self._normalise()

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if isinstance(self.args, str):
            raise problem(
                "args",
                f"must be a list of arguments, not one string {self.args!r}; "
                "write step('run', '--policy', 'run', 'the task')",
            )
        if not self.args:
            raise problem(
                "args", "is empty: a Step needs a contenox command, e.g. step('mission', 'list')"
            )
        _strings(self.args, "args", problem)
        if self.stdin is not None and not isinstance(self.stdin, str):
            raise problem("stdin", f"must be a string, got {self.stdin!r}")
        for key, value in self.env.items():
            if not isinstance(value, str):
                raise problem(f"env[{key!r}]", f"must be a string, got {value!r}")
        _timeout(self.timeout, "timeout", problem)
        if self.cwd is not None:
            _relative(self.cwd, "cwd", problem)
        self._check_expect(problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        for arg in self.args:
            yield "args", arg
        yield "stdin", self.stdin
        for key, value in self.env.items():
            yield f"env[{key!r}]", value
        yield "cwd", self.cwd
        yield from self._expect_texts()

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        cwd = None
        if self.cwd is not None:
            # The transcript says where the command ran: a bare argv would read
            # as if it ran in the workspace.
            rel = run.fill(self.cwd)
            root = run.instance.root
            with run.touching("cwd", self.cwd):
                cwd = run.path("cwd", self.cwd, root, "dir")
                containment.make_dirs(cwd, root)
                if not cwd.is_dir():
                    raise containment.Escape("is not a directory", str(cwd))
            run.instance.recorder.note(f"in {rel}/")
        result = run.instance.contenox(
            *[run.fill(a) for a in self.args],
            stdin=run.fill(self.stdin) if self.stdin is not None else None,
            env={k: run.fill(v) for k, v in self.env.items()},
            cwd=cwd,
            timeout=self.timeout,
            full_stderr=self.full_stderr,
        )
        run.check(self, result)


@_builds(Step)
def step(*args: str, **expect: Any) -> Step:
    """A :class:`Step` for ``contenox <args>``; keywords are its expectations.

    >>> step("mission", "list", capture={"mission": column("ID")})
    >>> step("mission", "show", "{mission}", stdout_has=["landed"])
    """
    return Step(args=args, **expect)
