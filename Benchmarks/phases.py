#!/usr/bin/env python3
"""Splits the wall time of batch commands into phases, from system-call tracepoints.

    Benchmarks/phases.py RUNS NAME='COMMAND' [NAME='COMMAND' ...]

Runs the commands interleaved (each round starting with the next one) under
`perf record` of five tracepoints: the end of `execve`, `connect`, `sendto`, the return of
`recvfrom` and the process's exit, and prints for each the medians of

- to-connect: from the new program's start to its first `connect`;
- requests:   from its first `sendto` to its last `recvfrom`;
- tail:       from that read to the process's exit;
- total:      from the program's start to its exit.

Needs `perf` and permission to trace (root, or kernel.perf_event_paranoid <= -1). The
commands' standard output goes to /dev/null. Example (the batch scenario's lines, with
the test server running on port 8282):

    Benchmarks/phases.py 30 af='af batch --parallel=10 lines.txt' \\
        curl='curl -s -Z --parallel-max 10 -K lines.cfg'
"""
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

EVENTS = ["syscalls:sys_exit_execve", "syscalls:sys_enter_connect", "syscalls:sys_enter_sendto",
          "syscalls:sys_exit_recvfrom", "sched:sched_process_exit"]
PHASES = ["to-connect", "requests", "tail", "total"]


def phases(command, data):
    """Runs `command` once under perf; returns its four phases in milliseconds, or None."""
    record = ["perf", "record", "-q", "-o", data] + [part for event in EVENTS for part in ("-e", event)]
    with open(os.devnull, "w") as null:
        subprocess.run(record + shlex.split(command), stdout=null, stderr=null)
    script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True).stdout
    events = [(float(m.group(1)), m.group(2)) for m in re.finditer(r" (\d+\.\d+):\s+(\S+): ", script)]
    if not events:
        return None

    def times(name):
        return [stamp for stamp, event in events if name in event]

    start, connects, sends, reads, exits = (times(name) for name in
                                            ("execve", "connect", "sendto", "recvfrom", "process_exit"))
    if not (start and connects and sends and reads and exits):
        return None
    begin = start[0]
    return [(connects[0] - begin) * 1000, (reads[-1] - sends[0]) * 1000,
            (exits[-1] - reads[-1]) * 1000, (exits[-1] - begin) * 1000]


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    runs = int(sys.argv[1])
    commands = [argument.split("=", 1) for argument in sys.argv[2:]]
    if any(len(pair) != 2 for pair in commands):
        sys.exit("each command is NAME='COMMAND'")
    results = {name: [] for name, _ in commands}
    with tempfile.TemporaryDirectory() as directory:
        data = os.path.join(directory, "perf.data")
        for round_number in range(runs):
            shift = round_number % len(commands)
            for name, command in commands[shift:] + commands[:shift]:
                measured = phases(command, data)
                if measured:
                    results[name].append(measured)
    for name, rows in results.items():
        if not rows:
            print(f"{name}: no complete run (is perf allowed to trace?)")
            continue
        medians = " ".join(f"{phase} {statistics.median(row[i] for row in rows):.2f}" for i, phase in enumerate(PHASES))
        print(f"{name} ({len(rows)} runs): {medians} ms")


if __name__ == "__main__":
    main()
