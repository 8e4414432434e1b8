"""Fixed endpoints nobody passes with ``--url``, reached through a loopback HTTPS proxy.

``--type openai`` without ``--url`` talks to ``api.openai.com``; Anthropic's base URL
``https://api.anthropic.com`` is inferred; a region-bearing Bedrock ``--url`` names
``bedrock-runtime.<region>.amazonaws.com``. Go's default transport honours
``HTTPS_PROXY`` and ``SSL_CERT_FILE``, so each case gives contenox the proxy of
``harness/servers/https_proxy.py``: it terminates TLS for the requested host with a
leaf from a CA made for the case and routes that host to a provider stand-in on
loopback. A host without a route gets ``502`` and is recorded, so each case has a
control where only the route is missing and the listing finds nothing.

The transcript ends with what the proxy received: host, method, path and status
(headers carry a SigV4 date and key, so they stay out of it).
"""

from __future__ import annotations

from pytest_httpserver import HTTPServer

from harness import Instance, Script, Turn
from harness.servers.https_proxy import HttpsProxy, serve_https_proxy
from harness.servers.providers import (
    KEY,
    SECRET,
    aws_credentials_blob,
    serve_provider,
)

# Route a host to nothing the case serves: the host under test then gets 502.
ELSEWHERE = "unrouted.e2e.invalid"
SCRIPT = Script(turns=[Turn(text="Hello there.")])


def _seen(instance: Instance, proxy: HttpsProxy) -> list[tuple[str, str, str, int]]:
    seen = [(r.host, r.method, r.path, r.status) for r in proxy.requests()]
    instance.recorder.entries.append({"proxy received": [" ".join(map(str, s)) for s in seen]})
    return seen


def _listing(instance: Instance, protocol: str, hosts: list[str], add: list[str], key: str):  # type: ignore[no-untyped-def]
    standin = serve_provider(instance, protocol, SCRIPT)  # type: ignore[arg-type]
    instance.recorder.name(standin.url, "[PROVIDER_URL]")
    instance.recorder.name(key, SECRET)
    proxy = serve_https_proxy(instance, {h: standin.url for h in hosts})
    env = {"E2E_KEY": key, **proxy.env}
    added = instance.must("backend", "add", *add, "--api-key-env", "E2E_KEY", env=env)
    listed = instance.contenox("model", "list", env=env)
    return standin, proxy, added, listed


def test_openai_without_url_lists_models_at_api_openai_com(instance: Instance) -> None:
    # function: drives the HTTPS proxy
    standin, proxy, added, listed = _listing(
        instance, "openai", ["api.openai.com"], ["openai", "--type", "openai"], KEY
    )
    assert "https://api.openai.com/v1" in added.stdout, added.stdout
    assert _seen(instance, proxy) == [("api.openai.com", "GET", "/v1/models", 200)], (
        proxy.describe()
    )
    assert standin.model in listed.stdout, listed.stdout


def test_openai_without_url_and_no_route_to_api_openai_com_lists_nothing(
    instance: Instance,
) -> None:
    # function: drives the HTTPS proxy (control: only the route is missing)
    standin, proxy, _, listed = _listing(
        instance, "openai", [ELSEWHERE], ["openai", "--type", "openai"], KEY
    )
    seen = _seen(instance, proxy)
    assert seen and {(*s[:2], s[3]) for s in seen} == {("api.openai.com", "CONNECT", 502)}, (
        proxy.describe()
    )
    assert standin.model not in listed.stdout, listed.stdout
    assert standin.requests() == []


def test_anthropic_without_url_lists_models_at_api_anthropic_com(instance: Instance) -> None:
    # function: drives the HTTPS proxy
    standin, proxy, _, listed = _listing(
        instance, "anthropic", ["api.anthropic.com"], ["anthropic", "--type", "anthropic"], KEY
    )
    assert _seen(instance, proxy) == [("api.anthropic.com", "GET", "/v1/models", 200)], (
        proxy.describe()
    )
    assert standin.model in listed.stdout, listed.stdout


def test_anthropic_without_url_and_no_route_lists_nothing(instance: Instance) -> None:
    # function: drives the HTTPS proxy (control: only the route is missing)
    standin, proxy, _, listed = _listing(
        instance, "anthropic", [ELSEWHERE], ["anthropic", "--type", "anthropic"], KEY
    )
    seen = _seen(instance, proxy)
    assert seen and {(*s[:2], s[3]) for s in seen} == {("api.anthropic.com", "CONNECT", 502)}, (
        proxy.describe()
    )
    assert standin.model not in listed.stdout, listed.stdout


BEDROCK_URL = "https://bedrock-runtime.us-east-1.amazonaws.com"
BEDROCK_HOSTS = ["bedrock-runtime.us-east-1.amazonaws.com", "bedrock.us-east-1.amazonaws.com"]


def test_bedrock_region_url_lists_models_in_that_region(instance: Instance) -> None:
    # function: drives the HTTPS proxy
    standin, proxy, _, listed = _listing(
        instance,
        "bedrock",
        BEDROCK_HOSTS,
        ["bedrock", "--type", "bedrock", "--url", BEDROCK_URL],
        aws_credentials_blob(),
    )
    seen = _seen(instance, proxy)
    assert {(host, status) for host, _, _, status in seen} == {
        ("bedrock.us-east-1.amazonaws.com", 200)
    }, proxy.describe()
    assert ("bedrock.us-east-1.amazonaws.com", "GET", "/foundation-models", 200) in seen
    assert standin.model in listed.stdout, listed.stdout


def test_openai_eu_url_lists_models_at_eu_api_openai_com(instance: Instance) -> None:
    # function: drives the HTTPS proxy
    standin, proxy, added, listed = _listing(
        instance,
        "openai",
        ["eu.api.openai.com"],
        ["openai-eu", "--type", "openai", "--url", "https://eu.api.openai.com/v1"],
        KEY,
    )
    assert "https://eu.api.openai.com/v1" in added.stdout, added.stdout
    assert _seen(instance, proxy) == [("eu.api.openai.com", "GET", "/v1/models", 200)], (
        proxy.describe()
    )
    assert standin.model in listed.stdout, listed.stdout


def _github(instance: Instance, tag: str) -> HttpsProxy:
    """A GitHub releases stand-in whose latest release is ``tag``, behind the proxy."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True, startup_timeout=10.0)
    server.expect_request("/repos/contenox/contenox/releases/latest").respond_with_json(
        {"tag_name": tag, "name": tag, "assets": []}
    )
    server.start()
    instance.cleanups.append(lambda: server.stop() if server.is_running() else None)
    return serve_https_proxy(instance, {"api.github.com": server.url_for("/").rstrip("/")})


def test_update_check_asks_api_github_com_and_reports_no_newer_release(instance: Instance) -> None:
    # function: drives the HTTPS proxy and a GitHub releases stand-in
    proxy = _github(instance, "v1.0.0")
    checked = instance.must("update", "check", env=proxy.env)
    assert "Already on the latest version (v1.0.0)." in checked.stdout, checked.stdout
    assert _seen(instance, proxy) == [
        ("api.github.com", "GET", "/repos/contenox/contenox/releases/latest", 200)
    ], proxy.describe()


def test_update_check_reports_a_newer_release_without_installing(instance: Instance) -> None:
    # function: drives the HTTPS proxy and a GitHub releases stand-in (control: only the tag)
    proxy = _github(instance, "v9.9.9")
    checked = instance.must("update", "check", env=proxy.env)
    assert "Update available: v9.9.9" in checked.stdout, checked.stdout
    assert _seen(instance, proxy) == [
        ("api.github.com", "GET", "/repos/contenox/contenox/releases/latest", 200)
    ], proxy.describe()
