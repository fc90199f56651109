#!/usr/bin/env python3
"""Boot a guest image headless (QEMU or any emulator with a serial console on stdio) and check it.

Starts the given command line, waits for the shell, runs commands on the serial console and checks
their output, then stops the guest with a final command and checks the emulator's exit status.

Usage:
  boot-test.py [--timeout S] [--log FILE] [--check 'CMD=>EXPECTED']... [--final CMD]
               [--final-status N] -- EMULATOR ARGS...

--check: run CMD in the guest; its output must contain EXPECTED (a plain substring).
--final: the command that stops the guest (default `poweroff -f`); the emulator must then exit
         with --final-status (default 0).
Prints the time to the first shell prompt and to the end; exits non-zero on any failure.
"""

import argparse
import os
import re
import select
import subprocess
import sys
import time

PROMPT = re.compile(rb"root@rv32vm:[^\r\n]*# ")


class Console:
    """The emulator process and everything it has printed so far."""

    def __init__(self, argv, log_path):
        self.start = time.monotonic()
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT)
        self.output = b""
        self.log = open(log_path, "wb") if log_path else None

    def elapsed(self):
        return time.monotonic() - self.start

    def read_some(self, deadline):
        """Append whatever arrives before the deadline; False once the emulator has exited."""
        remaining = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self.process.stdout], [], [], min(remaining, 0.5))
        if not ready:
            return self.process.poll() is None
        chunk = os.read(self.process.stdout.fileno(), 65536)
        if not chunk:
            return False
        self.output += chunk
        if self.log:
            self.log.write(chunk)
            self.log.flush()
        return True

    def wait_for(self, pattern, deadline, start_at=0):
        """Wait until pattern (a compiled bytes regex) matches output[start_at:]."""
        while True:
            match = pattern.search(self.output, start_at)
            if match:
                return match
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out waiting for {pattern.pattern!r}")
            if not self.read_some(deadline):
                match = pattern.search(self.output, start_at)
                if match:
                    return match
                raise RuntimeError(f"emulator exited while waiting for {pattern.pattern!r}")

    def send(self, text):
        self.process.stdin.write(text.encode())
        self.process.stdin.flush()

    def run(self, command, marker_id, deadline):
        """Run a shell command; return its output (what it printed before the end marker)."""
        start_at = len(self.output)
        # The typed line echoes as $((...)); only the shell's own output has the evaluated number.
        self.send(f"{command}; echo @@END-$(({marker_id}+1000))@@\n")
        match = self.wait_for(re.compile(rb"@@END-%d@@" % (marker_id + 1000)), deadline, start_at)
        text = self.output[start_at:match.start()].decode(errors="replace")
        # Drop the echoes of the typed line (by the tty and again by the shell's line editor).
        lines = text.replace("\r", "").split("\n")
        return "\n".join(line for line in lines if "@@END-$((" not in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--log")
    parser.add_argument("--check", action="append", default=[])
    parser.add_argument("--final", default="poweroff -f")
    parser.add_argument("--final-status", type=int, default=0)
    parser.add_argument("emulator", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.emulator[1:] if args.emulator[:1] == ["--"] else args.emulator
    if not argv:
        parser.error("no emulator command given")

    console = Console(argv, args.log)
    deadline = time.monotonic() + args.timeout
    failures = []
    try:
        console.wait_for(PROMPT, deadline)
        prompt_time = console.elapsed()
        print(f"boot-test: shell prompt after {prompt_time:.2f} s")
        for number, check in enumerate(args.check):
            command, sep, expected = check.partition("=>")
            if not sep:
                parser.error(f"--check needs CMD=>EXPECTED: {check!r}")
            output = console.run(command.strip(), number, deadline)
            status = "ok" if expected.strip() in output else "FAILED"
            print(f"boot-test: [{status}] {command.strip()}")
            for line in output.strip().splitlines():
                print(f"    {line.rstrip()}")
            if status != "ok":
                failures.append(f"{command.strip()!r}: expected {expected.strip()!r}")
        console.send(args.final + "\n")
        while console.process.poll() is None and time.monotonic() < deadline:
            console.read_some(deadline)
        if console.process.poll() is None:
            failures.append(f"emulator still running after {args.final!r}")
        elif console.process.returncode != args.final_status:
            failures.append(f"{args.final!r}: emulator exit status {console.process.returncode},"
                            f" expected {args.final_status}")
        else:
            print(f"boot-test: [ok] {args.final} -> exit status {console.process.returncode}"
                  f" after {console.elapsed():.2f} s")
    except (TimeoutError, RuntimeError) as error:
        failures.append(str(error))
    finally:
        if console.process.poll() is None:
            console.process.kill()
            console.process.wait()
        if console.log:
            console.log.close()
    if failures:
        tail = console.output[-3000:].decode(errors="replace")
        print("boot-test: FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        print("--- last console output ---\n" + tail, file=sys.stderr)
        return 1
    print("boot-test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
