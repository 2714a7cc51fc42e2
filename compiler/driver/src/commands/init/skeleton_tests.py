"""Hidden tests for the greeter in spec.md: the evaluation runs them after every landing and
`specc report` draws the score. No worker ever sees this directory. Replace them with your
own when you replace the spec; the output is TAP (one `ok N - name` line a test)."""
import subprocess, sys

def run(*args):
    return subprocess.run([sys.executable, "-m", "hello", *args], capture_output=True, text=True)

checks = [
    ("greets by name", lambda: run("World").stdout == "Hello, World!\n"),
    ("no name: usage on stderr, status 2", lambda: (lambda r: r.returncode == 2 and r.stderr.strip() != "")(run())),
    ("--shout shouts", lambda: run("--shout", "World").stdout.strip() == "HELLO, WORLD!"),
]
print(f"1..{len(checks)}")
for i, (name, check) in enumerate(checks, 1):
    try:
        ok = check()
    except Exception:  # noqa: BLE001
        ok = False
    print(f"{'ok' if ok else 'not ok'} {i} - {name}")
