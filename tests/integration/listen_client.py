#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# listen_client.py: the clients test_listen.sh needs that curl is not:
# raw requests, crowds, slow readers, half-open connections, heads sent
# a byte a second, clients from other loopback addresses, unix-socket
# clients, and the parsers of the scrape configs in examples/.  Standard library only,
# plus python3-yaml for the Parca file.  Each command prints one line per
# fact, "key value", for the shell to check.
import errno
import select
import socket
import sys
import threading
import time


def dial(port, host="127.0.0.1", rcvbuf=0, src=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if src:
        s.bind((src, 0))    # lo answers all of 127/8: another peer
    s.settimeout(30)
    s.connect((host, port))
    return s


def metrics_req(port):
    return b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port


def ask(port, src=None):
    """One /metrics request: (status, milliseconds)."""
    t0 = time.monotonic()
    try:
        s = dial(port, src=src)
        s.sendall(metrics_req(port))
        code = status_of(read_all(s))
        s.close()
    except OSError as e:
        code = "error-" + errno.errorcode.get(e.errno, e.__class__.__name__)
    return code, (time.monotonic() - t0) * 1000


def read_all(s, limit=1 << 24):
    data = b""
    try:
        while len(data) < limit:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def status_of(data):
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 2 and parts[0].startswith(b"HTTP/") else "none"


def cmd_freeport():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()


def cmd_hold(port, secs):
    """Listen on the port for SECS seconds: the port-in-use case."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(1)
    print("listening", flush=True)
    time.sleep(secs)


def cmd_raw(port, request):
    """Send REQUEST (with \\r\\n escapes) and print the status and the body's first line."""
    s = dial(port)
    s.sendall(request.encode().decode("unicode_escape").encode("latin-1"))
    data = read_all(s)
    s.close()
    body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
    print("status", status_of(data))
    print("body", body.split(b"\n", 1)[0].decode("utf-8", "replace"))


def cmd_concurrent(port, n, seconds):
    """N profile requests at once: the status of each, sorted."""
    codes = []
    lock = threading.Lock()

    def one():
        try:
            s = dial(port)
            s.sendall(b"GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (seconds, port))
            data = read_all(s)
            s.close()
            code = status_of(data)
            if code == "200" and b"\r\n\r\n\x1f\x8b" not in data:
                code = "200-not-gzip"
        except OSError as e:
            code = "error-%s" % e.__class__.__name__
        with lock:
            codes.append(code)

    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("codes", " ".join(sorted(codes)))


def cmd_early(port, seconds, after):
    """A profile request whose client hangs up after AFTER seconds."""
    s = dial(port)
    s.sendall(b"GET /debug/pprof/profile?seconds=%d HTTP/1.0\r\n\r\n" % seconds)
    time.sleep(after)
    s.close()
    print("closed", 1)


def cmd_abuse(port, hold):
    """
    At once: 100 silent connections, a half-open one (half a head, then
    nothing), a slow reader (a tiny receive buffer, a profile and the
    metrics asked for, never read), garbage bytes.  Held for HOLD seconds;
    prints how the server treated each.
    """
    t0 = time.time()
    print("start_mono", "%.3f" % time.monotonic(), flush=True)
    crowd, refused = [], 0
    for _ in range(100):
        try:
            crowd.append(dial(port))
        except OSError:
            refused += 1
    time.sleep(0.5)
    # Those past the server's cap got a 503 and a close at once.
    answered503 = 0
    for s in crowd:
        s.setblocking(False)
        try:
            if status_of(s.recv(4096)) == "503":
                answered503 += 1
        except (BlockingIOError, ConnectionResetError):
            pass
    for s in crowd:
        s.close()
    print("crowd_refused_503", answered503 + refused)
    half = dial(port)
    half.sendall(b"GET /metr")
    t_half = time.time()
    slow = dial(port, rcvbuf=1024)
    slow.sendall(b"GET /debug/pprof/profile?seconds=2 HTTP/1.0\r\n\r\n")
    slow2 = dial(port, rcvbuf=1024)
    slow2.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    junk = dial(port)
    junk.sendall(bytes(range(256)) * 4 + b"\r\n\r\n")
    print("junk_status", status_of(read_all(junk)))
    junk.close()
    # The half-open client is closed at the head deadline (10 s): wait for it.
    half.settimeout(hold)
    try:
        closed = half.recv(1) == b""
    except socket.timeout:
        closed = False
    except ConnectionResetError:
        closed = True
    print("half_open_closed_after", "%.1f" % (time.time() - t_half) if closed else "never")
    half.close()
    rest = hold - (time.time() - t0)
    if rest > 0:
        time.sleep(rest)
    slow.close()
    slow2.close()
    print("end_mono", "%.3f" % time.monotonic())


def cmd_perpeer(port, n):
    """
    N silent connections from 127.0.0.1 held, then one more from there
    (its status) and a /metrics from 127.0.0.2 (its status and time).
    """
    held = [dial(port) for _ in range(n)]
    time.sleep(0.3)
    extra = dial(port)
    extra.settimeout(5)
    print("extra_status", status_of(read_all(extra)))
    extra.close()
    code, ms = ask(port, src="127.0.0.2")
    print("other_status", code)
    print("other_ms", "%.0f" % ms)
    for s in held:
        s.close()


def cmd_dribble(port, secs):
    """
    A head sent one byte a second from 127.0.0.2 (when does the server
    close it?) while /metrics is asked from 127.0.0.1 every half second
    (the slowest answer) for SECS seconds.
    """
    head = metrics_req(port)
    d = dial(port, src="127.0.0.2")
    t0 = time.monotonic()
    closed, sent, worst, codes = None, 0, 0.0, set()
    next_probe = t0
    while time.monotonic() - t0 < secs:
        now = time.monotonic()
        if closed is None and now - t0 >= sent:
            try:
                d.send(head[sent:sent + 1])
                sent += 1
            except OSError:
                closed = now - t0
        if now >= next_probe:
            code, ms = ask(port)
            codes.add(code)
            worst = max(worst, ms)
            next_probe = now + 0.5
        if closed is None and select.select([d], [], [], 0.05)[0]:
            try:
                if d.recv(4096) == b"":
                    closed = time.monotonic() - t0
            except OSError:
                closed = time.monotonic() - t0
    d.close()
    print("dribbler_bytes", sent)
    print("dribbler_closed_after", "%.1f" % closed if closed is not None else "never")
    print("probe_codes", " ".join(sorted(codes)))
    print("probe_worst_ms", "%.0f" % worst)


def cmd_slowloris(port, n):
    """
    N connections from 127.0.0.2 and 127.0.0.3 (half each), each with the
    first bytes of a head and then a byte a second; after 1.5 s a /metrics
    from 127.0.0.1: its status and time.
    """
    conns = []
    for i in range(n):
        s = dial(port, src="127.0.0.%d" % (2 + i % 2))
        s.sendall(b"GET /met")
        conns.append(s)
    for _ in range(3):
        time.sleep(0.5)
        for s in conns:
            try:
                s.send(b"r")
            except OSError:
                pass
    code, ms = ask(port)
    print("probe_status", code)
    print("probe_ms", "%.0f" % ms)
    for s in conns:
        s.close()


def unix_dial(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def cmd_unix(path, hold=0, secs=0):
    """
    /metrics over unix socket PATH: its status, or the connect error.
    With HOLD: HOLD silent connections kept first, the status of one more,
    and all held SECS seconds more (another user's turn meanwhile).
    """
    held = []
    try:
        held = [unix_dial(path) for _ in range(hold)]
        time.sleep(0.3 if hold else 0)
        s = unix_dial(path)
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        except OSError:
            pass    # answered and closed before the request: the answer is still there
        print("status", status_of(read_all(s)), flush=True)
        s.close()
    except OSError as e:
        print("status", "error-" + errno.errorcode.get(e.errno, "?"), flush=True)
    time.sleep(secs)
    for s in held:
        s.close()


def cmd_alloy(path):
    """
    A strict reader of the Alloy block syntax, enough for examples/config.alloy:
    blocks NAME [\"LABEL\"] { ... }, attributes KEY = VALUE, values string,
    number, bool, list, object, dotted reference.  Anything else fails.
    Prints the pyroscope.scrape block's facts.
    """
    import re
    text = open(path).read()
    tok_re = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|-?[0-9]+(?:\.[0-9]+)?|[{}\[\]=,]', re.S)
    toks, pos = [], 0
    while pos < len(text):
        m = tok_re.match(text, pos)
        if not m:
            raise SystemExit("alloy: unexpected character at offset %d: %r" % (pos, text[pos:pos + 20]))
        t = m.group(0)
        if not (t.isspace() or t.startswith("//") or t.startswith("/*")):
            toks.append(t)
        pos = m.end()
    i = 0

    def peek():
        return toks[i] if i < len(toks) else None

    def take(want=None):
        nonlocal i
        if i >= len(toks):
            raise SystemExit("alloy: unexpected end of file")
        t = toks[i]
        if want is not None and t != want:
            raise SystemExit("alloy: expected %r, got %r" % (want, t))
        i += 1
        return t

    def value():
        t = take()
        if t.startswith('"'):
            return t[1:-1].encode().decode("unicode_escape")
        if t in ("true", "false"):
            return t == "true"
        if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", t):
            return float(t)
        if t == "[":
            items = []
            while peek() != "]":
                items.append(value())
                if peek() != "]":
                    take(",")
            take("]")
            return items
        if t == "{":
            obj = {}
            while peek() != "}":
                k = take()
                if k.startswith('"'):
                    k = k[1:-1]
                elif not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                    raise SystemExit("alloy: bad object key %r" % k)
                take("=")
                obj[k] = value()
                if peek() != "}":
                    take(",")
            take("}")
            return obj
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", t):
            return ("ref", t)
        raise SystemExit("alloy: unexpected %r" % t)

    def body(end):
        out = {"attrs": {}, "blocks": []}
        while peek() != end:
            name = take()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
                raise SystemExit("alloy: expected a name, got %r" % name)
            if peek() == "=":
                take("=")
                if name in out["attrs"]:
                    raise SystemExit("alloy: attribute %s set twice" % name)
                out["attrs"][name] = value()
                continue
            label = None
            if peek() and peek().startswith('"'):
                label = take()[1:-1]
            take("{")
            blk = body("}")
            take("}")
            out["blocks"].append((name, label, blk))
        return out

    top = body(None)
    comps = {(n, l): b for n, l, b in top["blocks"]}
    scrapes = [(l, b) for (n, l), b in comps.items() if n == "pyroscope.scrape"]
    if len(scrapes) != 1:
        raise SystemExit("alloy: expected one pyroscope.scrape block")
    label, sc = scrapes[0]
    a = sc["attrs"]
    for fwd in a.get("forward_to", []):
        if not (isinstance(fwd, tuple) and fwd[1].startswith("pyroscope.write.") and fwd[1].endswith(".receiver")):
            raise SystemExit("alloy: forward_to %r is not a pyroscope.write receiver" % (fwd,))
        wlabel = fwd[1][len("pyroscope.write."):-len(".receiver")]
        if ("pyroscope.write", wlabel) not in comps:
            raise SystemExit("alloy: forward_to names pyroscope.write %r, which is not defined" % wlabel)
    pc = [b for n, l, b in sc["blocks"] if n == "profiling_config"]
    if len(pc) != 1:
        raise SystemExit("alloy: expected one profiling_config block")
    cpu = [b for n, l, b in pc[0]["blocks"] if n == "profile.process_cpu"]
    if len(cpu) != 1:
        raise SystemExit("alloy: expected one profile.process_cpu block")
    c = cpu[0]["attrs"]
    # Scraped unless turned off (Alloy's defaults): bpfsym serves only the CPU profile.
    on_by_default = {"profile.process_cpu", "profile.memory", "profile.block", "profile.goroutine", "profile.mutex"}
    listed = {n: b["attrs"].get("enabled", n in on_by_default) for n, l, b in pc[0]["blocks"]}
    enabled = [n for n in on_by_default | set(listed) if listed.get(n, n in on_by_default)]
    interval = a.get("scrape_interval", "15s")
    m = re.fullmatch(r"([0-9]+)s", interval)
    if not m:
        raise SystemExit("alloy: scrape_interval %r is not whole seconds" % interval)
    print("scrape_label", label)
    print("targets", " ".join(t["__address__"] for t in a["targets"]))
    print("scheme", a.get("scheme", "http"))
    print("path", c.get("path", "/debug/pprof/profile"))
    print("delta", str(c.get("delta", True)).lower())
    print("enabled_profiles", " ".join(sorted(enabled)))
    print("interval", m.group(1))
    # Alloy's delta profiles ask for scrape_interval - 1 seconds.
    print("seconds", int(m.group(1)) - 1)


def cmd_parca(path):
    """examples/parca.yaml with python3-yaml: the facts of its one scrape job."""
    import yaml
    cfg = yaml.safe_load(open(path))
    jobs = cfg["scrape_configs"]
    if len(jobs) != 1:
        raise SystemExit("parca: expected one scrape job")
    j = jobs[0]
    pp = j["profiling_config"]["pprof_config"]
    cpu = pp["process_cpu"]
    interval = j["scrape_interval"]
    if not interval.endswith("s") or not interval[:-1].isdigit():
        raise SystemExit("parca: scrape_interval %r is not whole seconds" % interval)
    # Parca's rules since v0.15 (pkg/config/config.go, ScrapeConfig.Validate):
    # an unset timeout is the interval + 3 s, a timeout not past the
    # interval is refused ("scrape timeout must be greater than the
    # interval"), and process_cpu needs 2 s at least.  Its delta profiles ask
    # for pprof_config's `seconds`, else scrape_interval seconds
    # (pkg/scrape/target.go): the timeout must outlast that profile.
    timeout = j.get("scrape_timeout", "%ds" % (int(interval[:-1]) + 3))
    if not timeout.endswith("s") or not timeout[:-1].isdigit():
        raise SystemExit("parca: scrape_timeout %r is not whole seconds" % timeout)
    if int(timeout[:-1]) <= int(interval[:-1]):
        raise SystemExit("parca: scrape_timeout not past scrape_interval (Parca refuses it)")
    if int(timeout[:-1]) < 2:
        raise SystemExit("parca: scrape_timeout under 2 s (Parca refuses it for process_cpu)")
    seconds = int(cpu.get("seconds") or interval[:-1])
    if cpu.get("delta") and int(timeout[:-1]) <= seconds:
        raise SystemExit("parca: scrape_timeout %s is not past the delta profile's %d seconds: "
                         "every scrape would time out" % (timeout, seconds))
    print("job", j["job_name"])
    print("targets", " ".join(t for sc in j["static_configs"] for t in sc["targets"]))
    print("scheme", j.get("scheme", "http"))
    print("path", cpu["path"])
    print("delta", str(cpu["delta"]).lower())
    # Scraped unless turned off (Parca's defaults): bpfsym serves only the CPU profile.
    on_by_default = {"process_cpu", "memory", "block", "goroutine", "mutex"}
    enabled = [k for k in on_by_default | set(pp) if (pp.get(k) or {}).get("enabled", k in on_by_default)]
    print("enabled_profiles", " ".join(sorted(enabled)))
    print("interval", interval[:-1])
    print("timeout", timeout[:-1])
    print("seconds", seconds)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "freeport":
        cmd_freeport()
    elif cmd == "hold":
        cmd_hold(int(args[0]), float(args[1]))
    elif cmd == "raw":
        cmd_raw(int(args[0]), args[1])
    elif cmd == "concurrent":
        cmd_concurrent(int(args[0]), int(args[1]), int(args[2]))
    elif cmd == "early":
        cmd_early(int(args[0]), int(args[1]), float(args[2]))
    elif cmd == "abuse":
        cmd_abuse(int(args[0]), float(args[1]))
    elif cmd == "perpeer":
        cmd_perpeer(int(args[0]), int(args[1]))
    elif cmd == "dribble":
        cmd_dribble(int(args[0]), float(args[1]))
    elif cmd == "slowloris":
        cmd_slowloris(int(args[0]), int(args[1]))
    elif cmd == "unix":
        cmd_unix(args[0], *(int(a) for a in args[1:]))
    elif cmd == "alloy":
        cmd_alloy(args[0])
    elif cmd == "parca":
        cmd_parca(args[0])
    else:
        raise SystemExit("unknown command " + cmd)


main()
