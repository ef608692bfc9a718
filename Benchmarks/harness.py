#!/usr/bin/env python3
"""Side-by-side benchmarks of af against curl (and HTTPie when it is installed).

Commands are run interleaved (af, curl, af, curl, ...) so that drift in machine load hits
every tool alike; the report gives medians and the ratio to curl. Wall time and peak memory
come from the spawn helper (Benchmarks/spawn.c: fork, exec, wait4's rusage), which run.sh
builds and passes as --spawn.

Usage: harness.py SCENARIO --af PATH --server URL [--runs N]
Scenarios: startup, download, upload-multipart, upload-raw, format, batch, all
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


# The spawn helper (Benchmarks/spawn.c, built by run.sh): set by main() from --spawn.
SPAWN = None


def run_once(argv, stdin=None, stdout=None):
    """Runs argv; returns (seconds, peak RSS in KiB, exit status, CPU seconds: user and system
    time over all its threads). Its standard error goes to a temporary file, which `failure`
    reads when the status is not 0.

    Through the spawn helper when there is one: a child forked straight from Python reports
    at least Python's own peak RSS (Linux carries the forking process's high-water mark
    across exec), about 14 MiB, which hid every smaller figure.
    """
    devnull = open(os.devnull, "wb")
    ERRORS.seek(0)
    ERRORS.truncate()
    try:
        if SPAWN:
            reader, writer = os.pipe()
            try:
                process = subprocess.Popen([SPAWN, str(writer)] + list(argv), stdin=stdin or subprocess.DEVNULL,
                                           stdout=stdout or devnull, stderr=ERRORS, pass_fds=(writer,))
            finally:
                os.close(writer)
            with os.fdopen(reader) as results:
                report = results.read().split()
            process.wait()
            if process.returncode != 0 or len(report) != 4:
                sys.exit(f"harness: the spawn helper failed ({process.returncode}) running {argv}")
            return float(report[1]), int(report[2]), int(report[0]), float(report[3])
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdin=stdin or subprocess.DEVNULL, stdout=stdout or devnull, stderr=ERRORS)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        return elapsed, usage.ru_maxrss, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime
    finally:
        devnull.close()


# What the last command run_once ran wrote on standard error (af writes nothing there when
# it succeeds; curl -s neither): a command that fails once in hundreds of runs says why.
ERRORS = tempfile.TemporaryFile()


def failure(title, name, status, argv):
    """Ends the run, naming the command that failed and the end of what it wrote on standard error."""
    ERRORS.seek(0)
    said = ERRORS.read().decode("utf-8", "replace").strip().splitlines()[-5:]
    sys.exit(f"{title}: '{name}' exited {status}: {argv}" + "".join(f"\n  | {line}" for line in said))


def paired(times, base_times):
    """The ratio of each run to the peer's run of the same round (run one after the other,
    so a change in machine speed hits both): its median and middle half, which say how far
    the ratio of the medians can be trusted when single runs range over 2x."""
    ratios = [a / b for a, b in zip(times, base_times)]
    if len(ratios) < 4:
        return "-"
    low, middle, high = statistics.quantiles(ratios, n=4)
    return f"{middle:.2f}x ({low:.2f}-{high:.2f})"


def compare(title, commands, runs, shell=False, before_each=None):
    """commands: list of (name, argv or shell string), or (name, argv, path) to run with the
    file at path as standard input. Prints medians and ratios to the second entry (curl).
    before_each runs (untimed) before every command, e.g. to remove an output file."""
    inputs = {entry[0]: entry[2] for entry in commands if len(entry) > 2}
    commands = [(entry[0], entry[1]) for entry in commands]
    times = {name: [] for name, _ in commands}
    cpu = {name: [] for name, _ in commands}
    memory = {name: 0 for name, _ in commands}
    for index in range(runs):
        # Each round starts with the next tool, so that whatever one run leaves behind (a
        # file dropped from the page cache, a connection the server is still closing) lands
        # on every tool alike, not on the one that always comes first.
        shift = index % len(commands)
        for name, argv in commands[shift:] + commands[:shift]:
            if before_each:
                before_each()
            if shell:
                argv = ["/bin/sh", "-c", argv]
            if name in inputs:
                with open(inputs[name], "rb") as stdin:
                    seconds, rss, status, used = run_once(argv, stdin=stdin)
            else:
                seconds, rss, status, used = run_once(argv)
            if status != 0:
                failure(title, name, status, argv)
            times[name].append(seconds)
            cpu[name].append(used)
            memory[name] = max(memory[name], rss)
    base_name = commands[1][0]
    base = statistics.median(times[base_name])
    print(f"\n{title} ({runs} interleaved runs each)")
    print(f"  {'tool':<28} {'median':>10} {'ratio':>8} {'CPU':>10} {'peak RSS':>12}   {'range':<22} paired ratio (middle half)")
    for name, _ in commands:
        median = statistics.median(times[name])
        spread = f"{min(times[name]) * 1000:.2f}-{max(times[name]) * 1000:.2f} ms"
        # The median user and system time over all of the tool's threads: what it cost the
        # machine, which a tool running on several processors may spend beyond its wall time.
        used = statistics.median(cpu[name]) * 1000
        print(f"  {name:<28} {median * 1000:>8.2f}ms {median / base:>7.2f}x {used:>8.2f}ms {memory[name] / 1024:>9.1f} MiB   {spread:<22} {paired(times[name], times[base_name])}")
    return {name: statistics.median(values) for name, values in times.items()}, memory


def startup(args):
    url = f"{args.server}/bytes/1024"
    commands = [("af get (1 KiB)", [args.af, "get", url]), ("curl -s (1 KiB)", ["curl", "-s", url])]
    if shutil.which("http"):
        commands.append(("httpie (1 KiB)", ["http", "--ignore-stdin", "-b", "GET", url]))
    medians, _ = compare("Startup: whole-process time to GET a 1 KiB resource", commands, args.runs)
    ratio = medians[commands[0][0]] / medians[commands[1][0]]
    print(f"  => af/curl = {ratio:.2f} (target <= 1.30; issue 14: <= 1.00)")
    https_startup(args)


def https_startup(args):
    """A fresh process per HTTPS GET: HTTP/2 over TLS (nghttpd) and HTTP/1.1 over TLS (the
    test server), each tool verifying against the server's own CA."""
    with tempfile.TemporaryDirectory() as directory:
        served = os.path.join(directory, "h2")
        os.mkdir(served)
        make_file(os.path.join(served, "k.bin"), 1024)
        started = start_nghttpd(served)
        tls_server = start_tls_test_server(args.af)
        try:
            runs = max(20, args.runs // 2)
            cases = []
            if started is not None:
                _, port, cert = started
                cases.append(("HTTP/2", "nghttpd", f"https://127.0.0.1:{port}/k.bin", cert))
            else:
                print("\nHTTP/2 startup skipped: nghttpd (nghttp2-server) or openssl is not installed")
            if tls_server is not None:
                _, tls_url, tls_ca = tls_server
                cases.append(("HTTP/1.1", "test server --tls", f"{tls_url}/bytes/1024", tls_ca))
            for protocol, server, url, ca in cases:
                commands = [
                    (f"af, {protocol} over TLS", [args.af, f"--verify={ca}", url]),
                    (f"curl, {protocol} over TLS", ["curl", "-s", "--cacert", ca, url]),
                ]
                medians, _ = compare(f"Startup over TLS: a fresh process GETs 1 KiB over {protocol} ({server})", commands, runs)
                print(f"  => af/curl = {medians[commands[0][0]] / medians[commands[1][0]]:.2f} (issue 14: <= 1.00)")
        finally:
            for server in (started, tls_server):
                if server is not None:
                    server[0].kill()
                    server[0].wait()


def download(args):
    size = args.size
    with tempfile.TemporaryDirectory() as directory:
        af_out = os.path.join(directory, "af.bin")
        curl_out = os.path.join(directory, "curl.bin")
        url = f"{args.server}/bytes/{size}"
        commands = [
            ("af -d -o FILE", [args.af, "-q", "-d", "-o", af_out, url]),
            ("curl -s -o FILE", ["curl", "-s", "-o", curl_out, url]),
        ]

        def fresh():
            # Both tools write a new file each run: replacing a 1 GiB file costs a forced
            # writeback on ext4 whichever tool does it, and would measure the disk instead.
            for path in (af_out, curl_out):
                if os.path.exists(path):
                    os.remove(path)
            os.sync()

        # At least 7 runs: single runs of a 1 GiB write range over 2x on this kind of machine.
        medians, memory = compare(f"Download of {size >> 20} MiB to a file", commands, max(7, args.runs // 40), before_each=fresh)
        for name, _ in commands:
            print(f"  {name:<28} {size / medians[name] / (1 << 20):>8.0f} MiB/s")
        ratio = medians[commands[1][0]] / medians[commands[0][0]]
        print(f"  => af throughput / curl throughput = {ratio:.2f} (target >= 0.90); af peak RSS {memory[commands[0][0]] / 1024:.1f} MiB (target < 40)")

        # --report=json prints the body inside its document, once the request has ended: a
        # body past 1 MiB waits in a temporary file, so memory stays flat whatever its size.
        # curl's write-out has no body; it streams the body to standard output beside it.
        reports = [
            ("af --report=json", [args.af, "--report=json", url]),
            ("curl -s -w '%{json}'", ["curl", "-s", "-w", "%{json}", url]),
        ]
        medians, memory = compare(f"Download of {size >> 20} MiB with a JSON report, into /dev/null", reports, max(5, args.runs // 60))
        print(f"  => af peak RSS {memory[reports[0][0]] / 1024:.1f} MiB (target < 40; the body is base64 in the report)")


def make_file(path, size):
    block = os.urandom(1 << 20)
    with open(path, "wb") as handle:
        remaining = size
        while remaining > 0:
            handle.write(block[: min(len(block), remaining)])
            remaining -= len(block)
        # On disk before anything is timed: otherwise the kernel writes the fresh 1 GiB
        # back during the first runs, and whichever tool runs first pays for it.
        handle.flush()
        os.fsync(handle.fileno())


def start_upload_sink(args, reference, directory):
    """Starts ../shared/bench/upload-sink.py (the counting sink the project's upload figures
    come from) on a free port; returns (process, base URL, log path) or None."""
    sink = args.sink
    if not sink or not os.path.exists(sink):
        return None
    port = free_port()
    log = os.path.join(directory, "sink.log")
    process = subprocess.Popen([sys.executable, sink, "--port", str(port), "--log", log, "--ref", reference],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (process, f"http://127.0.0.1:{port}", log) if wait_for_port(process, port) else None


def upload_commands(af, url, path, multipart):
    if multipart:
        return [
            ("af --multipart file@PATH", [af, "-q", "post", url, f"file@{path}"]),
            ("curl -F file=@PATH", ["curl", "-s", "-o", "/dev/null", "-H", "Expect:", "-F", f"file=@{path}", url]),
        ]
    return [
        ("af post @PATH", [af, "-q", "post", url, f"@{path}"]),
        # curl's --data-binary @FILE reads the whole file into memory first (and gives up
        # at 1 GiB); -T streams it like af does.
        ("curl -T PATH -X POST", ["curl", "-s", "-o", "/dev/null", "-H", "Expect:", "-X", "POST", "-T", path, url]),
    ]


def upload(args, multipart):
    size = args.size
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "payload.bin")
        make_file(path, size)
        kind = "Multipart" if multipart else "Raw body"
        # At least 9 runs: single 1 GiB uploads here fall into two groups (about 350 and
        # about 1,000 ms) for every tool, so a median of five depends on the draw.
        runs = max(9, args.runs // 30)
        commands = upload_commands(args.af, f"{args.server}/discard", path, multipart)
        medians, memory = compare(f"{kind} upload of a {size >> 20} MiB file to the test server", commands, runs)
        ratio = medians[commands[0][0]] / medians[commands[1][0]]
        print(f"  => af time / curl time = {ratio:.2f} (target <= 1.00); af peak RSS {memory[commands[0][0]] / 1024:.1f} MiB (target < 40)")

        started = start_upload_sink(args, path, directory)
        if started is None:
            print(f"\n{kind} upload to upload-sink.py skipped: pass --sink PATH (../shared/bench/upload-sink.py)")
            return
        process, base, log = started
        try:
            commands = upload_commands(args.af, f"{base}/upload?t=bench", path, multipart)
            if not multipart:
                # Issue 14's target for a raw body: no slower than curl -F's multipart upload
                # of the same file to the same sink (the fastest way curl sends it).
                commands += upload_commands(args.af, f"{base}/upload?t=bench", path, True)[1:]
            medians, memory = compare(f"{kind} upload of a {size >> 20} MiB file to upload-sink.py (1 MiB recv)", commands, runs)
            ratio = medians[commands[0][0]] / medians[commands[1][0]]
            print(f"  => af time / curl time = {ratio:.2f} (target <= 1.00); af peak RSS {memory[commands[0][0]] / 1024:.1f} MiB (target < 40)")
            if not multipart:
                print(f"  => af time / curl -F time = {medians[commands[0][0]] / medians[commands[2][0]]:.2f} (issue 14: <= 1.00)")
        finally:
            process.kill()
            process.wait()
        with open(log) as handle:
            verdicts = [line.split("verdict=")[1].split()[0] for line in handle if "verdict=" in line]
        # Every body whole: one verdict a run of each command, multipart for curl -F.
        expected = {"multipart-match": runs * len(commands)} if multipart else {"raw-match": runs * 2, "multipart-match": runs}
        counted = {verdict: verdicts.count(verdict) for verdict in set(verdicts)}
        print(f"  sink verdicts: {len(verdicts)} bodies: " + ", ".join(f"{count} {verdict}" for verdict, count in sorted(counted.items())))
        if counted != expected:
            sys.exit(f"upload: the sink did not receive the whole file every time: {counted}, expected {expected}")


def format_json(args):
    url = f"{args.server}/large-json?mb={args.json_mb}"
    if not shutil.which("jq"):
        print("\nFormat benchmark skipped: jq is not installed")
        return
    runs = max(3, args.runs // 60)
    commands = [
        ("af --pretty=format | cat", f"'{args.af}' --pretty=format '{url}' > /dev/null"),
        ("curl -s | jq .", f"curl -s '{url}' | jq . > /dev/null"),
    ]
    medians, memory = compare(f"Formatting a {args.json_mb} MB minified JSON response into a pipe", commands, runs, shell=True)
    ratio = medians[commands[0][0]] / medians[commands[1][0]]
    # wait4 on the shell reports the largest child, which is af in the first pipeline.
    print(f"  => af / (curl | jq) = {ratio:.2f} (target <= 0.33); af peak RSS {memory[commands[0][0]] / 1024:.1f} MiB (target < 3x the document)")
    # Issue 14: the formatter's own rate, with and without colours and sorted keys. The
    # fetch alone (af without formatting) is the baseline subtracted from each.
    modes = [
        ("--pretty=format", ["--pretty=format"]),
        ("fetch only (no formatting)", []),
        ("--pretty=all (colours)", ["--pretty=all"]),
        ("--pretty=format --sort-keys", ["--pretty=format", "--sort-keys"]),
    ]
    rows = [(name, [args.af] + flags + [url]) for name, flags in modes]
    # The rates are differences of medians (a mode minus the fetch), so they move twice as
    # much as either: sort-keys read 1.8x-2.3x unsorted in runs of 5 while side by side it
    # held at 1.6x. At least 9 runs (15 with --runs 300); each takes a fraction of a second.
    medians, memory = compare(f"The formatter alone on {args.json_mb} MB (af modes; ratios to the fetch)", rows, max(9, args.runs // 20))
    fetch = medians[modes[1][0]]
    megabytes = args.json_mb
    for name, _ in [modes[0]] + modes[2:]:
        spent = max(medians[name] - fetch, 1e-6)
        print(f"  {name:<30} {megabytes / spent:>7.0f} MB/s of formatting ({spent * 1000:.0f} ms beyond the fetch)")
    unsorted = medians["--pretty=format"] - fetch
    sorted_keys = medians["--pretty=format --sort-keys"] - fetch
    print(f"  => format {megabytes / max(unsorted, 1e-6):.0f} MB/s (target >= 250), colours "
          f"{megabytes / max(medians['--pretty=all (colours)'] - fetch, 1e-6):.0f} MB/s (target >= 150), "
          f"sort-keys {sorted_keys / max(unsorted, 1e-6):.1f}x unsorted (target <= 2), peak RSS sorted "
          f"{memory['--pretty=format --sort-keys'] / 1024:.0f} MiB")

    # Markup: XML indented and an HTML page coloured, each about 7 MB (under the 8 MiB af
    # holds to format markup), against the fetch alone; peak RSS beside the document's size.
    markup_mb = 7
    xml_url = f"{args.server}/large-markup?mb={markup_mb}"
    html_url = f"{xml_url}&type=html"
    rows = [
        ("XML --pretty=format (indented)", [args.af, "--pretty=format", xml_url]),
        ("XML fetch only", [args.af, xml_url]),
        ("HTML --pretty=all (coloured)", [args.af, "--pretty=all", html_url]),
    ]
    medians, memory = compare(f"Markup of {markup_mb} MB (XML indented, HTML coloured)", rows, max(5, args.runs // 30))
    fetch = medians["XML fetch only"]
    for name, _ in [rows[0], rows[2]]:
        spent = max(medians[name] - fetch, 1e-6)
        # af holds a document it formats as received and as text (twice its size) on top of
        # what the fetch alone takes; it held three more copies before the thirty-sixth session.
        print(f"  {name:<32} {markup_mb / spent:>5.0f} MB/s beyond the fetch, peak RSS {memory[name] / 1024:.0f} MiB "
              f"({(memory[name] - memory['XML fetch only']) / 1024:.0f} MiB beyond the fetch's; at most 3x the document: "
              f"{'met' if memory[name] - memory['XML fetch only'] <= 3 * markup_mb * 1024 else 'NOT met'})")

    # A hostile body: nothing but control characters a terminal would obey (ESC, BEL, C1
    # CSI), shown escaped and coloured (--pretty=all), against the fetch alone. Until the
    # sixty-seventh session each escape built strings character by character: 4 MB of
    # them took 2.4 s of CPU.
    controls_mb = 8
    controls_url = f"{args.server}/hostile/controls?mb={controls_mb}"
    rows = [
        ("control characters --pretty=all", [args.af, "--pretty=all", controls_url]),
        ("control characters fetch only", [args.af, controls_url]),
    ]
    medians, memory = compare(f"A body of {controls_mb} MB of control characters, escaped", rows, max(5, args.runs // 30))
    spent = max(medians[rows[0][0]] - medians[rows[1][0]], 1e-6)
    print(f"  => {controls_mb / spent:.0f} MB/s of control characters escaped beyond the fetch, peak RSS {memory[rows[0][0]] / 1024:.0f} MiB")


def write_lines(path, lines):
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def url_files(directory, name, urls):
    """Writes `urls` as an af batch file and as a curl config; returns both paths."""
    lines = os.path.join(directory, f"{name}.txt")
    write_lines(lines, urls)
    config = os.path.join(directory, f"{name}.cfg")
    write_lines(config, [f'url = "{url}"' for url in urls])
    return lines, config


def free_port():
    """A TCP port nothing listens on now."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(process, port):
    """Waits up to 5 s for `process` to listen on `port`; kills it and returns False if not."""
    import socket
    for _ in range(100):
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    process.kill()
    return False


def start_nghttpd(directory):
    """Starts nghttpd with a throw-away certificate on a free port; returns (process, port, CA path) or None."""
    nghttpd = shutil.which("nghttpd") or ("/usr/sbin/nghttpd" if os.path.exists("/usr/sbin/nghttpd") else None)
    if not nghttpd or not shutil.which("openssl"):
        return None
    key, cert = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    port = free_port()
    process = subprocess.Popen([nghttpd, "-d", directory, str(port), key, cert], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (process, port, cert) if wait_for_port(process, port) else None


def start_tls_test_server(af):
    """Starts af-test-server --tls next to af; returns (process, base URL, CA path) or None."""
    binary = os.path.join(os.path.dirname(af), "af-test-server")
    if not os.path.exists(binary):
        return None
    process = subprocess.Popen([binary, "--tls"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    ca = process.stdout.readline().strip().removeprefix("CA certificate: ")
    return process, url, ca


def plain_gets(args, directory, name, server, count, parallel):
    """The first table's commands: `count` GETs of 1 KiB from `server`, `parallel` in flight,
    by af batch, curl -Z and (when built) the AFEngine library alone, which tells the engine's
    share. Returns the commands (af's first, curl's second) and the file of lines they read."""
    lines, config = url_files(directory, name, [f"{server}/bytes/1024?n={n}" for n in range(count)])
    commands = [
        (f"af batch --parallel={parallel}", [args.af, "batch", f"--parallel={parallel}", lines]),
        (f"curl -Z --parallel-max {parallel}", ["curl", "-s", "-Z", "--parallel-max", str(parallel), "-K", config]),
    ]
    if args.engine_batch and os.path.exists(args.engine_batch):
        commands.append(("AFEngine alone (no CLI)", [args.engine_batch, lines, str(parallel)]))
    return commands, lines


def tiny(args, directory, count, parallel, runs):
    """The first table's requests against Benchmarks/tiny-server.c, which answers in a few µs
    of CPU where the test server takes about 35: what each client costs when the server
    leaves the machine's processors to it. For reading the first table, no target."""
    port = free_port()
    process = subprocess.Popen([args.tiny_server, str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if process.stdout.readline().strip() != "ready":
            print("\nthe tiny server did not start; its table skipped")
            return
        commands, _ = plain_gets(args, directory, "h1-tiny", f"http://127.0.0.1:{port}", count, parallel)
        compare(f"The same {count} GETs against tiny-server.c (a server of a few µs a request; no target)", commands, runs)
    finally:
        process.kill()
        process.wait()


def batch(args):
    count, parallel = 500, 10
    with tempfile.TemporaryDirectory() as directory:
        commands, lines = plain_gets(args, directory, "h1-plain", args.server, count, parallel)
        # Single runs of one command range over 2x here (32-73 ms for af, 26-52 ms for curl
        # in one row), so a median of 10 moved by a tenth between runs: 30 at --runs 300.
        runs = max(15, args.runs // 10)
        medians, _ = compare(f"{count} GETs of 1 KiB in one process, {parallel} in flight (HTTP/1.1)", commands, runs)
        ratio = medians[commands[0][0]] / medians[commands[1][0]]
        print(f"  => af batch / curl -Z = {ratio:.2f} (target <= 1.00)")
        if args.tiny_server and os.path.exists(args.tiny_server):
            tiny(args, directory, count, parallel, runs)

        # The same lines on standard input, read as they arrive (`af batch -`, which plans each
        # line when it starts instead of checking the file first), beside the file's run.
        (af_name, af_argv), curl = commands[0], commands[1]
        streamed = [
            (f"af batch --parallel={parallel} - < FILE", [args.af, "batch", f"--parallel={parallel}", "-"], lines),
            curl,
            (f"{af_name} FILE", af_argv),
        ]
        compare(f"{count} GETs of 1 KiB, the lines on standard input, {parallel} in flight", streamed, runs)

        # A JSON line a request, as CI jobs collect them: af's report holds the request, the
        # response's head and body (base64 for these binary bodies) and the metrics; curl's
        # write-out holds the transfer's variables and no body.
        # (-o names one URL's output, so curl's config gives each URL its own.)
        discarding = os.path.join(directory, "h1-discard.cfg")
        write_lines(discarding, [f'url = "{args.server}/bytes/1024?n={n}"\noutput = "/dev/null"' for n in range(count)])
        reports = [
            ("af batch --report=json", [args.af, "batch", f"--parallel={parallel}", "--report=json", lines]),
            ("curl -Z -w '%{json}'", ["curl", "-s", "-Z", "--parallel-max", str(parallel), "-w", "%{json}\n", "-K", discarding]),
        ]
        compare(f"{count} GETs of 1 KiB with a JSON line for each, {parallel} in flight", reports, runs)

        served = os.path.join(directory, "h2")
        os.mkdir(served)
        make_file(os.path.join(served, "k.bin"), 1024)
        started = start_nghttpd(served)
        tls_server = start_tls_test_server(args.af)
        if started is None or tls_server is None:
            for server in (started, tls_server):
                if server is not None:
                    server[0].kill()
            print("\nHTTP/2 batch skipped: nghttpd (nghttp2-server) or openssl is not installed")
        else:
            process, port, cert = started
            tls_process, tls_url, tls_ca = tls_server
            try:
                h2lines, h2config = url_files(directory, "h2", [f"https://127.0.0.1:{port}/k.bin?n={n}" for n in range(count)])
                h1lines, h1config = url_files(directory, "h1-tls", [f"{tls_url}/bytes/1024?n={n}" for n in range(count)])
                commands = [
                    ("af batch, HTTP/2 (nghttpd)", [args.af, "batch", f"--parallel={parallel}", f"--verify={cert}", h2lines]),
                    ("curl -Z, HTTP/1.1 (test server)", ["curl", "-s", "-Z", "--parallel-max", str(parallel), "--http1.1", "--cacert", tls_ca, "-K", h1config]),
                    ("curl -Z, HTTP/2 (nghttpd)", ["curl", "-s", "-Z", "--parallel-max", str(parallel), "--cacert", cert, "-K", h2config]),
                    ("af batch, HTTP/1.1 (test server)", [args.af, "batch", f"--parallel={parallel}", "--http-version=1.1", f"--verify={tls_ca}", h1lines]),
                ]
                medians, _ = compare(f"{count} GETs of 1 KiB over TLS, {parallel} in flight", commands, runs)
                ratio = medians[commands[0][0]] / medians[commands[1][0]]
                print(f"  => af batch over HTTP/2 / curl -Z over HTTP/1.1 = {ratio:.2f} (target < 1.00)")

                # Every request on a new connection (the server closes each one after its
                # answer): what TLS session resumption across lines is worth. curl -Z resumes
                # through its share handle.
                closing = [f"{tls_url}/bytes/1024?n={n}" for n in range(count // 2)]
                close_lines = os.path.join(directory, "h1-close.txt")
                write_lines(close_lines, [f"{url} Connection:close" for url in closing])
                close_config = os.path.join(directory, "h1-close.cfg")
                write_lines(close_config, [f'url = "{url}"' for url in closing])
                parallel_close = 4
                commands = [
                    ("af batch, a new connection each", [args.af, "batch", f"--parallel={parallel_close}", f"--verify={tls_ca}", close_lines]),
                    ("curl -Z, a new connection each", ["curl", "-s", "-Z", "--parallel-max", str(parallel_close), "--cacert", tls_ca,
                                                        "-H", "Connection: close", "-K", close_config]),
                ]
                medians, _ = compare(f"{len(closing)} GETs over TLS, each on a new connection, {parallel_close} in flight (TLS sessions resumed)", commands, runs)
                ratio = medians[commands[0][0]] / medians[commands[1][0]]
                print(f"  => af batch / curl -Z = {ratio:.2f}")
            finally:
                for child in (process, tls_process):
                    child.kill()
                    child.wait()

        many = 10_000
        big = os.path.join(directory, "many.txt")
        write_lines(big, [f"{args.server}/bytes/1024?n={n}" for n in range(many)])
        seconds, rss, status, _ = run_once([args.af, "batch", "--parallel=20", big])
        if status != 0:
            failure("batch", f"af batch of {many} lines", status, [args.af, "batch", "--parallel=20", big])
        print(f"\n{many} GETs of 1 KiB, 20 in flight: af batch {seconds:.2f}s, peak RSS {rss / 1024:.1f} MiB (target < 40)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["startup", "download", "upload-multipart", "upload-raw", "format", "batch", "all"])
    parser.add_argument("--af", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--size", type=int, default=1 << 30)
    parser.add_argument("--json-mb", type=int, default=25)
    parser.add_argument("--spawn", help="the spawn helper (Benchmarks/spawn.c), for true peak RSS figures")
    parser.add_argument("--engine-batch", help="the EngineBatch program (Benchmarks/EngineBatch), for the batch scenario")
    parser.add_argument("--tiny-server", help="the tiny-server program (Benchmarks/tiny-server.c), for the batch scenario")
    default_sink = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench", "upload-sink.py")
    parser.add_argument("--sink", default=default_sink if os.path.exists(default_sink) else None,
                        help="upload-sink.py for the second upload comparison (default: ../shared/bench/upload-sink.py)")
    args = parser.parse_args()
    global SPAWN
    SPAWN = args.spawn
    if not SPAWN:
        print("harness: no --spawn helper: peak RSS figures below ~14 MiB are Python's own, not the tool's")
    scenarios = {
        "startup": startup,
        "download": download,
        "upload-multipart": lambda a: upload(a, True),
        "upload-raw": lambda a: upload(a, False),
        "format": format_json,
        "batch": batch,
    }
    for index, name in enumerate(scenarios if args.scenario == "all" else [args.scenario]):
        if index > 0:
            # What one scenario leaves behind (1 GiB files written and deleted, their blocks
            # and page cache still being released) must not land on the next one's runs.
            os.sync()
            time.sleep(3)
        scenarios[name](args)


if __name__ == "__main__":
    main()
