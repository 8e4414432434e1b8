"""Black-box end-to-end harness for the contenox binary.

A case gets a scratch instance, registers a scripted dialog as its model and
drives the real binary::

    def test_worked_run_lands(instance):
        instance.init()
        instance.use_script(Script(turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", "home")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Mission finished.",
        ]))
        instance.contenox("run", "--policy", "run", "report").assert_success()
"""

from .acp import (
    FULL_CAPABILITIES,
    AcpClient,
    AcpError,
    AcpTimeout,
    PendingPrompt,
    PermissionAsk,
    PromptTurn,
    open_acp,
)
from .binary import CONTENOX_VERSION, Binary, BinaryError, cache_dir, resolve_binary
from .case import (
    Case,
    CaseError,
    Defect,
    Probe,
    Step,
    Transcript,
    acp_turn,
    await_ask,
    background,
    column,
    defect,
    edit,
    edit_dialog,
    group,
    json_path,
    keys,
    link,
    output_of,
    probe,
    prompt,
    received,
    remove,
    respond,
    run_case,
    satisfies,
    screen,
    serve,
    signal,
    step,
    wait,
    write,
)
from .command import DEFAULT_TIMEOUT, CommandTimeout, Result, notices, run
from .dialog import (
    Capabilities,
    DialogError,
    Script,
    ToolCall,
    Turn,
    Usage,
    mission_finish,
    mission_report,
    route,
    validate_dialog,
)
from .instance import Instance, InstanceError, hermetic_env, real_contenox_home
from .process import Process, WaitTimeout, start, start_contenox, start_in, wait_until
from .terminal import Terminal, TerminalTimeout, open_terminal

__all__ = [
    "CONTENOX_VERSION",
    "DEFAULT_TIMEOUT",
    "Binary",
    "BinaryError",
    "Capabilities",
    "Case",
    "CaseError",
    "CommandTimeout",
    "Defect",
    "DialogError",
    "Instance",
    "InstanceError",
    "Probe",
    "Result",
    "Script",
    "Step",
    "ToolCall",
    "Transcript",
    "Turn",
    "Usage",
    "cache_dir",
    "defect",
    "hermetic_env",
    "mission_finish",
    "mission_report",
    "notices",
    "output_of",
    "probe",
    "real_contenox_home",
    "resolve_binary",
    "route",
    "run",
    "run_case",
    "step",
    "validate_dialog",
]

# The step types a Case is composed of (harness.case.steps).
__all__ += [
    "acp_turn",
    "await_ask",
    "background",
    "column",
    "edit",
    "edit_dialog",
    "group",
    "json_path",
    "keys",
    "link",
    "prompt",
    "received",
    "remove",
    "respond",
    "satisfies",
    "screen",
    "serve",
    "signal",
    "wait",
    "write",
]

# Interactive surfaces: background processes, a real terminal, an ACP client.
__all__ += [
    "FULL_CAPABILITIES",
    "AcpClient",
    "AcpError",
    "AcpTimeout",
    "PendingPrompt",
    "PermissionAsk",
    "Process",
    "PromptTurn",
    "Terminal",
    "TerminalTimeout",
    "WaitTimeout",
    "open_acp",
    "open_terminal",
    "start",
    "start_contenox",
    "start_in",
    "wait_until",
]

# Durable state read back through contenox's own commands. The probes stay
# namespaced (`from harness import probes`; `probes.missions(instance)`), one
# module per area under harness/probes/; their row types (StateStep,
# SessionTranscript, SessionMessage) no longer collide with the case module's.
from . import probes  # noqa: E402
from .probes import ProbeError  # noqa: E402
from .table import TableError, read_fields, read_table  # noqa: E402

__all__ += ["ProbeError", "TableError", "probes", "read_fields", "read_table"]
