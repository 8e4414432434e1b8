"""`contenox acpx`: the hardened profile an untrusted driver (OpenClaw) launches.

contenox-cli.md `### contenox acp / contenox acpx` and integrations/editors/openclaw.md
("What `contenox acpx` can and cannot do", "Verify it"): reads of a known path work;
writes, the shell and secret paths are refused by the `acpx` envelope with no ask
raised, since nobody is there to answer one. The `acpx` chain is not a router: its
first model turn is the answer (an `acp` dialog's `route()` turn would be the reply).
"""

from __future__ import annotations

import re

from dialogs import workspace_file
from harness import Case, Script, ToolCall, Turn, prompt
from harness.case import open_envelope_step
from harness.servers.wiring import OPEN_ENVELOPE


def _calls(*calls: ToolCall, closing: str = "Done.") -> Script:
    return Script(turns=[*(Turn(tool_calls=[c]) for c in calls), closing])


# What a refused call's tool result says: the envelope, not a transient error.
DENIED = "Denied by the active policy hitl-policy-acpx.json"


def _write(path: str = "out.txt") -> ToolCall:
    return ToolCall(name="write_file", arguments={"path": path, "content": "hello\n"})


ACPX_ANSWERS_A_PROMPT_OVER_STDIO = Case(
    name="acpx answers a prompt over stdio with the scripted text",
    script=Script(turns=["Hello from acpx."]),
    steps=[
        prompt(
            "say hello",
            acp_command="acpx",
            text_has=[re.compile(r"\AHello from acpx\.\Z")],
        )
    ],
)

ACPX_READS_A_FILE_WHOSE_PATH_IS_KNOWN = Case(
    name="acpx reads a workspace file whose path it is given",
    script=_calls(ToolCall(name="read_file", arguments={"path": "notes.txt"})),
    files={"notes.txt": "the answer is 42\n"},
    steps=[
        prompt(
            "read the notes",
            acp_command="acpx",
            files_read=["notes.txt"],
            tool_output_has=["the answer is 42"],
            requests_lack=["session/request_permission"],
        )
    ],
)

ACPX_REFUSES_A_WRITE_WITHOUT_ASKING = Case(
    name="acpx refuses a file write without raising an ask and the file never appears",
    script=_calls(_write()),
    steps=[
        prompt(
            "write the greeting",
            acp_command="acpx",
            permission="allow",
            files_written=[],
            requests_lack=["session/request_permission", "fs/write_text_file"],
            tool_output_has=[DENIED],
        ),
        workspace_file("out.txt", expect=None),
    ],
)

ACPX_REFUSES_THE_SHELL_WITHOUT_ASKING = Case(
    name="acpx refuses local_shell without raising an ask and opens no terminal",
    script=_calls(ToolCall(name="local_shell", arguments={"command": "touch", "args": ["ran"]})),
    steps=[
        prompt(
            "list the workspace",
            acp_command="acpx",
            permission="allow",
            terminal_commands=[],
            requests_lack=["session/request_permission"],
            tool_output_has=[DENIED],
        ),
        workspace_file("ran", expect=None),
    ],
)

# The control of the shell refusal above: only the envelope changed (an envelope in
# ~/.contenox/agents.toml that runs every tool unasked); the same touch runs, unasked.
ACPX_UNDER_AN_OPEN_ENVELOPE_RUNS_THE_SHELL = Case(
    name="acpx with an envelope allowing every tool runs the same local_shell without asking",
    script=_calls(ToolCall(name="local_shell", arguments={"command": "touch", "args": ["ran"]})),
    steps=[
        open_envelope_step(),
        prompt(
            "list the workspace",
            acp_command="acpx",
            acp_args=["--hitl-policy", OPEN_ENVELOPE],
            permission="deny",
            requests=["terminal/create"],
            requests_lack=["session/request_permission"],
        ),
        workspace_file("ran", expect=""),
    ],
)

ACPX_REFUSES_TO_READ_A_SECRET_PATH = Case(
    name=(
        "acpx refuses to read a dotenv file and its secret reaches neither the editor nor the tool"
    ),
    script=_calls(ToolCall(name="read_file", arguments={"path": ".env"})),
    files={".env": "API_TOKEN=hunter2-acpx-secret\n"},
    steps=[
        prompt(
            "read the env file",
            acp_command="acpx",
            files_read=[],
            requests_lack=["session/request_permission"],
            tool_output_has=[DENIED],
            text_lacks=["hunter2-acpx-secret"],
        )
    ],
)

# The control of the refusal above: only the envelope changed (auto_edit allows
# writes), the same write lands without an ask.
ACPX_UNDER_AUTO_EDIT_WRITES = Case(
    name="acpx with hitl-policy auto_edit writes the same file without asking",
    script=_calls(_write()),
    steps=[
        prompt(
            "write the greeting",
            acp_command="acpx",
            acp_args=["--hitl-policy", "auto_edit"],
            permission="deny",
            requests_lack=["session/request_permission"],
        ),
        workspace_file("out.txt", expect="hello\n"),
    ],
)

ACPX_UNDER_ANOTHER_ENVELOPE_ASKS_BEFORE_A_WRITE = Case(
    name="acpx with hitl-policy default asks the editor before a write",
    script=_calls(_write()),
    steps=[
        prompt(
            "write the greeting",
            acp_command="acpx",
            acp_args=["--hitl-policy", "default"],
            permission="deny",
            requests=["session/request_permission"],
            files_written=[],
        ),
        workspace_file("out.txt", expect=None),
    ],
)

# The notes are read first, as local_fs requires before it modifies a file, so the
# envelope is the only thing that can stop the edit (and the control below can land it).
_READ_NOTES = ToolCall(name="read_file", arguments={"path": "notes.txt"})

ACPX_REFUSES_EDITS = [
    Case(
        name=f"acpx refuses {tool} without raising an ask and the file is unchanged",
        script=_calls(_READ_NOTES, ToolCall(name=tool, arguments=arguments)),
        files={"notes.txt": "old line\n"},
        steps=[
            prompt(
                f"edit the notes with {tool}",
                acp_command="acpx",
                permission="allow",
                files_written=[],
                requests_lack=["session/request_permission"],
                tool_output_has=[DENIED],
            ),
            workspace_file("notes.txt", expect="old line\n"),
        ],
    )
    for tool, arguments in (
        ("edit_file", {"path": "notes.txt", "old_string": "old", "new_string": "new"}),
        ("sed", {"path": "notes.txt", "pattern": "old", "replacement": "new"}),
    )
]

# Their controls: only the envelope changed (auto_edit allows writes); the same edit
# lands without an ask.
ACPX_UNDER_AUTO_EDIT_EDITS = [
    Case(
        name=f"acpx with hitl-policy auto_edit applies the same {tool} without asking",
        script=_calls(_READ_NOTES, ToolCall(name=tool, arguments=arguments)),
        files={"notes.txt": "old line\n"},
        steps=[
            prompt(
                f"edit the notes with {tool}",
                acp_command="acpx",
                acp_args=["--hitl-policy", "auto_edit"],
                permission="deny",
                requests_lack=["session/request_permission"],
            ),
            workspace_file("notes.txt", expect="new line\n"),
        ],
    )
    for tool, arguments in (
        ("edit_file", {"path": "notes.txt", "old_string": "old", "new_string": "new"}),
        ("sed", {"path": "notes.txt", "pattern": "old", "replacement": "new"}),
    )
]

ACPX_REFUSES_TO_READ_A_KEY_UNDER_SSH = Case(
    name="acpx refuses to read a key under ssh and the key reaches neither the editor nor the tool",
    # Inside the directory acpx runs in, so only the secret-path rule can refuse it.
    script=_calls(ToolCall(name="read_file", arguments={"path": ".ssh/id_ed25519"})),
    files={".ssh/id_ed25519": "PRIVATE-KEY-acpx-canary\n"},
    steps=[
        prompt(
            "read my key",
            acp_command="acpx",
            files_read=[],
            requests_lack=["session/request_permission"],
            tool_output_has=[DENIED],
            text_lacks=["PRIVATE-KEY-acpx-canary"],
        )
    ],
)

ACPX_READS_ONLY_INSIDE_ITS_WORKING_DIRECTORY = Case(
    name="acpx refuses to read a file outside the directory it runs in",
    # home_files land in the scratch ~/.contenox, the workspace's sibling's child.
    script=_calls(
        ToolCall(name="read_file", arguments={"path": "../home/.contenox/project/plan.txt"})
    ),
    home_files={"project/plan.txt": "outside-the-window canary\n"},
    steps=[
        prompt(
            "read the plan next door",
            acp_command="acpx",
            files_read=[],
            tool_output_has=["escapes allowed directory"],
            text_lacks=["outside-the-window canary"],
        )
    ],
)

ACPX_UNDER_STRICT_ASKS_WHERE_ACPX_DENIES = Case(
    name="acpx with hitl-policy strict asks before a write that acpx refuses",
    script=_calls(_write()),
    steps=[
        prompt(
            "write the greeting",
            acp_command="acpx",
            acp_args=["--hitl-policy", "strict"],
            permission="deny",
            requests=["session/request_permission"],
            files_written=[],
        ),
        workspace_file("out.txt", expect=None),
    ],
)
