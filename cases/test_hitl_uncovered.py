"""guide/hitl.md, the rows no case held: the ``host`` condition of a hand-written policy.

As in cases/test_envelopes.py, a ``run`` fires a mission whose unit calls
``native-echo.echo`` under a policy file written into ``~/.contenox``; what each
call met is the tool result the unit recorded (``session show``).
"""

from __future__ import annotations

import json

from test_envelopes import ECHO, ECHOED, _landed, _mission, _refused, _results

from harness import ToolCall, write

# guide/hitl.md:224 "`host` | Argument value, parsed as a URL, has a host equal to or a
# subdomain of one of the comma-separated hosts in `value`". The echo's `input` is the URL.
_HOST_POLICY = {
    "default_action": "allow",
    "rules": [
        {
            "tools": "native-echo",
            "tool": "echo",
            "when": [{"key": "input", "op": "host", "value": "example.com,blocked.test"}],
            "action": "deny",
        }
    ],
}

_URLS = (
    ("a listed host", "https://example.com/a", True),
    ("a subdomain of a listed host", "https://api.example.com/b", True),
    ("the second listed host", "https://blocked.test/c", True),
    ("a host ending in a listed name", "https://notexample.com/d", False),
    ("another host", "https://example.org/e", False),
)

# The cases are each other's controls: only the URL's host changes between a refused call and a
# served one, and the plain echo after it runs under the same policy in every case.
HOST_CONDITION = [
    _landed(
        f"a host condition {'refuses' if refused else 'serves'} a url on {what}",
        "hostgate",
        _mission(ToolCall("echo", {"input": url}), ECHO),
        _results(
            lambda rs, url=url, refused=refused: (
                (_refused(rs[0]) if refused else rs[0] == url) and rs[1] == ECHOED
            ),
            f"{url} {'refused by rule 0' if refused else 'echoed'}, then the plain echo served",
        ),
        before=[write("hitl-policy-hostgate.json", json.dumps(_HOST_POLICY), home=True)],
    )
    for what, url, refused in _URLS
]
