"""`contenox setup`: the interactive wizard, at a terminal and without one."""

from __future__ import annotations

from harness import Case, Instance, open_terminal, step

PROVIDERS = [
    "Ollama (local daemon)",
    "Ollama Cloud",
    "OpenAI",
    "Anthropic",
    "Google Gemini",
    "Google Vertex AI",
    "AWS Bedrock",
    "vLLM (self-hosted)",
]
# A loopback port nothing listens on: the wizard's reachability check fails
# there without leaving the machine.
DEAD_URL = "http://127.0.0.1:9"

CLOSED_STDIN = Case(
    name="setup with a closed stdin offers the providers then changes nothing",
    init=False,
    steps=[
        step(
            "setup",
            stdin="",
            exit_code=1,
            stdout_has=[*PROVIDERS, "No input received", "made no changes"],
        ),
        step("config", "get", "default-provider", stdout_lacks=["ollama", "vllm", "openai"]),
        step("backend", "list", stdout_has=["No backends registered"]),
    ],
)

PIPED_STDIN = Case(
    name="setup with a piped answer that runs out guesses no default model",
    init=False,
    steps=[
        step("setup", stdin="1\n", exit_code=None, timeout=60),
        step("config", "get", "default-model", stdout_lacks=["qwen3:8b"]),
    ],
    defect=(
        "`printf '1\\n' | contenox setup` picks Ollama, then at 'Model [qwen3:8b]:' stdin is at "
        "EOF and the wizard takes the default: it prints '✓ Model:    qwen3:8b', saves "
        "default-provider=ollama and default-model=qwen3:8b and exits 0; contenox-cli.md "
        "`contenox setup`: 'It needs a real terminal (reads answers from stdin) and will not "
        "guess a default from a closed or piped stdin.'"
    ),
)


def test_setup_at_a_terminal_sets_the_provider_model_and_backend(instance: Instance) -> None:
    # function: needs a terminal answered prompt by prompt
    term = open_terminal(instance, "setup")
    term.wait_for("Provider (1-8, q to quit):", timeout=60)
    term.send_line("8")
    term.wait_for("URL:", timeout=30)
    term.send_line(DEAD_URL)
    term.wait_for("Model:", timeout=30)
    term.send_line("my-model")
    term.wait_for("Config saved", timeout=60)
    term.wait_exit(timeout=60)
    assert "my-model" in instance.must("config", "get", "default-model").stdout
    assert "vllm" in instance.must("config", "get", "default-provider").stdout
    assert DEAD_URL in instance.must("backend", "list").stdout
    # The global presets are in place too: ~/.contenox is ready for use.
    assert (instance.home / ".contenox" / "agents.toml").is_file(), term.describe()
