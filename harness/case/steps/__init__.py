"""The step types a :class:`~harness.case.Case` is composed of: a small closed set, one job each.

Every step is a frozen dataclass; a Case's ``steps`` run in order against one
instance and each writes what it did to ``instance.recorder``:

- :class:`Step` (``step(...)``): a contenox command and what must hold of it,
  optionally capturing values (``capture={"mission": column("ID")}``) that
  later steps use as ``"{mission}"``;
- :class:`Background` / :class:`Wait` / :class:`Signal`: a contenox command
  started under a name, ended later with the same expectations as a command;
- :class:`AwaitAsk` / :class:`Respond`: a pending ask, captured by name, and
  the verdict given on it through ``approvals respond``;
- :class:`Write` / :class:`EditDialog`: a file changed between steps;
- :class:`Prompt`: a prompt over an ACP session, with a ruling policy;
- :class:`Screen` / :class:`Keys`: ``beam`` (or any command) under a terminal;
- :class:`Probe`: a value read through contenox's own commands, with an
  optional typed expectation.

Defined from the start: ``{work}``, ``{home}``, ``{tmp}`` and ``{root}`` (the
scratch workspace, HOME, TMPDIR and the root above them), ``{dialog}`` (the
default backend's dialog file) and ``{dialog_<backend>}``.

One module per family, each re-exported here (import from ``harness.case.steps``
or ``harness.case``): ``commands`` (step, captures), ``background`` (background,
wait, signal), ``asks`` (await_ask, respond), ``files`` (write, edit, remove,
link, edit_dialog), ``acp`` (prompt, acp_turn), ``terminal`` (screen, keys),
``probes`` (probe, output_of, satisfies) and ``servers`` (serve, received,
model_saw). What they share is below them: :mod:`harness.case.action` (the
step base, captures, expectations), :mod:`harness.case.placeholders` and
:class:`harness.case.run.Run`, what a step acts on.

Everything is checked when the Case is built (see ``harness.case.model``); the
runner (``harness.case.runner``) only executes, and each path a step touches is
resolved again when it runs (``harness.case.containment``).
"""

from __future__ import annotations

from ..action import (
    MAX_TIMEOUT,
    Action,
    Capture,
    CaseError,
    Column,
    Expect,
    Group,
    JsonPath,
    column,
    group,
    json_path,
    written_in,
)
from ..action import (
    _builds as _builds,
)
from ..action import (
    _unencodable as _unencodable,
)
from ..placeholders import (
    PLACEHOLDER,
    Expectation,
    fill,
    fill_expectation,
    found,
    placeholders,
    shown,
)
from .acp import AcpTurn, Prompt, Ruling, acp_turn, prompt
from .asks import AwaitAsk, Respond, await_ask, respond
from .background import Background, Signal, Wait, background, signal, wait
from .commands import Step, step
from .files import (
    Edit,
    EditDialog,
    Link,
    Remove,
    Write,
    edit,
    edit_dialog,
    link,
    names_a_directory,
    remove,
    write,
)
from .probes import _NOTHING as _NOTHING
from .probes import Predicate, Probe, output_of, probe, satisfies, unmet
from .servers import (
    SERVER_KINDS,
    Received,
    Serve,
    ServerKind,
    header_values,
    mcp_arguments,
    model_saw,
    open_envelope_step,
    received,
    serve,
)
from .terminal import Keys, Screen, keys, screen

__all__ = [
    "MAX_TIMEOUT",
    "PLACEHOLDER",
    "SERVER_KINDS",
    "AcpTurn",
    "Action",
    "AwaitAsk",
    "Background",
    "Capture",
    "CaseError",
    "Column",
    "Edit",
    "EditDialog",
    "Expect",
    "Expectation",
    "Group",
    "JsonPath",
    "Keys",
    "Link",
    "Predicate",
    "Probe",
    "Prompt",
    "Received",
    "Remove",
    "Respond",
    "Ruling",
    "Screen",
    "Serve",
    "ServerKind",
    "Signal",
    "Step",
    "Wait",
    "Write",
    "acp_turn",
    "await_ask",
    "background",
    "column",
    "edit",
    "edit_dialog",
    "fill",
    "fill_expectation",
    "found",
    "group",
    "header_values",
    "json_path",
    "keys",
    "link",
    "mcp_arguments",
    "model_saw",
    "names_a_directory",
    "open_envelope_step",
    "output_of",
    "placeholders",
    "probe",
    "prompt",
    "received",
    "remove",
    "respond",
    "satisfies",
    "screen",
    "serve",
    "shown",
    "signal",
    "step",
    "unmet",
    "wait",
    "write",
    "written_in",
]
