"""integrations/tools/local.md, the rows no case held: local_shell's knobs and arguments, local_fs.

Every case fires one ``run`` under the ``e2e_open`` envelope (every call runs
unasked), so a refusal comes from the tool's own ``tools_policies``, not from an
approval gate; the knobs are edited in the ``~/.contenox/agents.toml`` ``init``
wrote. What a call did is read where the model read it: the tool results the
run's unit recorded (``session list --all``, ``session show``), each shown in the
transcript, and the files it left in the workspace.

A case showing a knob refusing a call has its control beside it: the same call,
the same files, only that knob changed, and the call runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from test_confinement import (
    OPEN_POLICY,
    WITHOUT_SHELL_HARD_BOUNDS,
    _authored_chain,
    _chat_tool_result,
    _ran,
    _shell_args,
)
from test_tools import _envelope_step, _finish, _mission, _touch

from dialogs import workspace_file
from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    edit,
    edit_dialog,
    mission_finish,
    probe,
    prompt,
    received,
    route,
    satisfies,
    step,
)
from harness.case import Edit, Probe, model_saw
from harness.probes import session_records, transcript
from harness.servers.wiring import OPEN_ENVELOPE


def _results(instance: Instance) -> list[str]:
    """Every tool result the run's unit recorded, in order (``session show`` of its session)."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    results = [m.content for m in transcript(instance, unit.id).messages if m.role == "tool"]
    assert results, f"the unit recorded no tool result at all: {unit}"
    return results


def _results_are(check: Callable[[list[str]], bool], message: str) -> Probe:
    return probe("the calls' tool results", _results, expect=satisfies(check, message))


def _shell_knobs(allowed: str = "", denied: str = "", allowed_dir: str | None = None) -> Edit:
    """The shipped ``[tools_policies.local_shell]``, its two lists (and ``_allowed_dir``) set."""
    header = "[tools_policies.local_shell]"
    if allowed_dir is not None:
        header += f'\n_allowed_dir = "{allowed_dir}"'
    return edit(
        "agents.toml",
        replace={
            r"(?m)^\[tools_policies\.local_shell\]$": header.replace("\\", "\\\\"),
            r'(?m)^_allowed_commands = ".*"$': f'_allowed_commands = "{allowed}"',
            r'(?m)^_denied_commands = ".*"$': f'_denied_commands = "{denied}"',
        },
        under="contenox",
    )


def _shell(name: str, arguments: dict[str, Any], knobs: Edit, *after: Probe, **case: Any) -> Any:
    return _mission(
        _touch(ToolCall("local_shell", arguments)),
        "run the line",
        *after,
        before=[knobs],
        name=name,
        **case,
    )


def _out(result: str) -> str:
    """The stdout a local_shell result carries (the JSON's ``stdout``), or '' if none."""
    import json

    try:
        value = json.loads(result)
    except ValueError:
        return ""
    return str(value.get("stdout", "")) if isinstance(value, dict) else ""


def _first(check: Callable[[str], bool]) -> Callable[[list[str]], bool]:
    return lambda results: check(results[0])


# --- `shell: true` (local.md:171): /bin/sh -c, off under _allowed_commands or _allowed_dir

_PIPE = _shell_args("echo piped-4471 | tr p P", shell=True)

SHELL_PIPES_WITH_NO_LISTS = _shell(
    "shell true runs the line through sh so a pipe is interpreted when no list is set",
    _PIPE,
    WITHOUT_SHELL_HARD_BOUNDS,
    _results_are(
        _first(lambda r: _ran(r) and _out(r) == "PiPed-4471"),
        "the line run through a shell: echo's output piped through tr",
    ),
)

# Without `shell` the same characters are argv: echo prints them as they are.
NO_SHELL_IS_LITERAL = _shell(
    "without shell the argv is executed directly and a pipe and a variable are printed as text",
    _shell_args("echo", "$HOME", "|", "tr", "p", "P"),
    WITHOUT_SHELL_HARD_BOUNDS,
    _results_are(
        _first(lambda r: _ran(r) and _out(r) == "$HOME | tr p P"),
        "echo printed its arguments literally: no expansion, no pipe",
    ),
)

# The controls of these two: SHELL_PIPES_WITH_NO_LISTS (the same line, the knob unset).
SHELL_OFF_UNDER_ALLOWED_COMMANDS = _shell(
    "shell true is refused once allowed commands is set even when every verb is on it",
    _PIPE,
    _shell_knobs(allowed="echo,tr"),
    _results_are(
        _first(lambda r: "'shell: true' is strictly forbidden" in r and "PiPed" not in r),
        "the line not run: shell: true refused",
    ),
)

SHELL_OFF_UNDER_ALLOWED_DIR = _shell(
    "shell true is refused once the shell s allowed dir is set even to the root",
    _PIPE,
    _shell_knobs(allowed_dir="/"),
    _results_are(
        _first(lambda r: "'shell: true' is strictly forbidden" in r and "PiPed" not in r),
        "the line not run: shell: true refused",
    ),
)

# --- _denied_commands (local.md:154): blocked regardless of the allowlist

DENIED_BEATS_ALLOWED = _shell(
    "a command on denied commands is refused even though allowed commands names it",
    _shell_args("id"),
    _shell_knobs(allowed="ls,id", denied="id"),
    _results_are(_first(lambda r: not _ran(r) and "uid=" not in r), "id not run, refused"),
)

# The control: the same allowlist, id off the deny list; it runs.
DENIED_CONTROL = _shell(
    "the same command runs when denied commands no longer names it",
    _shell_args("id"),
    _shell_knobs(allowed="ls,id", denied="sudo"),
    _results_are(_first(lambda r: _ran(r) and "uid=" in r), "id's output"),
    redact={r"uid=[^\"]*": "uid=[ID]"},
)

# --- _allowed_dir (local.md:155): the executable must reside under it

_SCRIPT = {"bin/hello.sh": "#!/bin/sh\necho hello-from-the-script-3391\n"}


def _executable(path: str) -> Edit:
    return edit(path, append="", executable=True)


ALLOWED_DIR_REFUSES_OUTSIDE = _mission(
    _touch(ToolCall("local_shell", {"command": "/usr/bin/id"})),
    "run the line",
    _results_are(_first(lambda r: not _ran(r) and "uid=" not in r), "/usr/bin/id not run"),
    before=[_shell_knobs(allowed_dir="{work}")],
    name="with the shell s allowed dir set to the workspace an executable outside it is refused",
)

# The control: the same knob, an executable inside the workspace; it runs.
ALLOWED_DIR_RUNS_INSIDE = _mission(
    _touch(ToolCall("local_shell", {"command": "./bin/hello.sh"})),
    "run the line",
    _results_are(
        _first(lambda r: _ran(r) and "hello-from-the-script-3391" in r), "the script's output"
    ),
    before=[_shell_knobs(allowed_dir="{work}"), _executable("bin/hello.sh")],
    files=_SCRIPT,
    name="with the shell s allowed dir set to the workspace an executable inside it runs",
)

# --- no tools_policies at all (local.md:159): unrestricted. The page's advice is about a
# chain's execute_config, so the case is an authored chain (chat --chain) whose tasks grant
# local_shell and carry no tools_policies; its control is the same chain with one allowlist.


def _authored(
    name: str, execute_config: dict[str, Any], check: Callable[[str], bool], what: str
) -> Case:
    return Case(
        name=name,
        script=Script(
            turns=[Turn(tool_calls=[ToolCall("local_shell", {"command": "id"})]), "Done."]
        ),
        files={"authored-chain.json": _authored_chain(execute_config)},
        steps=[
            # chat asks nobody about a call its policy gates, so it runs under one allowing all.
            OPEN_POLICY,
            step("config", "set", "hitl-policy-name", "hitl-policy-open.json"),
            step("chat", "--shell", "--chain", "authored-chain.json", "who am I", timeout=120),
            probe("the call's tool result", _chat_tool_result, expect=satisfies(check, what)),
        ],
        redact={r"uid=[^\"]*": "uid=[ID]"},
    )


NO_TOOLS_POLICIES_OPEN = _authored(
    "a chain task granting local shell with no tools policies runs a command off the allowlist",
    {"tools": ["local_shell"]},
    lambda r: "uid=" in r,
    "id's output",
)

NO_TOOLS_POLICIES_CONTROL = _authored(
    "the same chain task with an allowlist not naming the command refuses it",
    {"tools": ["local_shell"], "tools_policies": {"local_shell": {"_allowed_commands": "ls"}}},
    lambda r: "uid=" not in r and "allowed commands" in r,
    "id refused, naming the allowlist",
)

# --- the arguments (local.md:167-170)

ARGS_AS_A_STRING = _shell(
    "args given as a space separated string reach the executable as separate arguments",
    {"command": "printf", "args": "%s| one two"},
    WITHOUT_SHELL_HARD_BOUNDS,
    _results_are(_first(lambda r: _ran(r) and _out(r) == "one|two|"), "printf got three arguments"),
)

FLAGS_IN_COMMAND = _shell(
    "a command carrying its flags is not split into an executable and its flags",
    {"command": "ls -F"},
    WITHOUT_SHELL_HARD_BOUNDS,
    _results_are(_first(lambda r: "marker-dir-5120/" not in r), "no ls -F listing"),
    files={"marker-dir-5120/x": "x"},
)

CWD_SETS_THE_DIRECTORY = _shell(
    "cwd sets the directory the command runs in",
    {"command": "pwd", "cwd": "sub"},
    WITHOUT_SHELL_HARD_BOUNDS,
    _results_are(_first(lambda r: _ran(r) and _out(r).endswith("/work/sub")), "pwd prints .../sub"),
    files={"sub/keep": ""},
)

TIMEOUT_BOUNDS_THE_COMMAND = _shell(
    "timeout ends a command that runs longer",
    {"command": "sleep", "args": ["30"], "timeout": "1s"},
    WITHOUT_SHELL_HARD_BOUNDS,
    _results_are(
        _first(lambda r: '"success":false' in r and "timed out" in r), "the sleep cut short"
    ),
)

# --- local_fs (local.md:29-52)

WRITE_CREATES_PARENTS = _mission(
    _finish(ToolCall("write_file", {"path": "a/b/new.txt", "content": "fresh-8123\n"})),
    "write",
    workspace_file("a/b/new.txt", expect="fresh-8123\n"),
    name="write_file creates the parent directories of a new file",
)

SED_IS_LITERAL = _mission(
    _finish(
        ToolCall("read_file", {"path": "notes.txt"}),
        ToolCall("sed", {"path": "notes.txt", "pattern": "a.c", "replacement": "X"}),
    ),
    "edit",
    workspace_file("notes.txt", expect="abc\nX\n"),
    name="sed replaces a literal string and does not read its pattern as a regex",
    files={"notes.txt": "abc\na.c\n"},
)

_NOTES = {"notes.txt": "alpha\nbeta\nalpha\n"}
_READ = ToolCall("read_file", {"path": "notes.txt"})
_RANGE = ToolCall("read_file_range", {"path": "notes.txt", "start_line": 1, "end_line": 1})
_CLOBBER = ToolCall("write_file", {"path": "notes.txt", "content": "clobbered\n"})


def _edit(old: str, new: str) -> ToolCall:
    return ToolCall("edit_file", {"path": "notes.txt", "old_string": old, "new_string": new})


def _sed(pattern: str, replacement: str) -> ToolCall:
    return ToolCall("sed", {"path": "notes.txt", "pattern": pattern, "replacement": replacement})


# Its control: test_tools.py's "write_file over an existing file once read overwrites it".
RANGE_READ_IS_NOT_ENOUGH_TO_OVERWRITE = _mission(
    _finish(_RANGE, _CLOBBER, _sed("beta", "gamma")),
    "edit",
    workspace_file("notes.txt", expect="alpha\ngamma\nalpha\n"),
    _results_are(
        lambda rs: "alpha" in rs[0] and "read_file" in rs[1] and "clobbered" not in rs[1],
        "the range read, then write_file refused naming read_file, then sed applied",
    ),
    name="a line range read lets sed edit the file but does not let write_file overwrite it",
    files=_NOTES,
)

EDIT_MISMATCH_MESSAGES = _mission(
    _finish(_READ, _edit("zzz", "omega"), _edit("alpha", "omega")),
    "edit",
    workspace_file("notes.txt", expect="alpha\nbeta\nalpha\n"),
    _results_are(
        lambda rs: "call read_file and retry" in rs[1] and "occurs 2 times" in rs[2],
        "no match: told to re-read and retry; two: refused with the count",
    ),
    name="edit_file tells the model to re-read on no match and gives the count of several",
    files=_NOTES,
)


def _compact(result: str) -> bool:
    import json

    try:
        value = json.loads(result)
    except ValueError:
        return False
    keys = {"path", "written", "replacements", "old_bytes", "new_bytes", "old_sha256", "new_sha256"}
    return isinstance(value, dict) and keys <= set(value) and "alpha" not in result


EDIT_RETURNS_COMPACT_JSON = _mission(
    _finish(_READ, _edit("beta", "gamma")),
    "edit",
    workspace_file("notes.txt", expect="alpha\ngamma\nalpha\n"),
    _results_are(lambda rs: _compact(rs[1]), "edit_file's result: the seven keys, no file body"),
    name="edit_file returns compact json naming the change and not the file bodies",
    files=_NOTES,
)

SOFT_DENIAL_THEN_RETRY = _mission(
    _finish(_CLOBBER, _READ, _CLOBBER),
    "overwrite",
    workspace_file("notes.txt", expect="clobbered\n"),
    _results_are(
        lambda rs: (
            "without reading it first" in rs[0] and "read_file" in rs[0] and "alpha" in rs[1]
        ),
        "the first write refused telling the model to read first; the read; the write landed",
    ),
    name="an unread overwrite tells the model to read the file first and lands once it has",
    files=_NOTES,
)

# Its control: test_tools.py's "write_file over an existing file once read overwrites it".
SHELL_CAT_IS_NOT_A_READ = _mission(
    _finish(ToolCall("local_shell", {"command": "cat", "args": ["notes.txt"]}), _CLOBBER),
    "overwrite",
    workspace_file("notes.txt", expect="alpha\nbeta\nalpha\n"),
    _results_are(
        lambda rs: "beta" in rs[0] and "clobbered" not in rs[1],
        "cat printed the file; the write was still refused",
    ),
    name="a cat through local shell does not count as a read for write_file",
    files=_NOTES,
)

_SHELL_SED = ToolCall(
    "local_shell", {"command": "sed", "args": ["-i", "s/beta/BETA/", "notes.txt"]}
)
_SHELL_CAT = ToolCall("local_shell", {"command": "cat", "args": ["notes.txt"]})

EDIT_REFUSES_A_CHANGED_FILE = _mission(
    _finish(_READ, _SHELL_SED, _edit("BETA", "gamma")),
    "edit",
    workspace_file("notes.txt", expect="alpha\nBETA\nalpha\n"),
    name="edit_file refuses a file changed since it was read and keeps the change",
    files=_NOTES,
)

# The control: the same calls, the shell line reading instead of changing the file.
EDIT_AFTER_AN_UNCHANGING_SHELL_CALL = _mission(
    _finish(_READ, _SHELL_CAT, _edit("beta", "gamma")),
    "edit",
    workspace_file("notes.txt", expect="alpha\ngamma\nalpha\n"),
    name="edit_file applies when the file has not changed since it was read",
    files=_NOTES,
)

# The editor's (acp) chain; the `run` unit's and `chat`'s prompts were observed without it.
TOOL_PREFERENCE = Case(
    name="the default editor chain s system prompt carries the tool preference addendum",
    script=Script(turns=[route("general"), "Hello."]),
    steps=[prompt("hi"), model_saw("TOOL PREFERENCE")],
)

# --- files.read / files.write / shell bind to their tools by name (local.md:27-31)


def _axis(axis: str, verdict: str) -> Edit:
    return _envelope_step("e2e_axis", f'default_action = "allow"\n{axis} = "{verdict}"')


def _axis_case(name: str, axis: str, verdict: str, calls: list[ToolCall], *after: Probe) -> Case:
    return _mission(
        _finish(*calls),
        "touch",
        *after,
        envelope=_axis(axis, verdict),
        policy="e2e_axis",
        name=name,
        files=_NOTES,
    )


RANGE_UNDER_READ_DENY = [
    _axis_case(
        f"files read {verdict} {'refuses' if verdict == 'deny' else 'lets'} read_file_range",
        "files.read",
        verdict,
        [_RANGE],
        model_saw("alpha", seen=verdict == "allow"),
    )
    for verdict in ("deny", "allow")
]

WRITES_UNDER_WRITE_AXIS = [
    _axis_case(
        f"files write {verdict} {'refuses' if verdict == 'deny' else 'lets'} write edit and sed",
        "files.write",
        verdict,
        [
            ToolCall("write_file", {"path": "new.txt", "content": "new\n"}),
            _READ,
            _edit("beta", "gamma"),
            # an applied edit makes the read stale: sed needs the file read again
            _READ,
            _sed("gamma", "delta"),
        ],
        workspace_file("new.txt", expect=None if verdict == "deny" else "new\n"),
        workspace_file(
            "notes.txt",
            expect=_NOTES["notes.txt"] if verdict == "deny" else "alpha\ndelta\nalpha\n",
        ),
    )
    for verdict in ("deny", "allow")
]

SHELL_UNDER_SHELL_AXIS = [
    _axis_case(
        f"shell {verdict} {'refuses' if verdict == 'deny' else 'lets'} local_shell",
        "shell",
        verdict,
        [ToolCall("local_shell", {"command": "touch", "args": ["ran.txt"]})],
        workspace_file("ran.txt", expect=None if verdict == "deny" else ""),
    )
    for verdict in ("deny", "allow")
]

# Its control: EDIT_AFTER_AN_UNCHANGING_SHELL_CALL (the same edit, the file read first).
EDIT_WITHOUT_A_READ = _mission(
    _finish(_edit("beta", "gamma")),
    "edit",
    workspace_file("notes.txt", expect="alpha\nbeta\nalpha\n"),
    _results_are(
        lambda rs: "read_file" in rs[0] and "gamma" not in rs[0], "refused, naming read_file"
    ),
    name="edit_file on a file never read is refused and leaves it unchanged",
    files=_NOTES,
)

# --- the guard is per session (local.md:80): each `run` is a session of its own

_WRITE_ONLY = Script(
    turns=[
        Turn(text="Working.", tool_calls=[_CLOBBER]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

# Its control: test_tools.py's "write_file over an existing file once read overwrites it"
# (the same read and write in one run's session).
READ_IN_ANOTHER_SESSION = _mission(
    _finish(_READ),
    "read",
    edit_dialog(_WRITE_ONLY),
    step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "overwrite", exit_code=None),
    workspace_file("notes.txt", expect="alpha\nbeta\nalpha\n"),
    name="a read in one session does not let another session overwrite the file",
    files=_NOTES,
)

# --- the local_fs limits' defaults (local.md:89-90), of a chain's execute_config. Under `run`
# the agents.toml layers decide instead: with the key deleted from ~/.contenox/agents.toml
# the read cap was 262144 and the output cap 96798 (observed), the binary's own layer.

_MIB = 1048576


def _sized(marker: str, size: int) -> str:
    return marker + "\n" + "x" * (size - len(marker) - 2) + "\n"


def _chat_heads(instance: Instance) -> list[str]:
    """The chat session's tool results, each as its first and last lines, cut at 200 bytes."""
    results = [m.content for m in transcript(instance).messages if m.role == "tool"]
    lines = [[line[:200] for line in r.splitlines() if line.strip()] or [""] for r in results]
    return [ls[0] if len(ls) == 1 else f"{ls[0]} … {ls[-1]}" for ls in lines]


def _authored_reads(
    name: str,
    paths: list[str],
    files: dict[str, str],
    check: Callable[[list[str]], bool],
    what: str,
    *more: Probe,
    policies: dict[str, str] | None = None,
) -> Case:
    """Chat once through an authored chain granting local_fs (with no tools_policies unless
    ``policies`` gives local_fs's)."""
    config: dict[str, Any] = {"tools": ["local_fs"]}
    if policies:
        config["tools_policies"] = {"local_fs": policies}
    return Case(
        name=name,
        script=Script(
            turns=[
                *[Turn(tool_calls=[ToolCall("read_file", {"path": p})]) for p in paths],
                "Done.",
            ]
        ),
        files={"authored-chain.json": _authored_chain(config), **files},
        steps=[
            OPEN_POLICY,
            step("config", "set", "hitl-policy-name", "hitl-policy-open.json"),
            step("chat", "--chain", "authored-chain.json", "read them", timeout=120),
            probe("each result's first and last lines", _chat_heads, expect=satisfies(check, what)),
            *more,
        ],
    )


READ_LIMIT_DEFAULT = _authored_reads(
    "with no max read bytes set a whole file read of one byte over 1 MiB is refused",
    ["over.txt", "at.txt"],
    {"over.txt": _sized("over-marker-7301", _MIB + 1), "at.txt": _sized("at-marker-7302", _MIB)},
    lambda hs: "over-marker-7301" not in hs[0] and "at-marker-7302" in hs[1],
    "the file one byte over 1 MiB refused, the 1 MiB one read",
)


# A 40 000-byte line: served whole under any cap above it, cut under 32 KiB.
OUTPUT_CAP_DEFAULT = _authored_reads(
    "with no max output bytes set a read over 32 KiB is cut at 32 KiB",
    ["big.txt"],
    {"big.txt": _sized("big-marker-7303", 40_000)},
    lambda hs: (
        "big-marker-7303" in hs[0] and "capped at 32768 bytes" in hs[0] and "x" * 50 not in hs[0]
    ),
    "the read cut before the long line, naming the 32768-byte cap",
)

# --- local_fs `_allowed_dir` (local.md:18, 88): the task's root, relative to the workspace


def _fs_root(root: str, outer_seen: bool) -> Case:
    return _mission(
        _finish(
            ToolCall("read_file", {"path": "inner.txt"}),
            ToolCall("read_file", {"path": "outer.txt"}),
        ),
        "read",
        model_saw("outer-content-7305", seen=outer_seen),
        model_saw("inner-content-7304", seen=not outer_seen),
        before=[
            edit(
                "agents.toml",
                replace={r'(?m)^_allowed_dir = "\."$': f'_allowed_dir = "{root}"'},
                under="contenox",
            )
        ],
        files={"sub/inner.txt": "inner-content-7304\n", "outer.txt": "outer-content-7305\n"},
        name=f"local_fs allowed dir {root!r} is the root its relative paths read from",
    )


FS_ROOT_SUB = [_fs_root("sub", False), _fs_root(".", True)]

# --- _verbose_tool_descriptions (local.md:92): the descriptions go out in the provider request,
# not into the captured state, so the chat runs on the Ollama stand-in, which records it.


def _read_file_description(standin: Any) -> object:
    [first, *_] = standin.chat_requests()
    for tool in first.json().get("tools", []):
        function = tool.get("function", {})
        if function.get("name") == "local_fs.read_file":
            return function.get("description")
    return None


def _described(
    name: str, policies: dict[str, Any], check: Callable[[object], bool], what: str
) -> Case:
    config: dict[str, Any] = {"tools": ["local_fs"]}
    if policies:
        config["tools_policies"] = {"local_fs": policies}
    return Case(
        name=name,
        provider="ollama",
        script=Script(turns=["Noted."]),
        files={"authored-chain.json": _authored_chain(config)},
        steps=[
            step("chat", "--chain", "authored-chain.json", "hi", stdout_has=["Noted."]),
            received(
                "provider",
                "read_file's description",
                _read_file_description,
                expect=satisfies(check, what),
            ),
        ],
    )


VERBOSE_DESCRIPTIONS = [
    _described(
        "read_file s description is the short one by default",
        {},
        lambda d: isinstance(d, str) and 0 < len(d) < 500 and "Did you mean" not in d,
        "a short description, without the did-you-mean semantics",
    ),
    _described(
        "verbose tool descriptions true restores read_file s long description",
        {"_verbose_tool_descriptions": "true"},
        lambda d: (
            isinstance(d, str)
            and len(d) > 1000
            and "TRUNCATED" in d
            and "Did you mean" in d
            and "read-before-write" in d
        ),
        "the long description: truncation, did-you-mean and the read-before-write contract",
    ),
]


def _cap_below_default(heads: list[str]) -> bool:
    import re

    cap = re.search(r"capped at ([0-9]+) bytes", heads[0])
    return cap is not None and 0 < int(cap.group(1)) < 32768 and "big-marker-7303" in heads[0]


# Its control: OUTPUT_CAP_DEFAULT, the same read with the key unset (32768).
CONTEXT_TOKENS_DERIVE_THE_CAP = _authored_reads(
    "model context tokens set small derives an output cap below the 32 KiB default",
    ["big.txt"],
    {"big.txt": _sized("big-marker-7303", 40_000)},
    _cap_below_default,
    "the read cut at a cap under 32768 bytes",
    policies={"_model_context_tokens": "4096"},
)
